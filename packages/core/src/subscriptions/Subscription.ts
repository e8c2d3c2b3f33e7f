/**
 * Subscriptions as the REST API returns them.
 *
 * @since 0.1.0
 */
import { CollectionMethod } from "../invoices/Collection.js"
import { Schema } from "effect"
import { BillingCycleUnit } from "../money/BillingPeriod.js"
import {
  Metadata,
  NullableString,
  NullableTimestamp,
  QuantityTier,
  TierType,
  Timestamp,
  UsageTier
} from "../kernel/Common.js"
import type { Result } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { SubscriptionStatus } from "../kernel/Lifecycle.js"
import { BillingDimension, PaymentTiming, PriceType } from "../catalog/Price.js"

/**
 * The most items a subscription holds (and a schedule's phase lists).
 *
 * @since 0.1.0
 */
export const MAX_ITEMS = 20

/**
 * A quantity change waiting for the next cycle.
 *
 * @since 0.1.0
 */
export class PendingChange extends Schema.Class<PendingChange>("PendingChange")({
  quantity: Schema.String,
  cycle_index: Schema.Int,
  version: Schema.Int,
  effective_at: Timestamp
}) {}

/**
 * A discount a subscription carries, as its answer shows it: which discount (`discount_id`, its
 * `discount_code`), what it takes off (`percent_off`, or `amount_off` in `currency`, the
 * subscription's settlement currency), for how long (`duration`; `first_cycle` to `last_cycle`,
 * `cycles` of them, `null` for every cycle), and `cycles_remaining`: the cycles after the current
 * one (`cycle_index`) it still discounts (`null`: every cycle, `0`: used up).
 *
 * @since 0.1.0
 */
export class SubscriptionDiscount extends Schema.Class<SubscriptionDiscount>("SubscriptionDiscount")({
  discount_id: Schema.String,
  discount_code: NullableString,
  discount_type: Schema.Literals(["percentage", "fixed_amount"]),
  percent_off: Schema.NullOr(Schema.Number),
  amount_off: NullableString,
  currency: Schema.String,
  duration: Schema.Literals(["once", "repeating", "forever"]),
  first_cycle: Schema.NullOr(Schema.Int),
  cycles: Schema.NullOr(Schema.Int),
  last_cycle: Schema.NullOr(Schema.Int),
  cycles_remaining: Schema.NullOr(Schema.Int)
}) {}

/**
 * One item of a subscription as its answer shows it: a recurring price with its own quantity.
 * Item 0 is the base item, the one the subscription's flat fields (`price_id`, `quantity`, …)
 * describe; its id is the subscription's with the `si` prefix. `unit_amount` is the price
 * version's list amount per cycle (its plan's `base_price_val`, else `price_val`; intro phases
 * and tiers aside) in `currency`, the price's own currency (the subscription may settle in
 * another at its `fx_rate`). What waits for its next cycle: `pending_change`, a quantity (as the
 * subscription's own `pending_change`), and `scheduled_price_version_id`, the price version the
 * next renewal bills it at (an end-of-period change, a catalog migration); `null` when none.
 *
 * @since 0.1.0
 */
export class SubscriptionItem extends Schema.Class<SubscriptionItem>("SubscriptionItem")({
  id: Schema.String,
  price_id: Schema.String,
  price_version_id: Schema.String,
  quantity: Schema.String,
  price_type: PriceType,
  billing_dimension: BillingDimension,
  quantity_unit: NullableString,
  unit_amount: NullableString,
  currency: Schema.String,
  usage_amount: NullableString,
  quantity_tier_type: Schema.NullOr(TierType),
  price_tier_type: Schema.NullOr(TierType),
  quantity_tiers: Schema.Array(QuantityTier),
  usage_tiers: Schema.Array(UsageTier),
  created_at: Timestamp,
  pending_change: Schema.NullOr(PendingChange),
  scheduled_price_version_id: NullableString
}) {}

/**
 * A subscription record.
 *
 * @since 0.1.0
 */
export class Subscription extends Schema.Class<Subscription>("Subscription")({
  id: Schema.String,
  customer_id: Schema.String,
  email: NullableString,
  cancel_reason: NullableString,
  sub_merchant_id: NullableString,
  status: SubscriptionStatus,
  price_id: Schema.String,
  current_period_start: NullableTimestamp,
  current_period_end: NullableTimestamp,
  next_invoice_date: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  cancel_at: NullableTimestamp,
  order_id: NullableString,
  source_trade_id: NullableString,
  price_type: PriceType,
  price_version_id: Schema.String,
  first_source_channel: NullableString,
  last_source_channel: NullableString,
  quantity: Schema.String,
  quantity_unit: NullableString,
  payment_timing: PaymentTiming,
  billing_dimension: BillingDimension,
  quantity_tier_type: Schema.NullOr(TierType),
  price_tier_type: Schema.NullOr(TierType),
  usage_amount: NullableString,
  merchant_price_id: NullableString,
  cycle_index: Schema.Int,
  total_cycles: Schema.NullOr(Schema.Int),
  metadata: Metadata,
  quantity_tiers: Schema.Array(QuantityTier),
  usage_tiers: Schema.Array(UsageTier),
  pending_change: Schema.NullOr(PendingChange),
  billing_cycle_unit: BillingCycleUnit,
  cancel_at_period_end: Schema.Boolean,
  credit_balance: Schema.String,
  /**
   * The discounts it carries and their terms, computed from the stored terms as it is read:
   * written by `Billing.getSubscription` and `Billing.listSubscriptions` (the reads of one
   * subscription and of a list); absent from webhook payloads and from what other operations return.
   */
  discounts: Schema.optionalKey(Schema.Array(SubscriptionDiscount)),
  /**
   * The billing cycle anchor: the instant whose anniversaries its periods start on (a chosen
   * anchor, else its first payment, a trial's end or its last resume); `null` before its first
   * payment. Written with `discounts` by the reads of one subscription and of a list.
   */
  billing_cycle_anchor: Schema.optionalKey(NullableTimestamp),
  /**
   * Its items (1 to 20), the base item first, computed from the record as it is read: written by
   * `Billing.getSubscription` and `Billing.listSubscriptions` (see `SubscriptionItems`); absent
   * from webhook payloads and from what other operations return.
   */
  items: Schema.optionalKey(Schema.Array(SubscriptionItem)),
  /**
   * Its own collection setting (`charge_automatically` or `send_invoice`; `null`: its customer's
   * applies — issue 34). Written with `discounts` by the reads of one subscription and of a list.
   */
  collection_method: Schema.optionalKey(Schema.NullOr(CollectionMethod)),
  /** Its own net terms in days with `send_invoice` (`null` otherwise, or when it has no own setting). */
  days_until_due: Schema.optionalKey(Schema.NullOr(Schema.Int))
}) {}

/**
 * Moves a subscription's `status` by `trigger` (the {@link Lifecycle.subscription} machine), with
 * the fields that change with it; the transition's events come with it. The only way a
 * subscription's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  subscription: Subscription,
  trigger: Lifecycle.SubscriptionTrigger,
  patch: Partial<Omit<Subscription, "status">> = {}
): Result.Result<Lifecycle.Moved<Subscription>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.subscription,
    subscription.status,
    trigger,
    (to) => new Subscription({ ...subscription, ...patch, status: to }, { disableChecks: true })
  )
