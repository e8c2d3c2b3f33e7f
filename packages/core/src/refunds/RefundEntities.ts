/**
 * The refund as stored (re-exported by `Entities`).
 */
import { Effect, Schema } from "effect"
import * as Invoice from "../invoices/Invoice.js"
import * as Refund from "./Refund.js"
import * as Store from "../kernel/Store.js"
import { minor, ms } from "../kernel/internal/entities.js"

/** @since 0.1.0 */
export const RefundRecord = Schema.Struct({
  merchant_id: Schema.String,
  refund: Refund.Refund,
  /** The Request-Id (or caller's key) that created it: a retry with the same key finds it. */
  request_key: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * The taxes its credit note states, fixed when the refund was reserved (a subscription cycle's
   * payment: from its invoice's own ledger, or the downgrade quote's share); null: computed from
   * the original invoice as it settles.
   */
  tax_lines: Schema.NullOr(Schema.Array(Invoice.InvoiceTaxLine)).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The processor's id of the refund once it named one (Stripe's `re_…`): it is read by it later. */
  reference: Schema.optional(Schema.String)
})
/** @since 0.1.0 */
export type RefundRecord = typeof RefundRecord.Type

/** @since 0.1.0 */
export const refund: Store.Entity<RefundRecord, typeof RefundRecord.Encoded> = Store.entity({
  name: "refund",
  table: "recur_refunds",
  schema: RefundRecord,
  id: (r) => r.refund.refund_id,
  createdAt: (r) => ms(r.refund.created_at),
  columns: {
    trade_id: (r) => r.refund.trade_id,
    refund_status: (r) => r.refund.refund_status,
    amount_minor: (r) => minor(r.refund.refund_amount, r.refund.currency),
    currency: (r) => r.refund.currency,
    request_key: "request_key"
  }
})
