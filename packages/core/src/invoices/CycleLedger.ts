/**
 * The ledger of a subscription's cycle as stored: what its paid invoices collected and what was
 * given back of them (refunds of their trades, credit to the balance, refunds owed, an upgrade's
 * credit moved), read from the invoices' own totals and tax lines and from the subscription
 * record ({@link collectedBy}), and the record's entries that add to it. The rules of giving back
 * from it are `GiveBack`.
 *
 * @since 0.1.0
 */
import { Effect, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import type { Collected, PaidInvoice, Share } from "./GiveBack.js"
import { msOf } from "../kernel/ServiceSupport.js"
import * as Invoice from "./Invoice.js"
import { taxLinesOf } from "./InvoiceDocuments.js"
import type { TaxLine } from "./Invoicing.js"
import * as Money from "../money/Money.js"
import type * as Store from "../kernel/Store.js"

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The invoices that collect a cycle's money: its cycle invoice and any upgrade charged in it.
 *
 * @since 0.1.0
 */
export const PAYING: ReadonlyArray<Invoice.Invoice["invoice_type"]> = ["initial", "renewal", "upgrade"]

/**
 * A cycle's invoices the newest first (ids sort in creation order within one instant): the order
 * a give-back takes from them (an upgrade's before the cycle's).
 *
 * @since 0.1.0
 */
export const newestFirst = (invoices: ReadonlyArray<Invoice.Invoice>): Array<Invoice.Invoice> =>
  [...invoices].sort((a, b) => msOf(b.created_at) - msOf(a.created_at) || compareKeys(b.invoice_id, a.invoice_id))

/**
 * What a subscription's cycle `cycleIndex` collected and has given back (see
 * `Collected`), from its paid invoices' own totals and tax lines, the refunds of their
 * trades, and what the record says was credited or is still owed from that cycle.
 *
 * @since 0.1.0
 */
export const collectedBy = (
  storage: Store.Storage["Service"],
  merchantId: string,
  rec: Entities.SubscriptionRecord,
  cycleIndex: number
) =>
  Effect.gen(function* () {
    const currency = rec.currency
    const money = (text: string) => Result.getOrThrow(Money.parse(text, currency, { allowNegative: true })).amount
    const cycle = (yield* Effect.orDie(
      storage.repository(Entities.invoice).list(merchantId, {
        limit: 100,
        filters: [
          { column: "subscription_id", op: "in", values: [rec.subscription.id] },
          { column: "cycle_index", op: "in", values: [cycleIndex] }
        ]
      })
    )).list.filter((i) => PAYING.includes(i.invoice_type) && i.paid_at !== null && i.currency === currency)
    let paid = 0n
    let exclusive = 0n
    let refunded = 0n
    const tax_lines: Array<TaxLine> = []
    const invoices: Array<PaidInvoice> = []
    const movedOf = (pick: (m: Entities.SubscriptionRecord["moved"][number]) => string, invoiceId: string) =>
      rec.moved
        .filter((m) => m.cycle_index === cycleIndex && pick(m) === invoiceId)
        .reduce((a, m) => a + money(m.amount), 0n)
    // what the record says was given back from one invoice: credited from it, refunds owed from
    // it, an upgrade's credit moved out of it
    const against = (invoiceId: string) =>
      movedOf((m) => m.from_invoice_id, invoiceId) +
      rec.credited
        .filter((c) => c.cycle_index === cycleIndex && c.invoice_id === invoiceId)
        .reduce((a, c) => a + money(c.amount), 0n) +
      rec.owed_refunds
        .filter((o) => o.cycle_index === cycleIndex)
        .flatMap((o) => o.shares ?? [])
        .filter((sh) => sh.invoice_id === invoiceId)
        .reduce((a, sh) => a + money(sh.amount), 0n)
    // the newest first: the order a give-back takes from them (an upgrade's before the cycle's)
    for (const inv of newestFirst(cycle)) {
      const lines = taxLinesOf(inv)
      const excl = lines.reduce((a, t) => (t.inclusive ? a : a + t.amount.amount), 0n)
      // customer credit applied to it: its lines and exclusive tax, less what was charged
      const applied = inv.lines.reduce((a, l) => a + money(l.amount), 0n) + excl - money(inv.amount)
      // credit notes that reduced it before payment were never collected
      const itsPaid = money(inv.amount) - Invoice.preCredited(inv).amount + (applied > 0n ? applied : 0n)
      paid += itsPaid
      // an upgrade's negative tax lines are its credit's, moved into it from this cycle; other
      // negative tax lines give back tax already counted as given back (a credit to the balance)
      exclusive +=
        movedOf((m) => m.to_invoice_id, inv.invoice_id) > 0n
          ? excl
          : lines.reduce((a, t) => (t.inclusive || t.amount.amount < 0n ? a : a + t.amount.amount), 0n)
      tax_lines.push(...lines)
      let itsRefunds = 0n
      if (inv.trade_id !== null) {
        const tv = yield* storage.repository(Entities.trade).get(merchantId, inv.trade_id)
        if (Option.isSome(tv)) itsRefunds = money(tv.value.value.trade.total_refunded_amount)
      }
      refunded += itsRefunds
      invoices.push({
        invoice_id: inv.invoice_id,
        trade_id: inv.trade_id,
        // an upgrade's credit moved into it paid for it too
        paid: Money.make(itsPaid + movedOf((m) => m.to_invoice_id, inv.invoice_id), currency),
        // its own taxes: an upgrade's negative lines are the tax its credit gave back of the
        // invoices it moved from, counted in their ledgers
        tax_lines: lines.filter((t) => t.amount.amount > 0n),
        givenBack: Money.make(itsRefunds + against(inv.invoice_id), currency)
      })
    }
    const credited = rec.credited.filter((c) => c.cycle_index === cycleIndex).reduce((a, c) => a + money(c.amount), 0n)
    const owed = rec.owed_refunds.filter((o) => o.cycle_index === cycleIndex).reduce((a, o) => a + money(o.owed), 0n)
    return {
      paid: Money.make(paid, currency),
      exclusiveTax: Money.make(exclusive, currency),
      tax_lines,
      givenBack: Money.make(refunded + credited + owed, currency),
      invoices
    } satisfies Collected
  })

/**
 * Tax lines as stored with a share or a refund (the invoice's tax line shape).
 *
 * @since 0.1.0
 */
export const storedLines = (lines: ReadonlyArray<TaxLine>): Array<Invoice.InvoiceTaxLine> =>
  lines.map(
    ({ taxable, amount, ...rate }) =>
      new Invoice.InvoiceTaxLine(
        { ...rate, taxable_amount: Money.format(taxable), amount: Money.format(amount) },
        { disableChecks: true }
      )
  )

/**
 * Stored tax lines as money.
 *
 * @since 0.1.0
 */
export const linesOf = (stored: ReadonlyArray<Invoice.InvoiceTaxLine>, currency: string): Array<TaxLine> =>
  stored.map(({ taxable_amount, amount, ...rate }) => ({
    ...rate,
    taxable: Result.getOrThrow(Money.parse(taxable_amount, currency, { allowNegative: true })),
    amount: Result.getOrThrow(Money.parse(amount, currency, { allowNegative: true }))
  }))

/**
 * A give-back's shares as an owed refund entry stores them.
 *
 * @since 0.1.0
 */
export const storedShares = (shares: ReadonlyArray<Share>): Array<Entities.OwedShare> =>
  shares.map((sh) => ({
    invoice_id: sh.invoice_id,
    trade_id: sh.trade_id,
    amount: Money.format(sh.amount),
    tax_lines: storedLines(sh.tax_lines)
  }))

/**
 * A record with `amount` more credited from cycle `cycleIndex` (the ledger `collectedBy` reads).
 *
 * @since 0.1.0
 */
export const withCredited = (
  rec: Entities.SubscriptionRecord,
  cycleIndex: number,
  amount: Money.Money,
  invoiceId: string | null = null
): Entities.SubscriptionRecord => {
  if (amount.amount <= 0n) return rec
  const same = (c: Entities.SubscriptionRecord["credited"][number]) =>
    c.cycle_index === cycleIndex && (c.invoice_id ?? null) === invoiceId
  const before = rec.credited.find(same)
  const total = (before ? Result.getOrThrow(Money.parse(before.amount, amount.currency)).amount : 0n) + amount.amount
  return {
    ...rec,
    credited: [
      ...rec.credited.filter((c) => !same(c)),
      { cycle_index: cycleIndex, amount: Money.format(Money.make(total, amount.currency)), invoice_id: invoiceId }
    ]
  }
}

/**
 * A record with an upgrade's credit `shares` moved from the invoices they came from into the
 * upgrade's invoice `toInvoiceId` (the ledger `collectedBy` reads).
 *
 * @since 0.1.0
 */
export const withMoved = (
  rec: Entities.SubscriptionRecord,
  cycleIndex: number,
  shares: ReadonlyArray<Share>,
  toInvoiceId: string
): Entities.SubscriptionRecord =>
  shares.length === 0
    ? rec
    : {
        ...rec,
        moved: [
          ...rec.moved,
          ...shares.map((sh) => ({
            cycle_index: cycleIndex,
            from_invoice_id: sh.invoice_id,
            to_invoice_id: toInvoiceId,
            amount: Money.format(sh.amount)
          }))
        ]
      }
