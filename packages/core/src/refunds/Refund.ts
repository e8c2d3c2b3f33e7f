/**
 * Refunds of a succeeded trade.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import type { Result } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { RefundStatus } from "../kernel/Lifecycle.js"

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
  finished_at: NullableTimestamp,
  /**
   * The credit note the refund left (a `refund` invoice against the invoice it pays back): its
   * id, set when the refund succeeds; `null` while it is pending, when it failed, when the trade
   * paid no invoice, and on refunds recorded before it was kept.
   */
  credit_note_id: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /** The credit note's number (`INV-CN-000001`), with `credit_note_id`. */
  credit_note_number: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  )
}) {}

/**
 * Moves a refund's `refund_status` (the {@link Lifecycle.refund} machine). The only way it
 * changes.
 *
 * @since 0.1.0
 */
export const move = (
  refund: Refund,
  trigger: "succeeded" | "failed",
  patch: Partial<Omit<Refund, "refund_status">> = {}
): Result.Result<Lifecycle.Moved<Refund>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.refund,
    refund.refund_status,
    trigger,
    (to) => new Refund({ ...refund, ...patch, refund_status: to }, { disableChecks: true })
  )
