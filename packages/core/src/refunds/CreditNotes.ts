/**
 * The documents a settled refund leaves: the invoice it pays back moved to (partially) refunded
 * (`v2.invoice.refunded`), and its credit note — a `refund` invoice against that invoice, stating
 * the taxes it pays back.
 *
 * @since 0.1.0
 */
import { Effect, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import { emit, type StorageService } from "../kernel/ServiceSupport.js"
import * as Invoice from "../invoices/Invoice.js"
import { linesOf } from "../invoices/CycleLedger.js"
import { refundedTax } from "../invoices/GiveBack.js"
import { type invoiceDocuments, newInvoice, taxLinesOf } from "../invoices/InvoiceDocuments.js"
import * as Invoicing from "../invoices/Invoicing.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Money from "../money/Money.js"
import type * as Refund from "./Refund.js"
import type * as Trade from "../payments/Trade.js"

/**
 * A credit note: the `refund` invoice for `amount` (positive) against an original invoice.
 * Refunds may repeat per cycle (partial refunds), so no (cycle, type) uniqueness applies; the
 * caller enforces refunded ≤ paid with `GiveBack.refundable`.
 *
 * @since 0.1.0
 */
export const draft = (input: {
  readonly amount: Money.Money
  readonly cycle_index: number
  readonly original_invoice_id: string
  readonly reason: string
  /**
   * The original's taxes, what was paid and what was refunded before this refund: the refund
   * carries each tax in proportion to the amount it pays back (see `GiveBack.refundedTax`).
   */
  readonly tax?:
    | {
        readonly lines: ReadonlyArray<Invoicing.TaxLine>
        readonly paid: Money.Money
        readonly refundedBefore: Money.Money
      }
    /** The taxes it pays back, already fixed (a share of a give-back, see `GiveBack.giveBack`). */
    | { readonly fixed: ReadonlyArray<Invoicing.TaxLine> }
}): Invoicing.Draft =>
  Invoicing.total({
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
 * Issues the credit note of a refund that just succeeded, in its transaction: moves the invoice
 * `invoiceId` the trade paid to `full_refund` or `partial_refund` (when its machine allows it)
 * and inserts the `refund` invoice for `amount`, with the taxes fixed when the refund was reserved
 * (`fixedTax`) or else the original's in proportion to what was refunded before. Answers the
 * credit note as issued (its id and number are the refund's `credit_note_id` and `credit_note_number`).
 *
 * @since 0.1.0
 */
export const issue = (
  storage: StorageService,
  documents: ReturnType<typeof invoiceDocuments>,
  input: {
    readonly merchant: Merchant.Merchant
    readonly refund: Refund.Refund
    readonly invoiceId: string
    readonly trade: Trade.Trade
    readonly amount: Money.Money
    readonly reason: string | null
    readonly fixedTax: ReadonlyArray<Invoice.InvoiceTaxLine> | null
    /** What of the trade had settled as refunded before this refund. */
    readonly refundedBefore: Money.Money
    /** Whether the trade is refunded in full with this refund. */
    readonly full: boolean
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const invoices = storage.repository(Entities.invoice)
    const t = input.trade
    const iv = Option.getOrThrow(yield* invoices.get(input.merchant.merchant_id, input.invoiceId))
    const original = iv.value
    const moved = Invoice.move(original, input.full ? "full_refund" : "partial_refund", {
      refund_order_id: input.refund.refund_id
    })
    if (Result.isSuccess(moved)) {
      const updated = moved.success.value
      yield* invoices.update(updated, iv.version)
      yield* emit(storage, {
        merchant_id: input.merchant.merchant_id,
        type: "v2.invoice.refunded",
        business_id: updated.invoice_id,
        schema: Invoice.Invoice,
        data: updated,
        at: input.at
      })
    }
    const credit = draft({
      amount: input.amount,
      cycle_index: original.cycle_index,
      original_invoice_id: original.invoice_id,
      reason: input.reason ?? "refund",
      tax:
        input.fixedTax !== null
          ? { fixed: linesOf(input.fixedTax, t.currency) }
          : {
              lines: taxLinesOf(original),
              paid: Result.getOrThrow(Money.parse(t.amount, t.currency)),
              refundedBefore: input.refundedBefore
            }
    })
    const refundInvoice = yield* newInvoice({
      merchant_id: input.merchant.merchant_id,
      draft: credit,
      trade_id: t.trade_id,
      subscription_id: original.subscription_id,
      price_id: original.price_id,
      price_version_id: original.price_version_id,
      customer_id: original.customer_id,
      order_id: original.order_id,
      trigger: "settle_without_charge",
      at: input.at
    })
    const note = yield* documents.issueOne(
      input.merchant,
      new Invoice.Invoice({ ...refundInvoice, refund_order_id: input.refund.refund_id }, { disableChecks: true })
    )
    yield* Effect.orDie(invoices.insert(note))
    // every credit note is announced, a refund's as one to the balance or of an open invoice
    yield* emit(storage, {
      merchant_id: input.merchant.merchant_id,
      type: "v2.credit_note.created",
      business_id: note.invoice_id,
      schema: Invoice.Invoice,
      data: note,
      at: input.at
    })
    return note
  })
