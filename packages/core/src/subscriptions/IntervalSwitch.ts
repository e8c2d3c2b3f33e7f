/**
 * A change to a price billed on another interval (monthly ↔ yearly, weekly → monthly…), as rules
 * over what `PriceChanges` read — Stripe's rule: the unused part of the current period is
 * credited (to the customer's balance, from what the cycle's invoices still hold), a new period
 * starts at the change (a new anchor, the next cycle index) and its invoice is issued and charged
 * at once with the credit applied; what the credit exceeds it by stays on the balance. During a
 * trial nothing is credited: the price switches and the trial's end bills the new interval.
 *
 * @since 0.1.0
 */
import * as Errors from "../kernel/Errors.js"
import { Option, Result } from "effect"
import type { PriceVersion } from "../catalog/Price.js"
import * as GiveBack from "../invoices/GiveBack.js"
import type * as Invoicing from "../invoices/Invoicing.js"
import type * as Entities from "../kernel/Entities.js"
import { dt } from "../kernel/ServiceSupport.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as Money from "../money/Money.js"
import * as Proration from "../money/Proration.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as BillingAnchor from "./BillingAnchor.js"
import * as ChangeQuote from "./ChangeQuote.js"
import type { ChangeCommand } from "./PriceChanges.js"
import * as Subscription from "./Subscription.js"
import { planBasis } from "./SubscriptionTerms.js"

/**
 * Whether moving from `current` to `target` changes the billing interval.
 *
 * @since 0.1.0
 */
export const switchesInterval = (current: PriceVersion, target: PriceVersion): boolean =>
  current.price_plan !== null &&
  target.price_plan !== null &&
  (current.price_plan.billing_cycle_unit !== target.price_plan.billing_cycle_unit ||
    current.price_plan.billing_cycle_count !== target.price_plan.billing_cycle_count)

/**
 * Why the subscription cannot switch to `target`'s interval, if it cannot: at the period's end
 * (a switch starts a new period now), a fixed term (its cycles are counted in the old interval),
 * a price billed in arrears (usage), or pending proration lines of the cycle.
 *
 * @since 0.1.0
 */
export const refusal = (
  subscriptionId: string,
  rec: Entities.SubscriptionRecord,
  target: PriceVersion,
  command: Pick<ChangeCommand, "effective">,
  everyItem = false
) => {
  const refuse = (detail: string) => ChangeQuote.refusal(subscriptionId, target.id, "interval", detail)
  if (command.effective === "end_of_period")
    return refuse("an interval switch starts a new period at the change: use effective_type immediate")
  // a past-due cycle is still being collected: a new period now would bill that time twice
  if (rec.subscription.status !== "active" && rec.subscription.status !== "trial")
    return new Errors.SubscriptionActionRefused({
      subscriptionId,
      state: rec.subscription.status,
      action: "switch interval",
      reason: "only an active or trialing subscription switches its interval (a past-due cycle is still collected)"
    })
  // the short first period before a billing anchor was charged as a share of a whole period
  if (BillingAnchor.inFirstPeriod(rec))
    return refuse(
      "in the short first period before its billing anchor a subscription keeps its interval: switch after the anchor"
    )
  // the new period would run past the end it is canceled at
  if (rec.subscription.cancel_at_period_end)
    return refuse("a subscription canceling at its period's end cannot switch its interval: revoke the cancel first")
  if (rec.subscription.total_cycles !== null)
    return refuse("a fixed-term subscription keeps its interval; start a new subscription to change it")
  if (target.billing_dimension === "usage")
    return refuse("a price billed for usage in arrears cannot be switched to another interval")
  // every item of a subscription bills on one interval: the others switch with it, in an item change
  if (rec.extra_items.length > 0 && !everyItem)
    return refuse(
      "a subscription of several items switches its interval only with every item at once: move each item to a price of the new interval in one item change"
    )
  if (rec.pending_prorations.some((p) => p.cycle_index === rec.subscription.cycle_index))
    return ChangeQuote.refusal(
      subscriptionId,
      target.id,
      "proration",
      "the subscription has pending proration lines the next invoice bills: switch the interval after it"
    )
  return undefined
}

/**
 * The credit of the unused part of the current period, in proration's terms (before tax): the
 * plan basis × unused / period under the merchant's policy, never more than the cycle's invoices
 * still hold; none under `proration=none`.
 *
 * @since 0.1.0
 */
export const unusedCredit = (input: {
  readonly merchant: Merchant.Merchant
  readonly rec: Entities.SubscriptionRecord
  readonly current: PriceVersion
  readonly collected: GiveBack.Collected
  readonly period: { readonly start: number; readonly end: number }
  readonly at: number
  readonly proration: ChangeCommand["proration"] | "next_cycle"
}): Money.Money => {
  if (input.proration === "none") return Money.zero(input.rec.currency)
  const paid = planBasis(input.rec, input.current)
  const policy = Result.getOrElse(Proration.parsePolicy(input.merchant.proration_policy), () => Proration.defaultPolicy)
  return Result.getOrThrow(
    Proration.prorate({
      policy,
      period: input.period,
      at: input.at,
      paid,
      newAmount: paid,
      creditMode: input.merchant.proration_credit,
      held: GiveBack.heldBasis(input.collected)
    })
  ).credit
}

/**
 * The new period a switch opens at `at` on `target`: from the change, one interval of the new price.
 *
 * @since 0.1.0
 */
export const newPeriod = (target: PriceVersion, at: number): { readonly start: number; readonly end: number } =>
  Option.getOrThrow(
    BillingPeriod.period(
      {
        anchor: at,
        unit: target.price_plan?.billing_cycle_unit ?? "month",
        count: target.price_plan?.billing_cycle_count ?? 1,
        totalCycles: undefined
      },
      0
    )
  )

/**
 * The record opening the new period: cycle `cycleIndex` from `period.start` (the new anchor),
 * `quantity` in force, the interval of `target`, the invoice's credit consumed from `balance`.
 *
 * @since 0.1.0
 */
export const opened = (
  rec: Entities.SubscriptionRecord,
  input: {
    readonly target: PriceVersion
    readonly cycleIndex: number
    readonly period: { readonly start: number; readonly end: number }
    readonly quantity: bigint
    readonly balance: Money.Money
    readonly invoice: Invoicing.Draft
  }
): Entities.SubscriptionRecord => ({
  ...rec,
  anchor: input.period.start,
  anchor_cycle: input.cycleIndex,
  scheduled_price_version_id: null,
  subscription: new Subscription.Subscription(
    {
      ...rec.subscription,
      cycle_index: input.cycleIndex,
      quantity: input.quantity.toString(),
      pending_change: null,
      billing_cycle_unit: input.target.price_plan?.billing_cycle_unit ?? rec.subscription.billing_cycle_unit,
      current_period_start: dt(input.period.start),
      current_period_end: dt(input.period.end),
      next_invoice_date: dt(input.period.end),
      credit_balance: Money.format(
        Money.make(input.balance.amount - input.invoice.creditApplied.amount, input.balance.currency)
      )
    },
    { disableChecks: true }
  )
})

/**
 * What a switch refunds to the card: under `proration_credit` `refund`, the part of the credit
 * given back (`given`, with its tax) that the new period's invoice does not take — after any
 * debit on the balance (`balance` before the credit) that invoice collects — as a downgrade
 * refunds what was collected; the rest of the credit stays on the balance (all of it under
 * `credit_balance`). A balance the customer already had is never refunded.
 *
 * @example
 * // year → month, 226.03 credited, April's 30.00 invoice: 196.03 refunded under `refund`
 * @since 0.1.0
 */
export const refundOf = (
  mode: Merchant.Merchant["proration_credit"],
  given: Money.Money,
  invoice: Invoicing.Draft,
  balance: Money.Money
): Money.Money => {
  if (mode !== "refund" || given.amount <= 0n) return Money.zero(given.currency)
  // what the invoice collects before any credit: its amount and the credit it applied
  const due = invoice.total.amount + invoice.creditApplied.amount
  const debt = balance.amount < 0n ? -balance.amount : 0n
  const left = given.amount - due - debt
  return Money.make(left > 0n ? left : 0n, given.currency)
}

/**
 * The quote of a switch: the credit of the unused time, the new period's whole amount (after the
 * discounts that still apply to its cycle, before tax) and what is charged now — the new period's
 * invoice, taxed, with the credit (and any balance) applied.
 *
 * @since 0.1.0
 */
export const quoted = (
  head: ChangeQuote.Head,
  input: {
    readonly current: PriceVersion
    readonly target: PriceVersion
    /** What the lines name (default: the two prices' names); an item change names the items. */
    readonly labels?: { readonly before: string; readonly after: string } | undefined
    readonly credit: Money.Money
    readonly charge: Money.Money
    readonly invoice: Invoicing.Draft
    readonly period: { readonly start: number; readonly end: number }
    /** What is refunded to the card ({@link refundOf}): the quote's total is then its negative. */
    readonly refund?: Money.Money
  }
): ChangeQuote.Priced => {
  const { discounts_ending, ...first } = head
  const refunded = input.refund !== undefined && input.refund.amount > 0n
  return {
    ...first,
    credit: Money.format(input.credit),
    charge: Money.format(input.charge),
    net: Money.format(Money.make(input.charge.amount - input.credit.amount, input.charge.currency)),
    tax: Money.format(input.invoice.tax),
    // what moves now: the new period's invoice charged, or (its credit larger) the rest refunded
    total: Money.format(refunded ? Money.negate(input.refund!) : input.invoice.total),
    outcome: "interval_switch",
    lines: [
      {
        description: `Unused time on ${input.labels?.before ?? input.current.price_name}`,
        amount: Money.format(Money.negate(input.credit))
      },
      {
        description: `${input.labels?.after ?? input.target.price_name} (new period)`,
        amount: Money.format(input.charge)
      },
      // the metered item's usage so far, billed in arrears on the same invoice
      ...input.invoice.lines
        .filter((l) => l.kind === "usage")
        .map((l) => ({ description: l.description, amount: Money.format(l.amount) }))
    ],
    effective_at: head.at,
    billed_at: input.period.start,
    discounts_ending
  }
}
