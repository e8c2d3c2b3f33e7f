/**
 * Every rule the seed and the contract put on a price, in one validation function. A price is
 * given in the shape it is stored in (`Price.PriceVersion`'s fields: the domain's own words, not
 * a request's). Each failure names the price's field — for an entry of a tier list, the list,
 * the entry's index and the tier's field; all failures are reported, the first one first.
 *
 * @since 0.1.0
 */
import { Result, Schema } from "effect"
import { BillingCycleUnit, IntervalUnit } from "../money/BillingPeriod.js"
import { Feature, Metadata, QuantityTier, TierType, UsageTier } from "../kernel/Common.js"
import * as Decimal from "../money/Decimal.js"
import * as Money from "../money/Money.js"
import { PriceVersionStatus } from "../kernel/Lifecycle.js"
import { BillingDimension, BillingType, ModelType, PaymentTiming, PriceType } from "./Price.js"

/**
 * The lists of tiers a price has: its plan's introductory phases (`price_plan.price_plan_tiers`),
 * its quantity tiers and its usage tiers.
 *
 * @since 0.1.0
 */
export const TierList = Schema.Literals(["price_plan_tiers", "quantity_tiers", "usage_tiers"])

/**
 * @since 0.1.0
 */
export type TierList = typeof TierList.Type

/**
 * One broken rule. `field` is the price's field at fault (`currency`, `price_plan.base_price_val`)
 * or, with `tier`, the field of the tier at `tier.index` in `tier.list` (`due_price`, `min`).
 *
 * @since 0.1.0
 */
export class Issue extends Schema.Class<Issue>("Issue")({
  field: Schema.String,
  tier: Schema.optional(Schema.Struct({ list: TierList, index: Schema.Number })),
  message: Schema.String
}) {}

/**
 * A price that breaks one or more rules, the first issue first. Not one of `Errors.RecurError`:
 * the front doors that took the price (the contract's `Requests.refusal`) answer it as the
 * parameter of their own request it is about.
 *
 * @since 0.1.0
 */
export class PriceRuleViolation extends Schema.TaggedError<PriceRuleViolation>()("PriceRuleViolation", {
  issues: Schema.NonEmptyArray(Issue)
}) {
  override get message() {
    return this.issues
      .map((i) => `${i.tier ? `${i.tier.list} #${i.tier.index} ` : ""}${i.field}: ${i.message}`)
      .join("; ")
  }
}

/**
 * The plan of a recurring price, as sent.
 *
 * @since 0.1.0
 */
export const PricePlanInput = Schema.Struct({
  plan_name: Schema.optional(Schema.String),
  billing_cycle_unit: Schema.optional(Schema.String),
  billing_cycle_count: Schema.optional(Schema.Finite),
  is_infinite: Schema.optional(Schema.Boolean),
  base_price_val: Schema.optional(Schema.String),
  plan_description: Schema.optional(Schema.String),
  price_plan_tiers: Schema.optional(
    Schema.Array(
      Schema.Struct({
        period_count: Schema.Finite,
        period_unit: Schema.optional(Schema.String),
        original_price: Schema.optional(Schema.String),
        due_price: Schema.optional(Schema.String),
        discount_type: Schema.optional(Schema.String),
        discount_value: Schema.optional(Schema.String)
      })
    )
  )
})

/**
 * A new price as given (the merchant API's body, its names). Loosely typed on purpose: the
 * rules below produce field-named errors instead of a generic decode failure.
 *
 * @since 0.1.0
 */
export const PriceInput = Schema.Struct({
  name: Schema.optional(Schema.String),
  product_id: Schema.optional(Schema.String),
  product_version_id: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  billing_type: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  price_type: Schema.optional(Schema.String),
  model_type: Schema.optional(Schema.String),
  billing_threshold: Schema.optional(Schema.String),
  trial_type: Schema.optional(Schema.Finite),
  status: Schema.optional(Schema.String),
  payment_timing: Schema.optional(Schema.String),
  billing_dimension: Schema.optional(Schema.String),
  merchant_price_id: Schema.optional(Schema.String),
  price_val: Schema.optional(Schema.String),
  has_trial: Schema.optional(Schema.Boolean),
  trial_period: Schema.optional(Schema.Struct({ trial_period_unit: Schema.String, trial_period_count: Schema.Finite })),
  price_plan: Schema.optional(PricePlanInput),
  usage_amount: Schema.optional(Schema.String),
  usage_unit: Schema.optional(Schema.String),
  usage_unit_price: Schema.optional(Schema.String),
  usage_threshold: Schema.optional(Schema.String),
  features: Schema.optional(Schema.Array(Feature)),
  trial_amount: Schema.optional(Schema.String),
  quantity_unit: Schema.optional(Schema.String),
  quantity_tiers: Schema.optional(Schema.Array(QuantityTier)),
  quantity_tier_type: Schema.optional(Schema.String),
  usage_tiers: Schema.optional(Schema.Array(UsageTier)),
  price_tier_type: Schema.optional(Schema.String),
  metadata: Schema.optional(Metadata),
  /** The one customer a private price is sold to (set at creation only; checked by `Catalog`). */
  customer_id: Schema.optional(Schema.String),
  /** What a subscription to the price grants (checked by `Catalog`: `Entitlement.invalidFeatures`). */
  entitlements: Schema.optional(Schema.Record(Schema.String, Schema.Union([Schema.Boolean, Schema.Number]))),
  /**
   * The billable metric a usage price rates (its id or its code; stored as the id), checked by
   * `Catalog` (`BillableMetrics.forPrice`). Absent: the seed's `usage_count` sum.
   */
  billable_metric_id: Schema.optional(Schema.NullOr(Schema.String)),
  /** One value per grouping property of the metric (`{ "region": "eu" }`): the group this price rates. */
  metric_group: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.String)))
})

/**
 * @since 0.1.0
 */
export type PriceInput = typeof PriceInput.Type

/**
 * A price input that passed every rule, with defaults applied and `merchant_price_id` trimmed.
 *
 * @since 0.1.0
 */
export type ValidPrice = PriceInput & {
  readonly name: string
  readonly product_id: string
  readonly currency: string
  readonly billing_type: typeof BillingType.Type
  readonly price_type: typeof PriceType.Type
  readonly status: typeof PriceVersionStatus.Type
  readonly payment_timing: typeof PaymentTiming.Type
  readonly billing_dimension: "quantity" | "usage"
  readonly has_trial: boolean
}

/** The most tiers a price may have. */
export const MAX_TIERS = 10
/** `merchant_price_id` limits. */
export const MERCHANT_PRICE_ID = /^[A-Za-z0-9_\-.:/]{1,100}$/
/** Subscription quantity bounds. */
export const MIN_QUANTITY = 1n
/** @since 0.1.0 */
export const MAX_QUANTITY = 999_999_999n

/**
 * A unit price or tier amount: a non-negative decimal of at most 12 whole digits and 12
 * decimals (sub-cent unit prices are allowed; the invoice line is rounded once).
 */
const BOUNDED_DECIMAL = /^\d{1,12}(\.\d{1,12})?$/
const DECIMAL_RULE = "must be a non-negative decimal of at most 12 digits before and 12 after the point"

const is = <A>(schema: Schema.Codec<A, any>) => Schema.is(schema as Schema.Schema<A>)
const isInt = (s: string | undefined): boolean => s !== undefined && /^\d+$/.test(s)

/**
 * Checks a quantity (seats, units): a whole number in 1..999999999.
 *
 * @since 0.1.0
 */
export const validateQuantity = (field: string, value: string | number | undefined): Result.Result<bigint, Issue> => {
  const text = typeof value === "number" ? (Number.isInteger(value) ? String(value) : "x") : value
  if (text === undefined || !/^\d{1,10}$/.test(text)) {
    return Result.fail(new Issue({ field, message: "must be a whole number from 1 to 999999999" }))
  }
  const q = BigInt(text)
  return q < MIN_QUANTITY || q > MAX_QUANTITY
    ? Result.fail(new Issue({ field, message: "must be a whole number from 1 to 999999999" }))
    : Result.succeed(q)
}

/**
 * Checks and trims a `merchant_price_id`.
 *
 * @since 0.1.0
 */
export const validateMerchantPriceId = (value: string): Result.Result<string, Issue> => {
  const trimmed = value.trim()
  return MERCHANT_PRICE_ID.test(trimmed)
    ? Result.succeed(trimmed)
    : Result.fail(
        new Issue({
          field: "merchant_price_id",
          message: "must be 1 to 100 characters of letters, digits and _ - . : /"
        })
      )
}

/**
 * Checks tier bounds: at most 10, ordered and contiguous (min = previous max + 1), the first
 * starting at 0 or 1, only the last open-ended, prices non-negative decimals. An issue with the
 * list as a whole names the list; one with an entry names the entry (`tier`) and `min`, `max`,
 * `unit_price` or `flat_amount`.
 *
 * @since 0.1.0
 */
export const validateTiers = (
  field: "quantity_tiers" | "usage_tiers",
  tiers: ReadonlyArray<{
    readonly min: string
    readonly max: string
    readonly unit_price: string
    readonly flat_amount: string
  }>
): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  if (tiers.length === 0) return [new Issue({ field, message: "needs at least one tier" })]
  if (tiers.length > MAX_TIERS) issues.push(new Issue({ field, message: `has more than ${MAX_TIERS} tiers` }))
  let previousMax: bigint | undefined
  tiers.forEach((t, i) => {
    const at = (tierField: string, message: string) =>
      issues.push(new Issue({ field: tierField, tier: { list: field, index: i }, message }))
    if (!isInt(t.min)) {
      at("min", "must be a whole number")
      return
    }
    const min = BigInt(t.min)
    if (i === 0 && min > 1n) at("min", "the first tier starts at 0 or 1")
    if (i > 0 && previousMax !== undefined && min !== previousMax + 1n) {
      at("min", `must be ${previousMax + 1n} (the previous tier's max + 1)`)
    }
    const last = i === tiers.length - 1
    if (t.max.trim() === "") {
      if (!last) at("max", "only the last tier may be open-ended")
      previousMax = undefined
    } else if (!isInt(t.max) || BigInt(t.max) < min) {
      at("max", "must be a whole number not below min")
    } else {
      previousMax = BigInt(t.max)
      if (last) at("max", "the last tier must be open-ended (empty max)")
    }
    for (const k of ["unit_price", "flat_amount"] as const) {
      const v = t[k]
      if (v !== "" && !BOUNDED_DECIMAL.test(v)) at(k, DECIMAL_RULE)
    }
  })
  return issues
}

const seedTiers = (tiers: ReadonlyArray<QuantityTier | UsageTier>) =>
  tiers.map((t) =>
    "quantity_min" in t
      ? { min: t.quantity_min, max: t.quantity_max, unit_price: t.unit_price, flat_amount: t.flat_amount }
      : { min: t.usage_min, max: t.usage_max, unit_price: t.unit_price, flat_amount: t.flat_amount }
  )

/**
 * Validates a price against every rule of the seed and the contract.
 *
 * @example
 * PriceRules.validate({ name: "Pro", product_id, currency: "USD", billing_type: "one_time",
 *   price_type: "flat_price" }) // Left: price_val is required when billing_type is one_time
 * @since 0.1.0
 */
export const validate = (input: PriceInput): Result.Result<ValidPrice, PriceRuleViolation> => {
  const issues: Array<Issue> = []
  /** A broken rule on the price's `field`, or on the field of the plan's phase at `phase`. */
  const fail = (field: string, message: string, phase?: number) =>
    issues.push(
      new Issue({
        field,
        message,
        ...(phase !== undefined ? { tier: { list: "price_plan_tiers", index: phase } } : {})
      })
    )
  const amount = (field: string, value: string | undefined, currency: string | undefined, phase?: number) => {
    if (value === undefined || currency === undefined || !Money.currencyCodes().includes(currency)) return
    const r = Money.parse(value, currency)
    if (Result.isFailure(r)) fail(field, r.failure.message, phase)
    else if (!Money.isWithinBounds(r.success))
      fail(field, `must be at most ${Money.format(Money.make(Money.MAX_AMOUNT_MINOR, currency))}`, phase)
  }
  const decimal = (field: string, value: string | undefined, phase?: number) => {
    if (value !== undefined && !BOUNDED_DECIMAL.test(value)) fail(field, DECIMAL_RULE, phase)
  }

  if (!input.name || input.name.trim() === "") fail("name", "is required")
  if (!input.product_id) fail("product_id", "is required")
  if (!input.currency) fail("currency", "is required")
  else if (Result.isFailure(Money.currency(input.currency))) fail("currency", `unknown currency "${input.currency}"`)
  if (!input.billing_type) fail("billing_type", "is required")
  else if (!is(BillingType)(input.billing_type)) fail("billing_type", "must be one_time or recurring")
  if (!input.price_type) fail("price_type", "is required")
  else if (!is(PriceType)(input.price_type)) fail("price_type", "must be flat_price, package_price or based_on_usage")
  if (input.status !== undefined && !is(PriceVersionStatus)(input.status))
    fail("status", "must be draft, active or frozen")
  if (input.model_type !== undefined && !is(ModelType)(input.model_type))
    fail("model_type", "must be per_unit or tiers_price")

  const timing = input.payment_timing ?? "prepaid"
  const dimension = input.billing_dimension ?? "quantity"
  if (!is(PaymentTiming)(timing)) fail("payment_timing", "must be prepaid or postpaid")
  if (!is(BillingDimension)(dimension)) fail("billing_dimension", "must be quantity or usage")
  else if (dimension === "mixed") fail("billing_dimension", "mixed is reserved and not accepted")
  else if (
    is(PaymentTiming)(timing) &&
    !((timing === "prepaid" && dimension === "quantity") || (timing === "postpaid" && dimension === "usage"))
  ) {
    fail(
      "billing_dimension",
      `${timing} with ${dimension} is not accepted: use (prepaid, quantity) or (postpaid, usage)`
    )
  }

  if (input.billing_type === "one_time") {
    if (input.price_val === undefined) fail("price_val", "is required when billing_type is one_time")
    else amount("price_val", input.price_val, input.currency)
  }
  if (input.price_val !== undefined && input.billing_type !== "one_time")
    amount("price_val", input.price_val, input.currency)

  if (input.billing_type === "recurring") {
    const plan = input.price_plan
    if (plan === undefined) fail("price_plan", "is required when billing_type is recurring")
    else {
      if (plan.billing_cycle_unit === undefined) fail("price_plan.billing_cycle_unit", "is required")
      else if (!is(BillingCycleUnit)(plan.billing_cycle_unit)) {
        fail(
          "price_plan.billing_cycle_unit",
          "must be week, month, quarter, year, customer-initiated or over_threshold"
        )
      }
      const count = plan.billing_cycle_count ?? 1
      if (!Number.isInteger(count) || count < 1 || count > 365)
        fail("price_plan.billing_cycle_count", "must be a whole number from 1 to 365")
      if (
        plan.base_price_val === undefined &&
        input.price_val === undefined &&
        input.price_type === "flat_price" &&
        (input.quantity_tiers ?? []).length === 0
      ) {
        fail("price_plan.base_price_val", "is required for a flat recurring price")
      }
      amount("price_plan.base_price_val", plan.base_price_val, input.currency)
      ;(plan.price_plan_tiers ?? []).forEach((t, i) => {
        if (!Number.isInteger(t.period_count) || t.period_count < 1)
          fail("period_count", "must be a whole number ≥ 1", i)
        if (t.due_price !== undefined && t.due_price !== "") amount("due_price", t.due_price, input.currency, i)
        else if (t.discount_type === undefined || t.discount_value === undefined) {
          fail("due_price", "is required unless discount_type and discount_value are given", i)
        } else {
          if (t.discount_type !== "percentage" && t.discount_type !== "amount")
            fail("discount_type", "must be percentage or amount", i)
          decimal("discount_value", t.discount_value, i)
          if (
            t.discount_type === "percentage" &&
            /^\d+(\.\d+)?$/.test(t.discount_value) &&
            Decimal.compare(Result.getOrThrow(Decimal.parse(t.discount_value)), Decimal.make(100n)) > 0
          ) {
            fail("discount_value", "a percentage is at most 100", i)
          }
        }
      })
      if (plan.billing_cycle_unit === "over_threshold") {
        if (input.usage_threshold === undefined)
          fail("usage_threshold", "is required when billing_cycle_unit is over_threshold")
        if (timing !== "postpaid" || dimension !== "usage")
          fail(
            "price_plan.billing_cycle_unit",
            "over_threshold needs payment_timing postpaid and billing_dimension usage"
          )
      }
    }
  } else if (input.price_plan !== undefined && input.billing_type === "one_time") {
    fail("price_plan", "is only for recurring prices")
  }

  if (input.price_type === "based_on_usage") {
    if (input.model_type === undefined) fail("model_type", "is required when price_type is based_on_usage")
    if (input.model_type === "per_unit") {
      if (input.billing_threshold === undefined) fail("billing_threshold", "is required when model_type is per_unit")
      else if (!isInt(input.billing_threshold) || BigInt(input.billing_threshold) < 1n)
        fail("billing_threshold", "must be a whole number ≥ 1")
      if (input.usage_unit_price === undefined) fail("usage_unit_price", "is required when model_type is per_unit")
      else decimal("usage_unit_price", input.usage_unit_price)
    }
    if (input.model_type === "tiers_price") {
      if (!input.usage_tiers || input.usage_tiers.length === 0)
        fail("usage_tiers", "is required when model_type is tiers_price")
      if (input.price_tier_type !== undefined && !is(TierType)(input.price_tier_type))
        fail("price_tier_type", "must be graduated or volume")
    }
  }
  if (input.price_type === "based_on_usage" || input.price_type === "package_price") {
    if (input.usage_amount === undefined) fail("usage_amount", `is required when price_type is ${input.price_type}`)
    else if (!isInt(input.usage_amount) || BigInt(input.usage_amount) < 1n)
      fail("usage_amount", "must be a whole number ≥ 1")
    if (input.usage_unit === undefined || input.usage_unit.trim() === "")
      fail("usage_unit", `is required when price_type is ${input.price_type}`)
  }
  if (input.usage_threshold !== undefined && (!isInt(input.usage_threshold) || BigInt(input.usage_threshold) < 1n)) {
    fail("usage_threshold", "must be a whole number ≥ 1")
  }
  if (input.usage_tiers && input.usage_tiers.length > 0)
    issues.push(...validateTiers("usage_tiers", seedTiers(input.usage_tiers)))
  if (input.quantity_tiers && input.quantity_tiers.length > 0)
    issues.push(...validateTiers("quantity_tiers", seedTiers(input.quantity_tiers)))
  if (input.quantity_tier_type !== undefined && !is(TierType)(input.quantity_tier_type))
    fail("quantity_tier_type", "must be graduated or volume")

  const hasTrial = input.has_trial ?? false
  if (input.trial_type !== undefined && input.trial_type !== 0 && input.trial_type !== 1)
    fail("trial_type", "must be 0 (free) or 1 (paid)")
  if (hasTrial) {
    if (input.billing_type === "one_time") fail("has_trial", "a one-time price has no trial")
    if (input.trial_period === undefined) fail("trial_period", "is required when has_trial is true")
    else {
      if (!is(IntervalUnit)(input.trial_period.trial_period_unit))
        fail("trial_period.trial_period_unit", "must be day, week, month, quarter or year")
      const c = input.trial_period.trial_period_count
      if (!Number.isInteger(c) || c < 1 || c > 730)
        fail("trial_period.trial_period_count", "must be a whole number from 1 to 730")
    }
  }
  if (input.trial_type === 1) {
    if (input.trial_amount === undefined) fail("trial_amount", "is required when trial_type is 1")
    else amount("trial_amount", input.trial_amount, input.currency)
  }

  const metric = input.billable_metric_id ?? null
  if (metric !== null && dimension !== "usage")
    fail("billable_metric_id", "a billable metric is referenced by a usage price only (billing_dimension usage)")
  if (metric !== null && metric.trim() === "") fail("billable_metric_id", "must be a billable metric's id or code")
  if (metric === null && input.metric_group != null)
    fail("metric_group", "needs billable_metric_id: it is a group of that metric")

  let merchantPriceId = input.merchant_price_id
  if (merchantPriceId !== undefined) {
    const r = validateMerchantPriceId(merchantPriceId)
    if (Result.isFailure(r)) issues.push(r.failure)
    else merchantPriceId = r.success
  }

  const [first, ...rest] = issues
  if (first) return Result.fail(new PriceRuleViolation({ issues: [first, ...rest] }))
  return Result.succeed({
    ...input,
    ...(merchantPriceId !== undefined ? { merchant_price_id: merchantPriceId } : {}),
    name: input.name!.trim(),
    product_id: input.product_id!,
    currency: input.currency!,
    billing_type: input.billing_type as ValidPrice["billing_type"],
    price_type: input.price_type as ValidPrice["price_type"],
    status: (input.status ?? "active") as ValidPrice["status"],
    payment_timing: timing as ValidPrice["payment_timing"],
    billing_dimension: dimension as ValidPrice["billing_dimension"],
    has_trial: hasTrial
  })
}
