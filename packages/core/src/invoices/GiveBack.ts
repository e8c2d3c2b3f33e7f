/**
 * Giving back from a cycle's payments, as pure rules over what the cycle collected
 * ({@link Collected}, read by `CycleLedger.collectedBy`): how much is still held, which paid
 * invoice each part comes from, and the tax each part carries in proportion — a refund's credit
 * note, a downgrade's credit or refund, an upgrade's credit line (`Invoicing.change`).
 *
 * @since 0.1.0
 */
import type { TaxLine } from "./Invoicing.js"
import * as Money from "../money/Money.js"

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
  /** false: each line keeps its own `inclusive` (a credit line of an upgrade, see `Invoicing.change`). */
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
 * How much of a paid amount can still be refunded.
 *
 * @since 0.1.0
 */
export const refundable = (paid: Money.Money, refunded: Money.Money): Money.Money => {
  const left = paid.amount - refunded.amount
  return Money.make(left > 0n ? left : 0n, paid.currency)
}

/**
 * A give-back's `shares` split in two: `taken`, the first `amount` of it (the shares in their
 * order, the newest invoice first; a share cut in two carries its tax in proportion), and the
 * `rest` — e.g. the part of an interval switch's credit refunded to the card and the part kept on
 * the balance.
 *
 * @example
 * // shares 20.00 + 40.00, 30.00 taken: 20.00 and 10.00 of the second; 30.00 of it is the rest
 * @since 0.1.0
 */
export const split = (
  shares: ReadonlyArray<Share>,
  amount: Money.Money
): { readonly taken: ReadonlyArray<Share>; readonly rest: ReadonlyArray<Share> } => {
  const taken: Array<Share> = []
  const rest: Array<Share> = []
  let left = amount.amount
  for (const sh of shares) {
    const take = left <= 0n ? 0n : left < sh.amount.amount ? left : sh.amount.amount
    left -= take
    if (take === sh.amount.amount) taken.push(sh)
    else if (take === 0n) rest.push(sh)
    else {
      const part = Money.make(take, sh.amount.currency)
      const lines = partOf(sh.tax_lines, part, sh.amount)
      taken.push({ ...sh, amount: part, tax_lines: lines })
      rest.push({
        ...sh,
        amount: Money.make(sh.amount.amount - take, sh.amount.currency),
        tax_lines: sh.tax_lines.map((t, n) => ({
          ...t,
          taxable: Money.make(t.taxable.amount - lines[n]!.taxable.amount, t.taxable.currency),
          amount: Money.make(t.amount.amount - lines[n]!.amount.amount, t.amount.currency)
        }))
      })
    }
  }
  return { taken, rest }
}
