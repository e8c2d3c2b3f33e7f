/**
 * What a price or quantity change bills, as rules over what `PriceChanges` read: the checks a
 * change must pass (the quantity, the new price's kind, currency, dimension and interval, the
 * amount bounds of every cycle), the discounts it ends, its quote — unprorated, or prorated with
 * the rule of docs/proration.md — an upgrade's invoice lines and what they make of the quote,
 * and what a refund or a credit gives back.
 *
 * @since 0.1.0
 */
import { Option, Result } from "effect"
import { cycleAmounts, type PriceVersion } from "../catalog/Price.js"
import * as PriceRules from "../catalog/PriceRules.js"
import * as Discount from "../discounts/Discount.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as GiveBack from "../invoices/GiveBack.js"
import type * as Invoicing from "../invoices/Invoicing.js"
import type * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Decimal from "../money/Decimal.js"
import * as Money from "../money/Money.js"
import * as Proration from "../money/Proration.js"
import type * as Merchant from "../tenants/Merchant.js"
import type { ChangeCommand, Quote } from "./PriceChanges.js"
import { fullCycle, planBasis } from "./SubscriptionTerms.js"

/**
 * A quote before its id.
 *
 * @since 0.1.0
 */
export type Priced = Omit<Quote, "quote_id">

/**
 * What every quote of one change states whatever it bills.
 *
 * @since 0.1.0
 */
export type Head = Pick<
  Quote,
  "subscription_id" | "effective_type" | "proration" | "at" | "currency" | "discounts_ending"
>

/**
 * Why `quantity` cannot be set on the subscription, if it cannot: out of range, or a price not
 * billed by quantity.
 *
 * @since 0.1.0
 */
export const quantityRefusal = (
  subscriptionId: string,
  rec: Entities.SubscriptionRecord,
  quantity: ChangeCommand["quantity"]
): Errors.QuantityRefused | undefined => {
  if (Option.isSome(quantity) && (quantity.value < PriceRules.MIN_QUANTITY || quantity.value > PriceRules.MAX_QUANTITY))
    return new Errors.QuantityRefused({
      subscriptionId,
      detail: `quantity must be a whole number from ${PriceRules.MIN_QUANTITY} to ${PriceRules.MAX_QUANTITY}`
    })
  if (Option.isSome(quantity) && rec.subscription.billing_dimension !== "quantity")
    return new Errors.QuantityRefused({
      subscriptionId,
      detail: "only subscriptions with billing_dimension quantity have a quantity"
    })
  return undefined
}

/**
 * A change to price `priceId` refused for `reason`.
 *
 * @since 0.1.0
 */
export const refusal = (
  subscriptionId: string,
  priceId: string,
  reason: Errors.PriceChangeRefused["reason"],
  detail: string
): Errors.PriceChangeRefused => new Errors.PriceChangeRefused({ subscriptionId, priceId, reason, detail })

/**
 * Why a subscription on `current` cannot move to `target`, if it cannot: a price that does not
 * recur, another currency or billing dimension (another interval is a switch: `IntervalSwitch`).
 *
 * @since 0.1.0
 */
export const targetRefusal = (
  subscriptionId: string,
  current: PriceVersion,
  target: PriceVersion
): Errors.PriceChangeRefused | undefined => {
  if (target.billing_type !== "recurring" || target.price_plan === null)
    return refusal(subscriptionId, target.id, "not_recurring", "a subscription can only change to a recurring price")
  if (target.currency !== current.currency || target.billing_dimension !== current.billing_dimension) {
    return refusal(
      subscriptionId,
      target.id,
      "currency_or_dimension",
      "the new price must have the same currency and billing dimension"
    )
  }
  // another interval is a switch (`IntervalSwitch`), with its own rules
  if (current.price_plan === null)
    return refusal(subscriptionId, target.id, "interval", "the subscription's price has no interval to switch from")
  return undefined
}

/**
 * Why `sells` × `sellsQty` cannot be sold to the subscription, if it cannot: a cycle (in the
 * settlement currency) bills more than an invoice can carry. A quantity change is refused as
 * `QuantityRefused`, a price change as `PriceChangeRefused`.
 *
 * @since 0.1.0
 */
export const boundRefusal = (
  subscriptionId: string,
  rec: Entities.SubscriptionRecord,
  sells: PriceVersion,
  quantity: ChangeCommand["quantity"],
  sellsQty: bigint
): Errors.QuantityRefused | Errors.PriceChangeRefused | undefined => {
  for (const amount of cycleAmounts(sells, sellsQty)) {
    const settled =
      rec.fx_rate !== null && rec.currency !== amount.currency
        ? Result.getOrThrow(Money.convert(amount, Result.getOrThrow(Decimal.parse(rec.fx_rate)), rec.currency))
        : amount
    if (!Money.isWithinBounds(settled)) {
      const detail = `${Money.format(settled)} ${settled.currency} a cycle is above the most one invoice may carry`
      return Option.isSome(quantity)
        ? new Errors.QuantityRefused({ subscriptionId, detail })
        : refusal(subscriptionId, sells.id, "above_bound", detail)
    }
  }
  return undefined
}

/**
 * The discounts the change ends that would still apply from it on (from the next cycle for a
 * change at the period's end), as the quote names them.
 *
 * @since 0.1.0
 */
export const endingDiscounts = (
  rec: Entities.SubscriptionRecord,
  ending: ReadonlyArray<Entities.DiscountTerm>,
  effective: ChangeCommand["effective"]
): Quote["discounts_ending"] => {
  const from = rec.subscription.cycle_index + (effective === "end_of_period" ? 1 : 0)
  return ending
    .filter((t) => Discount.stillApplies(t, from))
    .map((t) => ({ discount_id: t.discount_id, discount_code: t.discount_code }))
}

/**
 * A quote with nothing to prorate: a quantity change at the next cycle, a change at the period's
 * end, proration "none" or a change during a trial.
 *
 * @since 0.1.0
 */
export const unprorated = (head: Head, outcome: Quote["outcome"], effective_at: number): Priced => {
  const zero = Money.format(Money.zero(head.currency))
  const { discounts_ending, ...first } = head
  return {
    ...first,
    credit: zero,
    charge: zero,
    net: zero,
    tax: zero,
    total: zero,
    outcome,
    lines: [],
    effective_at,
    // last, as the quote has always listed its fields (the facade answers the object as it is)
    discounts_ending
  }
}

/**
 * The prorated quote of an immediate change from `current` to `target` at `head.at`: it credits
 * what a whole period of the plan in force was bought for (not the cycle invoice: an earlier
 * change this cycle replaced it), at most what is still held of what was paid for it, and
 * charges the new plan (`after`, the record with the discounts kept) the same way.
 *
 * @since 0.1.0
 */
export const prorated = (
  head: Head,
  input: {
    readonly merchant: Merchant.Merchant
    readonly rec: Entities.SubscriptionRecord
    readonly after: Entities.SubscriptionRecord
    readonly current: PriceVersion
    readonly target: PriceVersion
    readonly quantity: bigint
    readonly collected: GiveBack.Collected
    readonly period: { readonly start: number; readonly end: number }
    /** Pending charges of the cycle not billed yet that the credit may also cancel (create_prorations). */
    readonly pendingAvailable?: Money.Money
    /** What the lines name (default: the two prices' names); an item change names the items. */
    readonly labels?: { readonly before: string; readonly after: string }
  }
): Priced => {
  const { merchant, rec, current, target } = input
  const paid = planBasis(rec, current)
  const newFull = fullCycle(input.after, target, input.quantity, rec.subscription.cycle_index)
  const policy = Result.getOrElse(Proration.parsePolicy(merchant.proration_policy), () => Proration.defaultPolicy)
  const p = Result.getOrThrow(
    Proration.prorate({
      policy,
      period: input.period,
      at: head.at,
      paid,
      newAmount: newFull,
      creditMode: merchant.proration_credit,
      // the credit is what was actually paid for the old plan and is still held
      held: input.pendingAvailable
        ? Money.make(GiveBack.heldBasis(input.collected).amount + input.pendingAvailable.amount, rec.currency)
        : GiveBack.heldBasis(input.collected)
    })
  )
  const { discounts_ending, ...first } = head
  return {
    ...first,
    credit: Money.format(p.credit),
    charge: Money.format(p.charge),
    net: Money.format(p.net),
    tax: Money.format(Money.zero(head.currency)),
    total: Money.format(Money.zero(head.currency)),
    outcome:
      p.outcome._tag === "Upgrade"
        ? "upgrade"
        : p.outcome._tag === "Refund"
          ? "refund"
          : p.outcome._tag === "CreditBalance"
            ? "credit_balance"
            : "none",
    lines: [
      {
        description: `Unused time on ${input.labels?.before ?? current.price_name}`,
        amount: Money.format(Money.negate(p.credit))
      },
      { description: `Remaining time on ${input.labels?.after ?? target.price_name}`, amount: Money.format(p.charge) }
    ],
    effective_at: head.at,
    discounts_ending
  }
}

/**
 * An upgrade's invoice lines from its quote: the credit of the unused time, the charge of the
 * remaining time.
 *
 * @since 0.1.0
 */
export const upgradeLines = (quote: Priced) =>
  quote.lines.map((l) => {
    const amount = Result.getOrThrow(Money.parse(l.amount, quote.currency, { allowNegative: true }))
    return {
      kind: amount.amount < 0n ? ("proration_credit" as const) : ("proration_charge" as const),
      description: l.description,
      quantity: 1n,
      amount
    }
  })

/**
 * The quote of an upgrade with its invoice `upgrade` (the charge taxed at today's address and
 * rates, the credit with the tax its paid invoices collected): a credit giving back more than
 * the charge costs (its tax was higher than today's) settles the invoice at 0.00 and the rest
 * goes to the customer's balance.
 *
 * @since 0.1.0
 */
export const upgradeQuote = (quote: Priced, upgrade: Invoicing.Draft): Priced => ({
  ...quote,
  tax: Money.format(upgrade.tax),
  total: Money.format(upgrade.total),
  ...(upgrade.total.amount < 0n ? { outcome: "credit_balance" as const } : {})
})

/**
 * What a refund or a credit gives back of the quote's net: from what the cycle's invoices
 * collected, with the tax they collected, in proportion — never today's rate or address, never
 * more than is still held — and the quote stating it (nothing moves when nothing is held).
 *
 * @since 0.1.0
 */
export const givenBack = (quote: Priced, collected: GiveBack.Collected) => {
  const net = Result.getOrThrow(Money.parse(quote.net, quote.currency, { allowNegative: true }))
  const given = GiveBack.giveBack(collected, Money.negate(net))
  return {
    given,
    quote: {
      ...quote,
      tax: Money.format(Money.negate(given.tax)),
      total: Money.format(Money.negate(given.total)),
      // nothing is still held to give back
      ...(given.total.amount === 0n ? { outcome: "none" as const } : {})
    } satisfies Priced
  }
}

/**
 * Whether the change moves the proration basis to the new plan's full cycle: every prorated
 * outcome; proration "none" keeps the basis (the remainder stays paid at the old plan's rate).
 *
 * @since 0.1.0
 */
export const movesBasis = (quote: Priced): boolean =>
  quote.outcome === "upgrade" ||
  quote.outcome === "refund" ||
  quote.outcome === "credit_balance" ||
  quote.outcome === "pending_prorations" ||
  quote.outcome === "interval_switch" ||
  (quote.outcome === "none" && invoicesNow(quote.proration))

/**
 * Whether a proration mode charges or credits now: `always_invoice`, or `immediate` (its alias,
 * the seed's name).
 *
 * @since 0.1.0
 */
export const invoicesNow = (mode: Quote["proration"]): boolean => mode === "immediate" || mode === "always_invoice"

/**
 * What the pending charges of the subscription's current cycle still hold that a later
 * `create_prorations` credit may cancel: the charges less the part of the cycle's pending credits
 * that was not taken from its payments (that part cancelled charges already). Never negative.
 *
 * @since 0.1.0
 */
export const pendingAvailable = (
  rec: Pick<Entities.SubscriptionRecord, "currency" | "pending_prorations"> & {
    readonly subscription: { readonly cycle_index: number }
  }
): Money.Money => {
  const cycle = rec.subscription.cycle_index
  const parse = (s: string) => Result.getOrThrow(Money.parse(s, rec.currency, { allowNegative: true })).amount
  let available = 0n
  for (const p of rec.pending_prorations) {
    if (p.cycle_index !== cycle) continue
    if (p.kind === "proration_charge") available += parse(p.amount)
    else available -= -parse(p.amount) - (p.from_paid !== undefined ? parse(p.from_paid) : 0n)
  }
  return Money.make(available > 0n ? available : 0n, rec.currency)
}

/**
 * A prorated quote recorded as pending lines (`create_prorations`): nothing moves now, the credit
 * and the charge are billed by the next cycle's invoice at `billedAt`.
 *
 * @since 0.1.0
 */
export const pendingQuote = (quote: Priced, billedAt: number): Priced => {
  const zero = Money.format(Money.zero(quote.currency))
  const { discounts_ending, ...rest } = quote
  return { ...rest, tax: zero, total: zero, outcome: "pending_prorations", billed_at: billedAt, discounts_ending }
}

/**
 * The part of a `create_prorations` credit taken from what the cycle's invoices collected: what
 * the pending charges of the cycle (`available`) cannot cancel.
 *
 * @since 0.1.0
 */
export const creditFromPaid = (credit: Money.Money, available: Money.Money): Money.Money => {
  const rest = credit.amount - available.amount
  return Money.make(rest > 0n ? rest : 0n, credit.currency)
}

/**
 * The pending proration lines of a `create_prorations` quote (non-zero lines only), recorded in
 * cycle `cycleIndex` with the credit's part `fromPaid` taken from the cycle's payments and the
 * tax given back with it (`shares`, from `GiveBack.giveBack` keeping each tax's `inclusive`).
 *
 * @since 0.1.0
 */
export const pendingOf = (
  quote: Priced & { readonly quote_id: string },
  cycleIndex: number,
  fromPaid: Money.Money,
  shares: ReadonlyArray<GiveBack.Share> = []
): ReadonlyArray<Entities.PendingProration> =>
  upgradeLines(quote)
    .filter((l) => l.amount.amount !== 0n)
    .map((l) => ({
      cycle_index: cycleIndex,
      kind: l.kind,
      description: l.description,
      amount: Money.format(l.amount),
      ...(l.kind === "proration_credit"
        ? {
            from_paid: Money.format(fromPaid),
            from_paid_tax: CycleLedger.storedLines(shares.flatMap((sh) => sh.tax_lines))
          }
        : {}),
      quote_id: quote.quote_id,
      at: quote.at
    }))

/**
 * What the pending credits of a subscription took from its cycle's payments (`from_paid`), and
 * the tax given back with it: what a renewal credits to the balance, with that tax in
 * proportion, when its other lines cannot absorb the credits (`Invoicing.creditToBalance`).
 *
 * @since 0.1.0
 */
export const pendingPaid = (
  rec: Pick<Entities.SubscriptionRecord, "currency" | "pending_prorations">
): { readonly paid: Money.Money; readonly tax_lines: ReadonlyArray<Invoicing.TaxLine> } => {
  const credits = rec.pending_prorations.filter((p) => p.kind === "proration_credit")
  return {
    paid: Money.make(
      credits.reduce(
        (a, p) =>
          a +
          (p.from_paid !== undefined
            ? Result.getOrThrow(Money.parse(p.from_paid, rec.currency, { allowNegative: true })).amount
            : 0n),
        0n
      ),
      rec.currency
    ),
    tax_lines: credits.flatMap((p) => CycleLedger.linesOf(p.from_paid_tax ?? [], rec.currency))
  }
}

/**
 * What a quote id hashes: the change, the subscription's terms ({@link stateOf}), the numbers quoted and what
 * the commit does with them (the outcome: charge, refund to the card or credit to the balance),
 * so a commit reproduces the id only when nothing moved — a merchant's `proration_credit` changed
 * between preview and commit turns a quoted refund into a balance credit with the same numbers,
 * and the quote is stale.
 *
 * @since 0.1.0
 */
export const hashed = (command: ChangeCommand, state: string, quote: Priced): string =>
  JSON.stringify([
    command.subscriptionId,
    state,
    Option.getOrNull(command.priceId),
    Option.match(command.quantity, { onNone: () => null, onSome: (q) => q.toString() }),
    quote.effective_type,
    invoicesNow(quote.proration) ? "always_invoice" : quote.proration,
    ...quoted(quote)
  ])

/**
 * The subscription's terms as a quote id covers them: the whole record but what metering moves
 * (`accrued_usage` and the `updated_at` it stamps), so usage recorded between preview and commit
 * leaves a quote valid unless the quote states a usage amount (kept usage, usage billed by an
 * interval switch), whose change then changes the quoted numbers. Every other write to the
 * record — a renewal, another change, a pause, a payment method — makes the quote stale.
 *
 * @since 0.1.0
 */
export const stateOf = (rec: Entities.SubscriptionRecord): string =>
  JSON.stringify({ ...rec, accrued_usage: null, subscription: { ...rec.subscription, updated_at: null } }, (_, v) =>
    typeof v === "bigint" ? v.toString() : v
  )

/**
 * What every quote id hashes of its quote whatever the change: the instant it is priced at, the
 * numbers it states (the usage it keeps for the next renewal too) and what the commit does with
 * them (its outcome).
 *
 * @since 0.1.0
 */
export const quoted = (quote: Priced): ReadonlyArray<string | number> => [
  quote.at,
  quote.net,
  quote.credit,
  quote.charge,
  quote.tax,
  quote.total,
  quote.outcome,
  // the usage an item change keeps for the next renewal, when it keeps some
  ...(quote.kept_usage !== undefined ? [JSON.stringify(quote.kept_usage)] : [])
]

const QUOTE_ID = /^quo_([0-9a-z]{1,12})_[0-9a-f]{24}$/

/**
 * The instant a quote id was priced at (its id says it), or undefined when the text is not a
 * quote id.
 *
 * @since 0.1.0
 */
export const quoteInstant = (quoteId: string): number | undefined => {
  const m = QUOTE_ID.exec(quoteId)
  return m ? parseInt(m[1]!, 36) : undefined
}

/**
 * `create_prorations` on a subscription canceling at its period's end: no next invoice would
 * bill the lines (its charge would be given away).
 *
 * @since 0.1.0
 */
export const endingRefusal = (subscriptionId: string, priceId: string): Errors.PriceChangeRefused =>
  refusal(
    subscriptionId,
    priceId,
    "proration",
    "the subscription cancels at its period's end, so no next invoice would bill the proration lines: use always_invoice"
  )

/**
 * The net of a subscription's pending proration lines (positive: charges the next invoice is
 * to collect), in minor units of its currency.
 *
 * @since 0.1.0
 */
export const pendingNet = (rec: Pick<Entities.SubscriptionRecord, "currency" | "pending_prorations">): bigint =>
  rec.pending_prorations.reduce(
    (a, p) => a + Result.getOrThrow(Money.parse(p.amount, rec.currency, { allowNegative: true })).amount,
    0n
  )
