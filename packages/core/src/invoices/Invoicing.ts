/**
 * Invoice building as pure functions: what a cycle (initial, trial, renewal), a prorated
 * change (upgrade) or a refund should bill, as new documents. Issued invoices are never
 * edited; there is at most one invoice per (subscription, cycle, type), checked against the
 * prior documents passed in.
 *
 * @since 0.1.0
 */
import { Data, Result, Option, Schema } from "effect"
import type { InvoiceType } from "./Invoice.js"
import * as Money from "../money/Money.js"
import * as Price from "../catalog/Price.js"
import * as Pricing from "../money/Pricing.js"
import * as Tax from "../taxes/Tax.js"
import type * as Proration from "../money/Proration.js"
import * as Decimal from "../money/Decimal.js"

/**
 * One line of an invoice.
 *
 * @since 0.1.0
 */
export interface Line {
  readonly kind: "subscription" | "trial" | "usage" | "proration_credit" | "proration_charge" | "refund" | "balance"
  readonly description: string
  readonly quantity: bigint
  /** Signed: credits are negative. */
  readonly amount: Money.Money
}

/**
 * A discount rule applied to the subtotal.
 *
 * @since 0.1.0
 */
export type DiscountRule = Data.TaggedEnum<{
  /** `percent` of the subtotal (0..100, may carry decimals as a basis-point integer: 1250 = 12.50 %). */
  Percentage: { readonly discount_id: string; readonly discount_code: string; readonly basisPoints: bigint }
  /** A fixed amount off, never below zero. */
  Amount: { readonly discount_id: string; readonly discount_code: string; readonly amount: Money.Money }
}>

/**
 * Constructors of {@link DiscountRule}.
 *
 * @since 0.1.0
 */
export const DiscountRule = Data.taggedEnum<DiscountRule>()

/**
 * The applied discount as the seed writes it, with its amount as money.
 *
 * @since 0.1.0
 */
export interface AppliedDiscount {
  readonly discount_id: string
  readonly discount_code: string
  readonly amount: Money.Money
}

/**
 * One tax on an invoice: which rate, on what amount, how much. Inclusive taxes are already in
 * the lines' amounts (carved out, the total does not change); exclusive ones are added.
 *
 * @since 0.1.0
 */
export interface TaxLine {
  /** The merchant's tax rate, or null for a tax from elsewhere (a configured table, a tax service). */
  readonly tax_rate_id: string | null
  readonly name: string
  /** Percentage as text, up to 4 decimals ("19", "8.875"). */
  readonly percentage: string
  readonly country: string | null
  readonly region: string | null
  readonly inclusive: boolean
  /**
   * The amount taxed, net of this tax: the invoice's lines after discounts, less the tax itself
   * when it is inclusive (see `Tax.lineOn`). A credit note's line is the same share of it.
   */
  readonly taxable: Money.Money
  readonly amount: Money.Money
}

/**
 * The tax port's pure shape: the taxes due on a taxable amount. None by default.
 *
 * @since 0.1.0
 */
export type TaxFn = (taxable: Money.Money) => ReadonlyArray<TaxLine>

/**
 * No tax.
 *
 * @since 0.1.0
 */
export const noTax: TaxFn = () => []

/**
 * One exclusive tax at `units` (1/10 000 of a percent: 20 % = 200 000), rounded once — for tests
 * and examples; merchants' rates come from `TaxRates`.
 *
 * @example
 * Invoicing.total({ ..., tax: Invoicing.flatTax("Sales tax", 82_500n) })
 * @since 0.1.0
 */
export const flatTax =
  (name: string, units: bigint, inclusive = false): TaxFn =>
  (taxable) => [
    {
      tax_rate_id: null,
      name,
      percentage: Tax.formatPercentage(units),
      country: null,
      region: null,
      inclusive,
      ...Tax.lineOn(taxable, units, inclusive)
    }
  ]

/**
 * An invoice to be issued.
 *
 * @since 0.1.0
 */
export interface Draft {
  readonly invoice_type: InvoiceType
  readonly cycle_index: number
  readonly currency: string
  readonly lines: ReadonlyArray<Line>
  readonly subtotal: Money.Money
  readonly discounts: ReadonlyArray<AppliedDiscount>
  /** All taxes on it, inclusive and exclusive (the sum of `tax_lines`). */
  readonly tax: Money.Money
  readonly tax_lines: ReadonlyArray<TaxLine>
  /**
   * Customer credit consumed by this invoice; negative when the customer owed a debit (an amount
   * carried from an earlier invoice under the processor's minimum charge), which it collects.
   */
  readonly creditApplied: Money.Money
  /** What is due: subtotal − discounts + exclusive tax − credit applied; never negative. */
  readonly total: Money.Money
  readonly original_invoice_id: Option.Option<string>
}

/**
 * A document already exists for this (cycle, type).
 *
 * @since 0.1.0
 */
export class DuplicateInvoice extends Schema.TaggedError<DuplicateInvoice>()("DuplicateInvoice", {
  cycle_index: Schema.Number,
  invoice_type: Schema.String
}) {
  override get message() {
    return `An invoice of type ${this.invoice_type} already exists for cycle ${this.cycle_index}`
  }
}

/**
 * A prior document, as far as building needs to know.
 *
 * @since 0.1.0
 */
export interface Prior {
  readonly cycle_index: number
  readonly invoice_type: InvoiceType
}

const once = (existing: ReadonlyArray<Prior>, cycle_index: number, invoice_type: InvoiceType) =>
  existing.some((p) => p.cycle_index === cycle_index && p.invoice_type === invoice_type)
    ? Result.fail(new DuplicateInvoice({ cycle_index, invoice_type }))
    : Result.succeed(undefined)

const applyDiscounts = (subtotal: Money.Money, rules: ReadonlyArray<DiscountRule>): ReadonlyArray<AppliedDiscount> => {
  let remaining = subtotal.amount
  const out: Array<AppliedDiscount> = []
  for (const rule of rules) {
    const wanted =
      rule._tag === "Percentage"
        ? Money.proportion(subtotal, rule.basisPoints, 10_000n).amount
        : rule.amount.currency === subtotal.currency
          ? rule.amount.amount
          : 0n
    const applied = wanted > remaining ? remaining : wanted < 0n ? 0n : wanted
    remaining -= applied
    out.push({
      discount_id: rule.discount_id,
      discount_code: rule.discount_code,
      amount: Money.make(applied, subtotal.currency)
    })
  }
  return out
}

/**
 * Totals a set of lines: discounts, tax on the discounted amount (exclusive tax added, inclusive
 * tax already in it), then customer credit — or a debit (a negative balance: an earlier invoice's
 * amount carried here, see {@link carry}), added after tax as a `balance` line that neither the
 * discounts nor the tax touch.
 *
 * @since 0.1.0
 */
export const total = (input: {
  readonly invoice_type: InvoiceType
  readonly cycle_index: number
  readonly currency: string
  readonly lines: ReadonlyArray<Line>
  readonly discounts?: ReadonlyArray<DiscountRule>
  readonly tax?: TaxFn
  readonly creditBalance?: Money.Money
  readonly original_invoice_id?: string
}): Draft => {
  const currency = input.currency
  const subtotal = Money.make(
    input.lines.reduce((a, l) => a + l.amount.amount, 0n),
    currency
  )
  const positive = subtotal.amount > 0n ? subtotal : Money.zero(currency)
  const discounts = applyDiscounts(positive, input.discounts ?? [])
  const discounted = positive.amount - discounts.reduce((a, d) => a + d.amount.amount, 0n)
  const tax_lines = (input.tax ?? noTax)(Money.make(discounted, currency))
  const tax = Money.make(
    tax_lines.reduce((a, t) => a + t.amount.amount, 0n),
    currency
  )
  const due = discounted + tax_lines.reduce((a, t) => (t.inclusive ? a : a + t.amount.amount), 0n)
  const credit = input.creditBalance && input.creditBalance.currency === currency ? input.creditBalance.amount : 0n
  const creditApplied = credit > 0n ? (credit < due ? credit : due) : credit
  return {
    invoice_type: input.invoice_type,
    cycle_index: input.cycle_index,
    currency,
    lines:
      credit < 0n
        ? [
            ...input.lines,
            {
              kind: "balance" as const,
              description: "Carried from an earlier invoice",
              quantity: 1n,
              amount: Money.make(-credit, currency)
            }
          ]
        : input.lines,
    subtotal,
    discounts,
    tax,
    tax_lines,
    creditApplied: Money.make(creditApplied, currency),
    total: Money.make(due - creditApplied, currency),
    original_invoice_id: Option.fromNullishOr(input.original_invoice_id)
  }
}

/**
 * What the cycle invoice is built from.
 *
 * @since 0.1.0
 */
export interface CycleInput {
  readonly invoice_type: "initial" | "trial" | "renewal"
  readonly price: Price.PriceVersion
  /** The subscription's cycle index this invoice is for. */
  readonly cycle_index: number
  /** Paid cycles before this one (selects the intro phase); defaults to `cycle_index`. */
  readonly paidCycles?: number
  /** Seats (prepaid quantity prices); a pending quantity change is already applied by the caller. */
  readonly quantity: bigint
  /** Usage to bill in arrears (postpaid usage prices), excluding trial usage. */
  readonly usage?: bigint
  readonly discounts?: ReadonlyArray<DiscountRule>
  readonly tax?: TaxFn
  readonly creditBalance?: Money.Money
  readonly existing: ReadonlyArray<Prior>
}

/**
 * Builds the invoice of a cycle: the trial charge, the prepaid price for the cycle (intro
 * phase, seats or quantity tiers), or postpaid usage in arrears.
 *
 * @example
 * Invoicing.cycle({ invoice_type: "renewal", price, cycle_index: 3, quantity: 2n, existing })
 * @since 0.1.0
 */
export const cycle = (input: CycleInput): Result.Result<Draft, DuplicateInvoice> =>
  Result.map(once(input.existing, input.cycle_index, input.invoice_type), () => {
    const pv = input.price
    const currency = pv.currency
    const lines: Array<Line> = []
    if (input.invoice_type === "trial") {
      const trial = Price.trialOf(pv)
      const amount = Option.match(trial, {
        onNone: () => Money.zero(currency),
        onSome: (t) => Pricing.trialCharge(t.trial, currency)
      })
      lines.push({ kind: "trial", description: `${pv.price_name} (trial)`, quantity: 1n, amount })
    } else if (pv.billing_dimension === "usage") {
      const usage = input.usage ?? 0n
      const rated = Pricing.rate(Price.modelOf(pv, input.paidCycles ?? input.cycle_index), usage, currency)
      lines.push({
        kind: "usage",
        description: `${pv.price_name} usage (${usage} ${pv.usage_unit ?? "units"})`,
        quantity: usage,
        amount: rated.amount
      })
    } else {
      const rated = Pricing.rate(Price.modelOf(pv, input.paidCycles ?? input.cycle_index), input.quantity, currency)
      lines.push({
        kind: "subscription",
        description: `${pv.price_name} × ${input.quantity}`,
        quantity: input.quantity,
        amount: rated.amount
      })
    }
    return total({
      invoice_type: input.invoice_type,
      cycle_index: input.cycle_index,
      currency,
      lines,
      ...(input.discounts ? { discounts: input.discounts } : {}),
      ...(input.tax ? { tax: input.tax } : {}),
      ...(input.creditBalance ? { creditBalance: input.creditBalance } : {})
    })
  })

/**
 * The `upgrade` invoice of a prorated change with a positive net: a credit line for the
 * unused part of the old price and a charge line for the new one.
 *
 * @since 0.1.0
 */
export const upgrade = (input: {
  readonly proration: Proration.Proration
  readonly cycle_index: number
  readonly fromName: string
  readonly toName: string
  readonly tax?: TaxFn
  readonly existing: ReadonlyArray<Prior>
}): Result.Result<Draft, DuplicateInvoice> =>
  Result.map(once(input.existing, input.cycle_index, "upgrade"), () =>
    total({
      invoice_type: "upgrade",
      cycle_index: input.cycle_index,
      currency: input.proration.net.currency,
      lines: [
        {
          kind: "proration_credit",
          description: `Unused time on ${input.fromName}`,
          quantity: 1n,
          amount: Money.negate(input.proration.credit)
        },
        {
          kind: "proration_charge",
          description: `Remaining time on ${input.toName}`,
          quantity: 1n,
          amount: input.proration.charge
        }
      ],
      ...(input.tax ? { tax: input.tax } : {})
    })
  )

/**
 * A `refund` invoice for `amount` (positive) against an original invoice. Refunds may repeat
 * per cycle (partial refunds), so no (cycle, type) uniqueness applies; the caller enforces
 * refunded ≤ paid with {@link refundable}.
 *
 * @since 0.1.0
 */
export const refund = (input: {
  readonly amount: Money.Money
  readonly cycle_index: number
  readonly original_invoice_id: string
  readonly reason: string
  /**
   * The original's taxes, what was paid and what was refunded before this refund: the refund
   * carries each tax in proportion to the amount it pays back (see {@link refundedTax}).
   */
  readonly tax?:
    | {
        readonly lines: ReadonlyArray<TaxLine>
        readonly paid: Money.Money
        readonly refundedBefore: Money.Money
      }
    /** The taxes it pays back, already fixed (a share of a give-back, see {@link giveBack}). */
    | { readonly fixed: ReadonlyArray<TaxLine> }
}): Draft =>
  total({
    invoice_type: "refund",
    cycle_index: input.cycle_index,
    currency: input.amount.currency,
    lines: [{ kind: "refund", description: input.reason, quantity: 1n, amount: input.amount }],
    original_invoice_id: input.original_invoice_id,
    ...(input.tax
      ? {
          tax: () => {
            const t = input.tax!
            return "fixed" in t ? t.fixed : refundedTax(t.lines, t.paid, t.refundedBefore, input.amount)
          }
        }
      : {})
  })

/**
 * The taxes a refund of `amount` pays back: each of the original's tax lines in proportion to
 * the share of `paid` refunded, counted cumulatively — the tax of everything refunded so far,
 * rounded once, less what earlier refunds carried — so partial refunds that add up to the whole
 * pay back exactly the whole tax. The refunded amount holds them (they are `inclusive`).
 *
 * @example
 * // 119.00 paid with 19.00 tax; refunds of 59.50 then 59.50 carry 9.50 and 9.50
 * @since 0.1.0
 */
export const refundedTax = (
  lines: ReadonlyArray<TaxLine>,
  paid: Money.Money,
  refundedBefore: Money.Money,
  amount: Money.Money,
  /** false: each line keeps its own `inclusive` (a credit line of an upgrade, see {@link change}). */
  asRefund = true
): ReadonlyArray<TaxLine> => {
  if (paid.amount <= 0n) return []
  const upTo = (m: Money.Money, share: bigint) => Money.taxProportion(m, share, paid.amount).amount
  const before = refundedBefore.amount
  const after = before + amount.amount
  // an upgrade's negative lines (its credit giving tax back) belong to the invoices it came from
  return lines
    .filter((t) => t.amount.amount > 0n)
    .map((t) => ({
      ...t,
      inclusive: asRefund ? true : t.inclusive,
      taxable: Money.make(upTo(t.taxable, after) - upTo(t.taxable, before), amount.currency),
      amount: Money.make(upTo(t.amount, after) - upTo(t.amount, before), amount.currency)
    }))
}

/**
 * What one cycle of a subscription collected and has given back so far: the paid invoices of the
 * cycle (its cycle invoice and any upgrade charged in it), read from their own lines and tax
 * lines — never from the customer's current address or the merchant's current rates.
 *
 * @since 0.1.0
 */
export interface Collected {
  /** What the paid invoices were paid: their totals, plus any customer credit applied to them. */
  readonly paid: Money.Money
  /** The exclusive tax in `paid` (added on top of the prices). */
  readonly exclusiveTax: Money.Money
  /** Every tax line of the paid invoices. */
  readonly tax_lines: ReadonlyArray<TaxLine>
  /** What was given back of `paid` already: refunds (made or in flight), credit to the balance, refunds owed. */
  readonly givenBack: Money.Money
  /**
   * The same, invoice by invoice, the newest first (the order a give-back takes from them): each
   * paid invoice's own ledger, whose tax lines its give-backs carry in proportion.
   */
  readonly invoices: ReadonlyArray<PaidInvoice>
}

/**
 * One paid invoice of a cycle and what was given back of it: its trade's refunds, and the credit
 * and owed refunds recorded against it.
 *
 * @since 0.1.0
 */
export interface PaidInvoice {
  readonly invoice_id: string
  readonly trade_id: string | null
  /** Its total plus any customer credit applied to it. */
  readonly paid: Money.Money
  readonly tax_lines: ReadonlyArray<TaxLine>
  readonly givenBack: Money.Money
}

/**
 * One paid invoice's part of a give-back, with the tax in it: what its credit note states.
 *
 * @since 0.1.0
 */
export interface Share {
  readonly invoice_id: string
  readonly trade_id: string | null
  readonly amount: Money.Money
  readonly tax_lines: ReadonlyArray<TaxLine>
}

/**
 * The tax lines of `part` of a share whose whole carries `lines` (a refund that could take only
 * part of a share): each line in proportion, rounded once (half up, as tax is).
 *
 * @since 0.1.0
 */
export const partOf = (lines: ReadonlyArray<TaxLine>, part: Money.Money, whole: Money.Money): ReadonlyArray<TaxLine> =>
  part.amount >= whole.amount || whole.amount <= 0n
    ? lines
    : lines.map((t) => ({
        ...t,
        taxable: Money.taxProportion(t.taxable, part.amount, whole.amount),
        amount: Money.taxProportion(t.amount, part.amount, whole.amount)
      }))

/**
 * What is still held of a cycle's payments, before exclusive tax (the terms proration credits
 * in): `(paid − givenBack) × (paid − exclusiveTax) / paid`, rounded half to even. The credit of
 * the plan in force never exceeds it — after a full refund nothing is held, and nothing is
 * credited.
 *
 * @example
 * // 72.00 paid with 12.00 exclusive tax, 18.00 refunded: 45.00 of the 60.00 net is still held
 * @since 0.1.0
 */
export const heldBasis = (c: Collected): Money.Money => {
  const held = c.paid.amount - c.givenBack.amount
  if (held <= 0n || c.paid.amount <= 0n) return Money.zero(c.paid.currency)
  return Money.proportion(Money.make(held, c.paid.currency), c.paid.amount - c.exclusiveTax.amount, c.paid.amount)
}

/**
 * What giving back `net` (before tax, in the terms proration credits in) returns of a cycle's
 * payments: `net × paid / (paid − exclusiveTax)` — the net grossed up by the exclusive tax that
 * was actually collected, rounded half to even — never more than is still held
 * (`paid − givenBack`); taken from the paid invoices the newest first, each share never more
 * than that invoice still holds and carrying that invoice's own tax lines in proportion, counted
 * cumulatively on its ledger ({@link refundedTax}) — so tax given back never exceeds the tax an
 * invoice collected, and the shares are exactly what a refund's credit notes or a credit state
 * (preview = commit).
 *
 * @example
 * // 60.00 paid without tax, a 20 % rate added since: 15.49 back carries no tax
 * // 72.00 paid with 12.00 tax: 15.49 back is 18.59, of which 3.10 tax
 * @since 0.1.0
 */
export const giveBack = (
  c: Collected,
  net: Money.Money,
  /** false: the tax lines keep their own `inclusive` (see {@link refundedTax}). */
  asRefund = true
): {
  readonly total: Money.Money
  readonly tax: Money.Money
  readonly tax_lines: ReadonlyArray<TaxLine>
  readonly shares: ReadonlyArray<Share>
} => {
  const currency = c.paid.currency
  const base = c.paid.amount - c.exclusiveTax.amount
  const gross = base > 0n && net.amount > 0n ? Money.proportion(net, c.paid.amount, base).amount : 0n
  const held = c.paid.amount - c.givenBack.amount
  let left = gross < held ? gross : held > 0n ? held : 0n
  const shares: Array<Share> = []
  for (const inv of c.invoices) {
    if (left <= 0n) break
    const room = inv.paid.amount - inv.givenBack.amount
    const take = room < left ? room : left
    if (take <= 0n) continue
    const amount = Money.make(take, currency)
    shares.push({
      invoice_id: inv.invoice_id,
      trade_id: inv.trade_id,
      amount,
      tax_lines: refundedTax(inv.tax_lines, inv.paid, inv.givenBack, amount, asRefund)
    })
    left -= take
  }
  const tax_lines = shares.flatMap((s) => s.tax_lines)
  return {
    total: Money.make(
      shares.reduce((a, s) => a + s.amount.amount, 0n),
      currency
    ),
    tax: Money.make(
      tax_lines.reduce((a, t) => a + t.amount.amount, 0n),
      currency
    ),
    tax_lines,
    shares
  }
}

/**
 * The `upgrade` invoice of a prorated change with a positive net: the credit line for the old
 * plan's unused time gives back what the cycle's paid invoices collected for it, with **their**
 * taxes in proportion ({@link giveBack}, each line negated, keeping whether it was inclusive),
 * and the charge line for the new plan carries `chargeTax`, the tax at the customer's address and
 * the rates in force today. So a rate added since the old plan was paid taxes only the charge, and
 * a rate ended since still gives the tax it collected back.
 *
 * @example
 * // 30.00 paid untaxed, a 20 % rate since: credit −15.48 (no tax), charge 30.97 + 6.19 → 21.68
 * @since 0.1.0
 */
export const change = (input: {
  readonly cycle_index: number
  readonly currency: string
  readonly lines: ReadonlyArray<Line>
  /** The credit line's amount (positive), in proration's terms (before exclusive tax). */
  readonly credit: Money.Money
  /** The charge line's taxes at today's address and rates. */
  readonly chargeTax: ReadonlyArray<TaxLine>
  readonly collected: Collected
}): { readonly draft: Draft; readonly shares: ReadonlyArray<Share> } => {
  const given = input.credit.amount > 0n ? giveBack(input.collected, input.credit, false) : undefined
  const back = given?.tax_lines ?? []
  const negated = back.map((t) => ({
    ...t,
    taxable: Money.negate(t.taxable),
    amount: Money.negate(t.amount)
  }))
  const draft = total({
    invoice_type: "upgrade",
    cycle_index: input.cycle_index,
    currency: input.currency,
    lines: input.lines,
    tax: () => [...input.chargeTax, ...negated]
  })
  return { draft, shares: given?.shares ?? [] }
}

/**
 * An upgrade invoice whose credit gives back more than its charge costs (the old plan's tax was
 * higher than today's), settled to the customer's balance: a line crediting the balance with what
 * is owed back, so that the document adds up to a total of 0.00. Answers the draft and the amount
 * credited (zero, and the draft unchanged, when the total is not negative).
 *
 * @since 0.1.0
 */
export const toBalance = (
  draft: Draft,
  description: string
): { readonly draft: Draft; readonly credited: Money.Money } => {
  if (draft.total.amount >= 0n) return { draft, credited: Money.zero(draft.currency) }
  const credited = Money.negate(draft.total)
  return {
    draft: {
      ...draft,
      lines: [...draft.lines, { kind: "refund", description, quantity: 1n, amount: credited }],
      subtotal: Money.make(draft.subtotal.amount + credited.amount, draft.currency),
      total: Money.zero(draft.currency)
    },
    credited
  }
}

/**
 * An invoice whose total is under the processor's minimum charge, settled as Stripe settles one:
 * not charged, its total carried to the customer's balance as a debit that the next invoice
 * collects ({@link total}). The draft gains a `balance` line taking the total out, so that it adds
 * up to 0.00; answers it and the amount carried (zero, and the draft unchanged, when the total is
 * not positive).
 *
 * @example
 * const { draft, carried } = Invoicing.carry(upgrade, "Carried to your next invoice") // 0.30 USD carried
 * @since 0.1.0
 */
export const carry = (draft: Draft, description: string): { readonly draft: Draft; readonly carried: Money.Money } => {
  if (draft.total.amount <= 0n) return { draft, carried: Money.zero(draft.currency) }
  const carried = draft.total
  return {
    draft: {
      ...draft,
      lines: [...draft.lines, { kind: "balance", description, quantity: 1n, amount: Money.negate(carried) }],
      total: Money.zero(draft.currency)
    },
    carried
  }
}

/**
 * How much of a paid amount can still be refunded.
 *
 * @since 0.1.0
 */
export const refundable = (paid: Money.Money, refunded: Money.Money): Money.Money => {
  const left = paid.amount - refunded.amount
  return Money.make(left > 0n ? left : 0n, paid.currency)
}

// ------------------------------------------------------------------ drafts: discount sums, carried balances, currency conversion

/** The sum of applied discounts, in minor units. */
export const sumOfDiscounts = (discounts: ReadonlyArray<AppliedDiscount>) =>
  discounts.reduce((a, d) => a + d.amount.amount, 0n)

/** The description of the `balance` line that carries an invoice's total to the next one. */
export const CARRIED = "Under the minimum charge: carried to your next invoice"

/** A span of time, Unix ms. */
export interface Span {
  readonly start: number
  readonly end: number
}

/** Converts a draft's amounts with a captured rate (1 primary = rate target). */
export const convertDraft = (draft: Draft, rate: string | null, target: string): Draft => {
  if (rate === null || draft.currency === target) return draft
  const r = Result.getOrThrow(Decimal.parse(rate))
  const conv = (m: Money.Money) => Result.getOrThrow(Money.convert(m, r, target))
  return {
    ...draft,
    currency: target,
    lines: draft.lines.map((l) => ({ ...l, amount: conv(l.amount) })),
    subtotal: conv(draft.subtotal),
    discounts: draft.discounts.map((d) => ({ ...d, amount: conv(d.amount) })),
    tax: conv(draft.tax),
    tax_lines: draft.tax_lines.map((t) => ({ ...t, taxable: conv(t.taxable), amount: conv(t.amount) })),
    creditApplied: conv(draft.creditApplied),
    total: Money.make(
      draft.lines.reduce((a, l) => a + conv(l.amount).amount, 0n),
      target
    )
  }
}
