/**
 * A renewal's or a final invoice's proration credits that its other lines cannot absorb, moved
 * to the customer's balance with the tax they were paid with.
 *
 * @since 0.1.0
 */
import * as Money from "../money/Money.js"
import { partOf } from "./GiveBack.js"
import { type Draft, type TaxLine, unappliedCredit } from "./Invoicing.js"

/**
 * A renewal whose proration credits exceed its other lines ({@link unappliedCredit}): the rest
 * is credited to the customer's balance **with the tax collected on it**, as an `always_invoice`
 * credit gives it back — `paidTax`, the tax lines given back with the credits' part `paidPart`
 * taken from the cycle's payments, in proportion to the rest (the rest is always within that
 * part: the other part of a credit only cancels pending charges). The document states it and
 * adds up: the tax given back as negative tax lines, and a line crediting the balance, so the
 * total stays what it was (0.00, or a carried debit). Answers the draft (with `credited`) and the
 * amount credited (zero, and the draft unchanged, when nothing is left over).
 *
 * @example
 * // 10.00 plan − 50.00 credit + 5.00 charge, the credit paid with 20 % tax: 35.00 + 7.00 to the balance
 * @since 0.1.0
 */
export const creditToBalance = (
  draft: Draft,
  paidTax: ReadonlyArray<TaxLine>,
  paidPart: Money.Money,
  description: string
): { readonly draft: Draft; readonly credited: Money.Money } => {
  const rest = unappliedCredit(draft)
  if (rest.amount <= 0n) return { draft, credited: Money.zero(draft.currency) }
  const part = rest.amount < paidPart.amount ? rest : paidPart
  const back = (paidPart.amount > 0n ? partOf(paidTax, part, paidPart) : []).map((t) => ({
    ...t,
    taxable: Money.negate(t.taxable),
    amount: Money.negate(t.amount)
  }))
  const exclusive = back.reduce((a, t) => (t.inclusive ? a : a - t.amount.amount), 0n)
  const credited = Money.make(rest.amount + exclusive, draft.currency)
  return {
    draft: {
      ...draft,
      lines: [...draft.lines, { kind: "refund", description, quantity: 1n, amount: credited }],
      subtotal: Money.make(draft.subtotal.amount + credited.amount, draft.currency),
      tax_lines: [...draft.tax_lines, ...back],
      tax: Money.make(draft.tax.amount + back.reduce((a, t) => a + t.amount.amount, 0n), draft.currency),
      credited
    },
    credited
  }
}
