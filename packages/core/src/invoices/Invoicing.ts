/**
 * Invoice building as pure functions: what a cycle (initial, trial, renewal) or a prorated
 * change (upgrade) should bill, as new drafts, and how a draft is totalled, carried and
 * converted. Issued invoices are never edited; there is at most one invoice per (subscription,
 * cycle, type), checked against the prior documents passed in. A refund's draft is
 * `CreditNotes.draft`; what a cycle collected and gives back is `CycleLedger` and `GiveBack`.
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
import { giveBack, type Collected, type Share } from "./GiveBack.js"
import * as Decimal from "../money/Decimal.js"

/**
 * One line of an invoice.
 *
 * @since 0.1.0
 */
export interface Line {
  readonly kind:
    | "subscription"
    | "one_time"
    | "trial"
    | "usage"
    | "proration_credit"
    | "proration_charge"
    | "refund"
    | "balance"
    | "invoice_item"
  readonly description: string
  readonly quantity: bigint
  /** Signed: credits are negative. */
  readonly amount: Money.Money
  /**
   * The time the line is for, when it is not the invoice's period (Unix ms): a pending proration
   * line covers the rest of the cycle it was recorded in, not the period the invoice opens.
   */
  readonly span?: { readonly start: number; readonly end: number } | undefined
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
  /**
   * What the invoice credits to the customer's balance: the proration credits its other lines
   * could not absorb, with the tax collected on them (`BalanceCredit.creditToBalance`). Absent: none
   * (or, on a draft that did not go through it, {@link unappliedCredit}).
   */
  readonly credited?: Money.Money | undefined
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

/** Whether a line is a proration's (a change's credit or charge). */
const isProration = (l: Line) => l.kind === "proration_credit" || l.kind === "proration_charge"

/**
 * The sum of the proration lines of `lines`, in minor units (signed).
 *
 * @since 0.1.0
 */
export const prorationNet = (lines: ReadonlyArray<Line>): bigint =>
  lines.reduce((a, l) => (isProration(l) ? a + l.amount.amount : a), 0n)

/**
 * What an invoice is taxed on: its lines other than prorations less their discounts, plus the
 * proration lines (already net of discounts); never below zero.
 *
 * @since 0.1.0
 */
export const taxableOf = (draft: Pick<Draft, "lines" | "discounts">): bigint => {
  const prorations = prorationNet(draft.lines)
  const base = draft.lines.reduce((a, l) => a + l.amount.amount, 0n) - prorations
  const t = (base > 0n ? base : 0n) - sumOfDiscounts(draft.discounts) + prorations
  return t > 0n ? t : 0n
}

/**
 * The part of an invoice's proration credits it could not absorb (its other lines, after
 * discounts, were smaller): what goes to the customer's credit balance instead. Zero when the
 * invoice's taxable amount is not negative.
 *
 * @since 0.1.0
 */
export const unappliedCredit = (draft: Pick<Draft, "lines" | "discounts" | "currency">): Money.Money => {
  const prorations = prorationNet(draft.lines)
  const base = draft.lines.reduce((a, l) => a + (l.kind === "balance" ? 0n : l.amount.amount), 0n) - prorations
  const t = (base > 0n ? base : 0n) - sumOfDiscounts(draft.discounts) + prorations
  return Money.make(t < 0n ? -t : 0n, draft.currency)
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
  // proration lines are priced already after the subscription's discounts (from its plan basis):
  // the discounts apply to the other lines only, and the prorations are added after them
  const prorations = prorationNet(input.lines)
  const base = subtotal.amount - prorations
  const positive = base > 0n ? Money.make(base, currency) : Money.zero(currency)
  const discounts = applyDiscounts(positive, input.discounts ?? [])
  const afterProrations = positive.amount - discounts.reduce((a, d) => a + d.amount.amount, 0n) + prorations
  const discounted = afterProrations > 0n ? afterProrations : 0n
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
  /**
   * The part of a whole period this invoice covers (a short first period up to a billing anchor,
   * `BillingAnchor.firstShare`): the prepaid line is the whole period's amount × unused / total,
   * rounded half-even once. Absent: a whole period.
   */
  readonly share?: Proration.Fraction
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
      const share = input.share
      lines.push({
        kind: "subscription",
        description:
          share === undefined
            ? `${pv.price_name} × ${input.quantity}`
            : `${pv.price_name} × ${input.quantity}, prorated to the billing anchor`,
        quantity: input.quantity,
        amount: share === undefined ? rated.amount : Money.proportion(rated.amount, share.unused, share.total)
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
