/**
 * The merchant API's customer-balance bodies and answers: a manual adjustment
 * (`POST /api/v1/customers/{id}/balance_transactions`), the ledger page and the balances.
 *
 * @since 0.1.0
 */
import { BalanceTransaction, Invoice } from "@recur/core"
import { Schema } from "effect"

/**
 * The body of a manual adjustment: a signed decimal `amount` (positive credits the customer,
 * negative debits), its `currency` and the `reason` (1 to 500 characters), all required (checked by the engine, which names a missing one).
 *
 * @since 0.1.0
 */
export const AdjustBalanceBody = Schema.Struct({
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export type AdjustBalanceRequest = typeof AdjustBalanceBody.Type

/**
 * The answer of a manual adjustment: the ledger entry written.
 *
 * @since 0.1.0
 */
export const BalanceTransactionAnswer = Schema.Struct({
  balance_transaction: BalanceTransaction.BalanceTransaction
})

/**
 * A customer's balances, one per currency.
 *
 * @since 0.1.0
 */
export const BalancesAnswer = Schema.Struct({
  customer_id: Schema.String,
  balance: Schema.Array(BalanceTransaction.CustomerBalanceAmount)
})

/**
 * The body of `POST /api/v1/invoices/{invoice_id}/credit_notes`: a decimal `amount` in the
 * invoice's currency (required), `method` —
 * `credit_balance` (the default: a paid invoice credited to the customer's balance),
 * `reduce_invoice` (an issued unpaid invoice owes less) or `refund` (its payment refunded to the
 * card, as `POST /api/v1/refund`) — and a `reason` (the credit note's line).
 *
 * @since 0.1.0
 */
export const CreditNoteBody = Schema.Struct({
  amount: Schema.optional(Schema.String),
  method: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export type CreditNoteRequest = typeof CreditNoteBody.Type

/**
 * The answer of a credit note: the document issued (a `refund` invoice of the credit-note series);
 * absent only for `method: refund` while the processor has not confirmed the refund (its credit
 * note is issued when it succeeds, as with `POST /api/v1/refund`), with `refund_status` telling.
 *
 * @since 0.1.0
 */
export const CreditNoteAnswer = Schema.Struct({
  credit_note: Schema.optionalKey(Invoice.InvoiceView),
  /** `method: refund` only: the refund's status (`succeeded`, or `pending` without a credit note yet). */
  refund_status: Schema.optionalKey(Schema.String)
})
