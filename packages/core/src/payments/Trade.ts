/**
 * Trades (payments) as the REST API returns them.
 *
 * @since 0.1.0
 */
import type { Result } from "effect"
import { Effect, Schema } from "effect"
import { BillingAddress, Discounts, Metadata, NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { TradeDisputeStatus, TradeRefundStatus, TradeStatus } from "../kernel/Lifecycle.js"
import { DeclineClass } from "./DunningPolicy.js"

/** @since 0.1.0 */
export class LastPaymentError extends Schema.Class<LastPaymentError>("LastPaymentError")({
  code: Schema.String,
  message: Schema.String,
  /** A decline's class as the gateway gave it (`hard`, `soft`, `expired_card`); absent when it gave none. */
  decline_class: Schema.optionalKey(DeclineClass)
}) {}

/** @since 0.1.0 */
export class NextAction extends Schema.Class<NextAction>("NextAction")({
  type: Schema.String,
  redirect: Schema.Struct({ url: Schema.String }),
  client: Schema.Struct({ confirm_url: Schema.String, apple_pay_session: Schema.String })
}) {}

/** @since 0.1.0 */
export class ReferInfo extends Schema.Class<ReferInfo>("ReferInfo")({
  country_code: Schema.String,
  ip: Schema.String,
  device: Schema.String,
  user_agent: Schema.String
}) {}

/** @since 0.1.0 */
export class LineItem extends Schema.Class<LineItem>("LineItem")({
  id: Schema.String,
  title: Schema.String,
  price: Schema.String,
  price_id: Schema.String,
  quantity: Schema.String,
  sku: Schema.String,
  vendor: Schema.String,
  cycle_unit: Schema.String
}) {}

/** @since 0.1.0 */
export class PaymentInfo extends Schema.Class<PaymentInfo>("PaymentInfo")({
  verification: Schema.Struct({
    cvc_check: Schema.String,
    avs: Schema.Struct({ line1_check: Schema.String, postal_code_check: Schema.String }),
    three_d_secure: Schema.Struct({
      authentication_flow: Schema.String,
      result: Schema.String,
      result_reason: Schema.String,
      version: Schema.String,
      eci: Schema.String
    })
  }),
  authcode: Schema.String,
  network_transaction_id: Schema.String
}) {}

/**
 * A dispute of a trade's charge, as the processor reported it last.
 *
 * @since 0.1.0
 */
export class TradeDisputeRecord extends Schema.Class<TradeDisputeRecord>("TradeDispute")({
  dispute_id: Schema.String,
  amount: Schema.String,
  currency: Schema.String,
  reason: Schema.String,
  opened_at: Timestamp,
  closed_at: NullableTimestamp,
  /**
   * The processor's own status of the dispute as reported last (Stripe's `needs_response`,
   * `under_review`, `warning_needs_response`, `warning_under_review`, `warning_closed`, `won`,
   * `lost`, `prevented`); null on disputes recorded before it was kept.
   */
  processor_status: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** When the merchant's evidence is due at the processor (Stripe's `evidence_details.due_by`); null when none is given. */
  evidence_due_by: NullableTimestamp.pipe(Schema.withDecodingDefault(Effect.succeed(null)))
}) {}

/**
 * A trade record.
 *
 * @since 0.1.0
 */
export class Trade extends Schema.Class<Trade>("Trade")({
  trade_id: Schema.String,
  access_no: NullableString,
  merchant_id: Schema.String,
  amount: Schema.String,
  currency: Schema.String,
  customer_id: Schema.String,
  callback_url: NullableString,
  order_id: NullableString,
  last_trans_id: NullableString,
  paid_at: NullableTimestamp,
  payment_mode: Schema.Literals(["onetime_payment", "subscription"]),
  payment_token: NullableString,
  payment_method: NullableString,
  payment_channel: NullableString,
  return_url: NullableString,
  trade_status: TradeStatus,
  txn_time: NullableTimestamp,
  created_at: Timestamp,
  refund_status: TradeRefundStatus,
  total_refunded_amount: Schema.String,
  session_id: NullableString,
  session_url: NullableString,
  order_type: Schema.Literals(["initial", "renewal", "upgrade", "one_time"]),
  closed_at: NullableTimestamp,
  closed_reason: NullableString,
  first_source_channel: NullableString,
  last_source_channel: NullableString,
  tax_amount: Schema.String,
  metadata: Metadata,
  last_payment_error: Schema.NullOr(LastPaymentError),
  next_action: Schema.NullOr(NextAction),
  refer_info: Schema.NullOr(ReferInfo),
  line_items: Schema.Array(LineItem),
  discounts: Discounts,
  billing_address: Schema.NullOr(BillingAddress),
  payment_info: Schema.NullOr(PaymentInfo),
  /**
   * Whether the payer disputed the charge: `none`, `open`, or how it ended — `won`, `lost`,
   * `warning_closed` (an inquiry closed), `prevented`.
   */
  dispute_status: TradeDisputeStatus.pipe(Schema.withDecodingDefault(Effect.succeed("none" as const))),
  dispute: Schema.NullOr(TradeDisputeRecord).pipe(Schema.withDecodingDefault(Effect.succeed(null)))
}) {}

type TradeFields = Omit<Trade, "trade_status" | "refund_status" | "dispute_status">

/**
 * Moves a trade's `trade_status` by `trigger` (the {@link Lifecycle.trade} machine), with the
 * fields that change with it. The only way a trade's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  trade: Trade,
  trigger: Lifecycle.TradeTrigger,
  patch: Partial<TradeFields> = {}
): Result.Result<Lifecycle.Moved<Trade>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.trade,
    trade.trade_status,
    trigger,
    (to) => new Trade({ ...trade, ...patch, trade_status: to }, { disableChecks: true })
  )

/**
 * Moves a trade's `refund_status` (the {@link Lifecycle.tradeRefund} machine).
 *
 * @since 0.1.0
 */
export const moveRefund = (
  trade: Trade,
  trigger: "partial_refund" | "full_refund",
  patch: Partial<TradeFields> = {}
): Result.Result<Lifecycle.Moved<Trade>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.tradeRefund,
    trade.refund_status,
    trigger,
    (to) => new Trade({ ...trade, ...patch, refund_status: to }, { disableChecks: true })
  )

/**
 * Moves a trade's `dispute_status` (the {@link Lifecycle.tradeDispute} machine).
 *
 * @since 0.1.0
 */
export const moveDispute = (
  trade: Trade,
  trigger: Lifecycle.TradeDisputeTrigger,
  patch: Partial<TradeFields> = {}
): Result.Result<Lifecycle.Moved<Trade>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.tradeDispute,
    trade.dispute_status,
    trigger,
    (to) => new Trade({ ...trade, ...patch, dispute_status: to }, { disableChecks: true })
  )
