/**
 * Prices and their immutable versions, with the seed's field names, and the mapping from a
 * version to its rating model.
 *
 * @since 0.1.0
 */
import { Effect, Result, Option, Schema } from "effect"
import { Features } from "../entitlements/Entitlement.js"
import { BillingCycleUnit, IntervalUnit } from "../money/BillingPeriod.js"
import { Feature, Metadata, NullableString, QuantityTier, TierType, Timestamp, UsageTier } from "../kernel/Common.js"
import * as Decimal from "../money/Decimal.js"
import { PriceVersionStatus } from "../kernel/Lifecycle.js"
import * as Pricing from "../money/Pricing.js"
import type * as Money from "../money/Money.js"

/** @since 0.1.0 */
export const BillingType = Schema.Literals(["one_time", "recurring"])
/** @since 0.1.0 */
export const PriceType = Schema.Literals(["flat_price", "package_price", "based_on_usage"])
/** @since 0.1.0 */
export const ModelType = Schema.Literals(["per_unit", "tiers_price"])
/** @since 0.1.0 */
export const PaymentTiming = Schema.Literals(["prepaid", "postpaid"])
/** @since 0.1.0 */
export const BillingDimension = Schema.Literals(["quantity", "usage", "mixed"])
/** @since 0.1.0 */
export const DiscountType = Schema.Literals(["percentage", "amount"])

/**
 * `trial_period`.
 *
 * @since 0.1.0
 */
export class TrialPeriod extends Schema.Class<TrialPeriod>("TrialPeriod")({
  trial_period_unit: IntervalUnit,
  trial_period_count: Schema.Int
}) {}

/**
 * One introductory phase of a plan.
 *
 * @since 0.1.0
 */
export class PricePlanTier extends Schema.Class<PricePlanTier>("PricePlanTier")({
  period_count: Schema.Int,
  period_unit: Schema.String,
  original_price: Schema.String,
  due_price: Schema.String,
  discount_type: Schema.String,
  discount_value: Schema.String
}) {}

/**
 * `price_plan` of a recurring price.
 *
 * @since 0.1.0
 */
export class PricePlan extends Schema.Class<PricePlan>("PricePlan")({
  price_plan_id: Schema.String,
  plan_name: Schema.String,
  billing_cycle_unit: BillingCycleUnit,
  billing_cycle_count: Schema.Int,
  is_infinite: Schema.Boolean,
  base_price_val: Schema.String,
  plan_description: Schema.String,
  price_plan_tiers: Schema.Array(PricePlanTier)
}) {}

/**
 * A price version as the REST API returns it. `id` is the price id, `price_version_id` the
 * version's own id; a version is immutable once active.
 *
 * @since 0.1.0
 */
export class PriceVersion extends Schema.Class<PriceVersion>("PriceVersion")({
  id: Schema.String,
  price_name: Schema.String,
  price_alias: NullableString,
  product_id: Schema.String,
  merchant_id: Schema.String,
  currency: Schema.String,
  billing_type: BillingType,
  price_val: NullableString,
  description: NullableString,
  biz_status: PriceVersionStatus,
  created_at: Timestamp,
  price_type: PriceType,
  usage_amount: NullableString,
  usage_unit: NullableString,
  model_type: Schema.NullOr(ModelType),
  billing_threshold: NullableString,
  trial_amount: NullableString,
  price_version_id: Schema.String,
  product_version_id: NullableString,
  payment_timing: PaymentTiming,
  billing_dimension: BillingDimension,
  quantity_tier_type: Schema.NullOr(TierType),
  price_tier_type: Schema.NullOr(TierType),
  usage_threshold: NullableString,
  usage_unit_price: NullableString,
  quantity_unit: NullableString,
  merchant_price_id: NullableString,
  has_trial: Schema.Boolean,
  trial_type: Schema.NullOr(Schema.Literals([0, 1])),
  metadata: Metadata,
  trial_period: Schema.NullOr(TrialPeriod),
  price_plan: Schema.NullOr(PricePlan),
  quantity_tiers: Schema.Array(QuantityTier),
  usage_tiers: Schema.Array(UsageTier),
  features: Schema.Array(Feature),
  /**
   * What a subscription to this price version grants, over its product's (a price's value wins
   * for the same feature); `{}` on versions written before it existed. See `Entitlements`.
   */
  entitlements: Features.pipe(
    Schema.withDecodingDefault(Effect.succeed({})),
    Schema.withConstructorDefault(Effect.succeed({}))
  ),
  /**
   * The one customer a private price is sold to (set when the price is created, kept by every
   * version); `null` for a price of the public catalog. A private price is absent from catalog
   * lists unless they are asked for that customer, and another customer's checkout or change
   * finds no such price. See `Catalog.sellableVersion`.
   */
  customer_id: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * The billable metric a usage price rates (`BillableMetric`), or `null`: the seed's usage,
   * the `usage_count` summed over the cycle.
   */
  billable_metric_id: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * The metric's group this price rates: one value per `group_by` property of the metric
   * (`{ "region": "eu" }`); `null` without a metric or for a metric without grouping.
   */
  metric_group: Schema.NullOr(Schema.Record(Schema.String, Schema.String)).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  )
}) {}

/**
 * Whether a version is billed by a billable metric (issue 35): a usage price referencing one,
 * rated on the metric's aggregated value of the period (`usage/MetricUsage.ts`). A usage price
 * without one is the seed's metered price (its `usage_count` summed over the cycle).
 *
 * @since 0.1.0
 */
export const isMetricBased = (pv: PriceVersion): boolean =>
  pv.billing_dimension === "usage" && pv.billable_metric_id !== null

/**
 * Whether a version is the seed's metered price: billed by usage, without a billable metric
 * (at most one per subscription: its `usage_count` is recorded per subscription).
 *
 * @since 0.1.0
 */
export const isCountMetered = (pv: PriceVersion): boolean =>
  pv.billing_dimension === "usage" && pv.billable_metric_id === null

/**
 * Whether a version may be sold to `customerId`: a public price to anyone, a private one only to
 * its customer. `undefined` is the merchant's own view (no buyer yet to hide it from).
 *
 * @since 0.1.0
 */
export const visibleTo = (pv: { readonly customer_id: string | null }, customerId: string | null | undefined) =>
  pv.customer_id === null || customerId === undefined || pv.customer_id === customerId

const dec = (s: string | null | undefined): Decimal.Decimal =>
  s === null || s === undefined || s === "" ? Decimal.make(0n) : Result.getOrThrow(Decimal.parse(s))

const bound = (s: string): Option.Option<bigint> => (s.trim() === "" ? Option.none() : Option.some(BigInt(s)))

/**
 * Tiers of the seed (`quantity_tiers` or `usage_tiers`) as rating tiers.
 *
 * @since 0.1.0
 */
export const toTiers = (tiers: ReadonlyArray<QuantityTier | UsageTier>): ReadonlyArray<Pricing.Tier> =>
  tiers.map((t) =>
    "quantity_min" in t
      ? {
          min: BigInt(t.quantity_min || "0"),
          max: bound(t.quantity_max),
          unitPrice: dec(t.unit_price),
          flatAmount: dec(t.flat_amount)
        }
      : {
          min: BigInt(t.usage_min || "0"),
          max: bound(t.usage_max),
          unitPrice: dec(t.unit_price),
          flatAmount: dec(t.flat_amount)
        }
  )

/**
 * The price due per cycle before quantity: `price_val` (one-time) or the plan's phase price
 * for `cycleIndex`.
 *
 * @since 0.1.0
 */
export const cyclePrice = (pv: PriceVersion, cycleIndex: number): Decimal.Decimal => {
  if (pv.price_plan === null) return dec(pv.price_val)
  const phases = pv.price_plan.price_plan_tiers.map(
    (t): Pricing.Phase => ({
      periodCount: t.period_count,
      duePrice:
        t.due_price !== ""
          ? dec(t.due_price)
          : Pricing.discountedPrice(
              dec(t.original_price || pv.price_plan!.base_price_val),
              t.discount_type === "amount" ? "amount" : "percentage",
              dec(t.discount_value),
              pv.currency
            )
    })
  )
  return Pricing.phasePrice(phases, dec(pv.price_plan.base_price_val || pv.price_val), cycleIndex).price
}

/**
 * The rating model for a version in a cycle: what quantity (prepaid) or usage (postpaid)
 * costs.
 *
 * @since 0.1.0
 */
export const modelOf = (pv: PriceVersion, cycleIndex: number): Pricing.Model => {
  if (pv.price_type === "package_price") {
    return Pricing.Model.Package({ price: cyclePrice(pv, cycleIndex), size: BigInt(pv.usage_amount ?? "1") })
  }
  if (pv.price_type === "based_on_usage") {
    if (pv.model_type === "per_unit") {
      return Pricing.Model.PerUnit({
        unitPrice: dec(pv.usage_unit_price ?? pv.price_val),
        blockSize: BigInt(pv.billing_threshold ?? "1")
      })
    }
    return Pricing.Model.Tiered({ mode: pv.price_tier_type ?? "graduated", tiers: toTiers(pv.usage_tiers) })
  }
  if (pv.quantity_tiers.length > 0) {
    return Pricing.Model.Tiered({ mode: pv.quantity_tier_type ?? "graduated", tiers: toTiers(pv.quantity_tiers) })
  }
  return Pricing.Model.Flat({ price: cyclePrice(pv, cycleIndex) })
}

/**
 * The trial terms of a version, if it has a trial.
 *
 * @since 0.1.0
 */
export const trialOf = (
  pv: PriceVersion
): Option.Option<{ readonly trial: Pricing.Trial; readonly period: TrialPeriod }> =>
  pv.has_trial && pv.trial_period !== null
    ? Option.some({
        trial: pv.trial_type === 1 ? Pricing.Trial.Paid({ amount: dec(pv.trial_amount) }) : Pricing.Trial.Free(),
        period: pv.trial_period
      })
    : Option.none()

// ------------------------------------------------------------------ what a cycle can bill

/**
 * What one cycle of `pv` × `quantity` can bill, in the price's currency: each intro phase's
 * price, the base price, and a paid trial. Usage is bounded where it is recorded.
 */
export const cycleAmounts = (pv: PriceVersion, quantity: bigint): ReadonlyArray<Money.Money> => {
  const starts = [0]
  for (const t of pv.price_plan?.price_plan_tiers ?? []) starts.push(starts[starts.length - 1]! + t.period_count)
  const amounts =
    pv.billing_dimension === "usage"
      ? []
      : starts.map((i) => Pricing.rate(modelOf(pv, i), quantity, pv.currency).amount)
  const trial = trialOf(pv)
  if (Option.isSome(trial)) amounts.push(Pricing.trialCharge(trial.value.trial, pv.currency))
  return amounts
}
