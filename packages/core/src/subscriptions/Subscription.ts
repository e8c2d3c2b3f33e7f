/**
 * Subscriptions as the REST API returns them.
 *
 * @since 0.1.0
 */
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
import * as Lifecycle from "../kernel/Lifecycle.js"
import { SubscriptionStatus } from "../kernel/Lifecycle.js"
import { BillingDimension, PaymentTiming, PriceType } from "../catalog/Price.js"
import { DateTime, Effect, Option, Result } from "effect"
import * as BillingPeriod from "../money/BillingPeriod.js"
import { discountRules } from "../discounts/Discount.js"
import type * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoicing from "../invoices/Invoicing.js"
import { convertDraft, type Span } from "../invoices/Invoicing.js"
import * as Money from "../money/Money.js"
import type * as Price from "../catalog/Price.js"

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
  credit_balance: Schema.String
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

// ------------------------------------------------------------------ a subscription's state, schedule and proration basis

/** Succeeds when the subscription is live (trial, active, past_due); else `SubscriptionNotLive`. */
export const mustBeLive = (rec: Entities.SubscriptionRecord, action: string) =>
  ["trial", "active", "past_due"].includes(rec.subscription.status)
    ? Effect.void
    : Effect.fail(
        new Errors.SubscriptionNotLive({
          subscriptionId: rec.subscription.id,
          state: rec.subscription.status,
          action
        })
      )

/** A subscription's billing schedule under price version `pv`: its anchor, cycle and fixed term. */
export const scheduleOf = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion): BillingPeriod.Schedule => ({
  anchor: rec.anchor ?? 0,
  unit: pv.price_plan?.billing_cycle_unit ?? "customer-initiated",
  count: pv.price_plan?.billing_cycle_count ?? 1,
  totalCycles: rec.subscription.total_cycles ?? undefined
})

/**
 * The periods a renewal invoice covers: the cycle it opens (`next`, ending at `periodEnd`) and,
 * for usage in arrears, the cycle that just ended (`rec`'s current period).
 */
export const renewalPeriods = (
  rec: Entities.SubscriptionRecord,
  next: Entities.SubscriptionRecord,
  periodEnd: number | null
): { readonly period: Span | undefined; readonly usagePeriod: Span | undefined } => {
  const ms = (t: Subscription["current_period_start"]) => (t === null ? null : DateTime.toEpochMillis(t))
  const start = ms(next.subscription.current_period_start)
  const prevStart = ms(rec.subscription.current_period_start)
  const prevEnd = ms(rec.subscription.current_period_end)
  return {
    period: start !== null && periodEnd !== null ? { start, end: periodEnd } : undefined,
    usagePeriod: prevStart !== null && prevEnd !== null ? { start: prevStart, end: prevEnd } : undefined
  }
}

/**
 * The service period of a subscription's first invoice, paid at `at`: its trial, else its first
 * cycle (none for a customer-initiated price).
 */
export const firstPeriod = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion, at: number): Span | undefined =>
  rec.trial_end !== null
    ? { start: at, end: rec.trial_end }
    : Option.getOrUndefined(BillingPeriod.period(scheduleOf({ ...rec, anchor: at }, pv), 0))

/** Paid cycles before `cycleIndex` (selects intro phases and counts fixed terms). */
export const paidIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) =>
  cycleIndex - (rec.trial_end !== null ? 1 : 0)

/** The period index of a cycle relative to the anchor. */
export const periodIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) => cycleIndex - rec.anchor_cycle

/**
 * What a whole period of `pv` × `quantity` costs this subscription before tax: the cycle price
 * (intro phase of `cycleIndex`, no usage) in the settlement currency, less its discounts. The
 * basis proration credits and charges (see docs/proration.md).
 */
export const fullCycle = (
  rec: Entities.SubscriptionRecord,
  pv: Price.PriceVersion,
  quantity: bigint,
  cycleIndex: number
): Money.Money => {
  const draft = convertDraft(
    Result.getOrThrow(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: pv,
        cycle_index: cycleIndex,
        paidCycles: paidIndex(rec, cycleIndex),
        quantity,
        usage: 0n,
        existing: []
      })
    ),
    rec.fx_rate,
    rec.currency
  )
  const t = Invoicing.total({
    invoice_type: "renewal",
    cycle_index: cycleIndex,
    currency: rec.currency,
    lines: draft.lines,
    discounts: discountRules(rec, cycleIndex)
  })
  const net = t.subtotal.amount - Invoicing.sumOfDiscounts(t.discounts)
  return Money.make(net > 0n ? net : 0n, rec.currency)
}

/** The basis of the plan in force (see {@link fullCycle}); records from before it existed use the current price. */
export const planBasis = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion) =>
  rec.plan_basis !== null
    ? Result.getOrThrow(Money.parse(rec.plan_basis, rec.currency))
    : fullCycle(rec, pv, BigInt(rec.subscription.quantity), rec.subscription.cycle_index)
