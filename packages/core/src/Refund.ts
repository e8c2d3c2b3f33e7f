/**
 * Refunds of a succeeded trade.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { NullableString, NullableTimestamp, Timestamp } from "./Common.js"
import { RefundStatus } from "./Lifecycle.js"

/**
 * A refund record (amount as a positive decimal string).
 *
 * @since 0.1.0
 */
export class Refund extends Schema.Class<Refund>("Refund")({
  refund_id: Schema.String,
  trade_id: Schema.String,
  invoice_id: NullableString,
  refund_amount: Schema.String,
  currency: Schema.String,
  refund_status: RefundStatus,
  reason: NullableString,
  created_at: Timestamp,
  finished_at: NullableTimestamp
}) {}
