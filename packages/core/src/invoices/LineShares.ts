/**
 * Each line's share of an invoice's discounts and tax. The invoice's totals are computed once,
 * over its subtotal (`Invoicing.total`), and never change here: its discount and its tax are
 * split across the lines afterwards with `Money.allocate` (dinero.js, largest remainder), so the
 * lines' shares sum exactly to the invoice's totals.
 *
 * - Discounts go to the lines they applied to: the lines other than prorations (a proration is
 *   priced after the subscription's discounts already) and the carried `balance` lines, with a
 *   positive amount, in proportion to their amounts. Credits and zero lines get 0.
 * - Tax goes to the lines whose amount after their discount share has the tax's sign (positive
 *   lines for a positive tax; the negative lines of a credit note or of tax given back), in
 *   proportion to that amount, `balance` lines never (neither discounts nor tax touch them).
 *   The other lines get 0: a credit that lowered the tax shows in the charged lines' shares.
 *
 * @since 0.1.0
 */
import * as Money from "../money/Money.js"
import type { AppliedDiscount, Line } from "./Invoicing.js"

/**
 * One line's shares.
 *
 * @since 0.1.0
 */
export interface LineShare {
  /** Its share of the invoice's discounts (not negative). */
  readonly discount: Money.Money
  /** Its share of the invoice's tax, inclusive and exclusive (signed as the invoice's tax). */
  readonly tax: Money.Money
}

const abs = (n: bigint) => (n < 0n ? -n : n)

/**
 * Splits `whole` (signed) over `weights` (only the positive ones take part) so the parts sum to
 * it exactly; when no weight is positive (no line to carry it), every listed fallback line takes
 * an equal part, then the first line all of it.
 */
const split = (
  whole: bigint,
  weights: ReadonlyArray<bigint>,
  fallback: ReadonlyArray<boolean>,
  currency: string
): ReadonlyArray<bigint> => {
  const out = weights.map(() => 0n)
  if (whole === 0n || weights.length === 0) return out
  const ratios = weights.some((w) => w > 0n)
    ? weights.map((w) => (w > 0n ? w : 0n))
    : fallback.some((f) => f)
      ? fallback.map((f) => (f ? 1n : 0n))
      : weights.map((_, i) => (i === 0 ? 1n : 0n))
  const parts = Money.allocate(Money.make(abs(whole), currency), ratios)
  return parts.map((p) => (whole < 0n ? -p.amount : p.amount))
}

/**
 * The lines' shares of `discounts` and `tax`, line by line (same order as `lines`): they sum to
 * the discounts' total and to `tax` exactly.
 *
 * @example
 * // 49.00 plan + 60.00 seats + 99.00 SSO, 10 % off (20.80), 20 % tax (37.44)
 * sharesOf({ lines, discounts, tax, currency: "USD" })
 * // discounts 4.90, 6.00, 9.90 — tax 8.82, 10.80, 17.82
 * @since 0.1.0
 */
export const sharesOf = (draft: {
  readonly lines: ReadonlyArray<Line>
  readonly discounts: ReadonlyArray<AppliedDiscount>
  readonly tax: Money.Money
  readonly currency: string
}): ReadonlyArray<LineShare> => {
  const { currency, lines } = draft
  const discountTotal = draft.discounts.reduce((a, d) => a + d.amount.amount, 0n)
  const discountable = (l: Line) =>
    l.kind !== "proration_credit" && l.kind !== "proration_charge" && l.kind !== "balance"
  const discounts = split(
    discountTotal,
    lines.map((l) => (discountable(l) ? l.amount.amount : 0n)),
    lines.map((l) => l.kind !== "balance"),
    currency
  )
  const nets = lines.map((l, i) => l.amount.amount - discounts[i]!)
  const sign = draft.tax.amount < 0n ? -1n : 1n
  const taxes = split(
    draft.tax.amount,
    lines.map((l, i) => (l.kind === "balance" ? 0n : nets[i]! * sign)),
    lines.map((l) => l.kind !== "balance"),
    currency
  )
  return lines.map((_, i) => ({
    discount: Money.make(discounts[i]!, currency),
    tax: Money.make(taxes[i]!, currency)
  }))
}
