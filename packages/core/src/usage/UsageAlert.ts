/**
 * Usage alerts and progressive billing (issue 35, item 5): what a merchant watches on a
 * subscription's open cycle, and the pure rules of when it fires.
 *
 * A **usage alert** watches one billable metric of one subscription: thresholds on the metric's
 * value (`value`) or on what its items bill so far (`amount`, in the subscription's settlement
 * currency). A threshold fires once per cycle when the cycle's value reaches it; a `recurring`
 * threshold fires again at each further multiple (100, 200, 300…). What fired is kept on the
 * alert (`cycle_index`, `fired`), so a check run twice fires nothing twice.
 *
 * A subscription's **usage billing** record holds its `progressive_billing_threshold` (an amount)
 * and what was invoiced early in the open cycle, per item (`billed`): the renewal deducts it.
 *
 * @since 0.1.0
 */
import { Result, Schema } from "effect"
import { NullableString, Timestamp } from "../kernel/Common.js"
import * as Errors from "../kernel/Errors.js"
import * as Decimal from "../money/Decimal.js"
import * as Money from "../money/Money.js"

/** Most thresholds one alert may have. @since 0.1.0 */
export const MAX_THRESHOLDS = 20

/** Most alerts one subscription may have. @since 0.1.0 */
export const MAX_ALERTS_PER_SUBSCRIPTION = 25

/** A threshold's measure: the metric's aggregated value, or what its items bill. @since 0.1.0 */
export const ThresholdType = Schema.Literals(["value", "amount"])

/** @since 0.1.0 */
export type ThresholdType = typeof ThresholdType.Type

/**
 * One threshold: fires when the cycle's `type` reaches `value` (a decimal for `value`, an amount
 * in the subscription's currency for `amount`); a `recurring` one at each multiple of it.
 *
 * @since 0.1.0
 */
export class Threshold extends Schema.Class<Threshold>("UsageAlertThreshold")({
  type: ThresholdType,
  value: Schema.String,
  recurring: Schema.Boolean
}) {}

/**
 * A usage alert. `cycle_index` is the cycle its `fired` keys belong to (`null` before any);
 * a key is `type:value` for a plain threshold and `type:value×k` for the k-th multiple of a
 * recurring one.
 *
 * @since 0.1.0
 */
export class UsageAlert extends Schema.Class<UsageAlert>("UsageAlert")({
  usage_alert_id: Schema.String,
  merchant_id: Schema.String,
  subscription_id: Schema.String,
  customer_id: Schema.String,
  billable_metric_id: Schema.String,
  metric_code: Schema.String,
  name: NullableString,
  /** The currency of `amount` thresholds: the subscription's settlement currency. */
  currency: Schema.String,
  thresholds: Schema.Array(Threshold),
  cycle_index: Schema.NullOr(Schema.Int),
  fired: Schema.Array(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/**
 * One amount invoiced early for an item in the open cycle (minor units, as text).
 *
 * @since 0.1.0
 */
export class BilledItem extends Schema.Class<BilledItem>("ProgressiveBilledItem")({
  item_id: Schema.String,
  description: Schema.String,
  amount_minor: Schema.String
}) {}

/**
 * A subscription's usage billing record (its id is the subscription's): the progressive billing
 * threshold (an amount in `currency`, `null`: off), how many alerts watch the subscription (the
 * ingestion schedules a check only for a watched one), and what progressive invoices billed in
 * cycle `cycle_index` (`closed` once its renewal deducted it).
 *
 * @since 0.1.0
 */
export class UsageBilling extends Schema.Class<UsageBilling>("UsageBilling")({
  subscription_id: Schema.String,
  merchant_id: Schema.String,
  currency: Schema.String,
  progressive_billing_threshold: NullableString,
  alerts: Schema.Int,
  cycle_index: Schema.NullOr(Schema.Int),
  billed: Schema.Array(BilledItem),
  invoice_ids: Schema.Array(Schema.String),
  closed: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}) {
  /** Whether anything on the subscription needs a check after its usage changes. */
  get watched(): boolean {
    return this.alerts > 0 || this.progressive_billing_threshold !== null
  }
}

/**
 * A threshold as sent (loosely typed: {@link checkThresholds} names what is wrong).
 *
 * @since 0.1.0
 */
export interface ThresholdInput {
  readonly type?: string | undefined
  readonly value?: string | number | undefined
  readonly recurring?: boolean | undefined
}

/**
 * The thresholds of a new alert, checked: 1 to {@link MAX_THRESHOLDS}, each `value` or `amount`,
 * a positive number (an `amount` with at most the currency's decimals; a `value` with at most 6),
 * no two alike, at most one recurring. `InvalidParameter` naming `thresholds[i].field`.
 *
 * @example
 * checkThresholds([{ type: "amount", value: "80.00" }], "USD") // Result.succeed([Threshold{amount, "80.00", false}])
 * @since 0.1.0
 */
export const checkThresholds = (
  input: ReadonlyArray<ThresholdInput> | undefined,
  currency: string
): Result.Result<ReadonlyArray<Threshold>, Errors.InvalidParameter> => {
  const bad = (param: string, reason: string, entry?: { readonly index: number; readonly field: string }) =>
    Result.fail(new Errors.InvalidParameter({ param, reason, ...(entry !== undefined ? { entry } : {}) }))
  if (input === undefined || input.length === 0) return bad("thresholds", "at least one threshold is required")
  if (input.length > MAX_THRESHOLDS) return bad("thresholds", `at most ${MAX_THRESHOLDS} thresholds`)
  const out: Array<Threshold> = []
  for (let i = 0; i < input.length; i++) {
    const t = input[i]!
    if (t.type !== "value" && t.type !== "amount")
      return bad("thresholds", 'must be "value" or "amount"', { index: i, field: "type" })
    const text = typeof t.value === "number" ? String(t.value) : t.value
    if (text === undefined) return bad("thresholds", "is required", { index: i, field: "value" })
    let normalized: string
    if (t.type === "amount") {
      const m = Money.parse(text, currency)
      if (Result.isFailure(m) || m.success.amount <= 0n)
        return bad("thresholds", `must be a positive amount in ${currency}`, { index: i, field: "value" })
      normalized = Money.format(m.success)
    } else {
      const d = Decimal.parse(text)
      if (Result.isFailure(d) || d.success.value <= 0n || Decimal.normalize(d.success).scale > 6)
        return bad("thresholds", "must be a positive number with at most 6 decimals", { index: i, field: "value" })
      normalized = Decimal.format(Decimal.normalize(d.success))
    }
    const th = new Threshold({ type: t.type, value: normalized, recurring: t.recurring === true })
    if (out.some((o) => o.type === th.type && o.value === th.value && o.recurring === th.recurring))
      return bad("thresholds", "is given twice", { index: i, field: "" })
    out.push(th)
  }
  if (out.filter((t) => t.recurring).length > 1) return bad("thresholds", "at most one threshold is recurring")
  return Result.succeed(out)
}

/**
 * A threshold the cycle reached and that had not fired: its key, and the level crossed (for a
 * recurring one, the highest multiple reached).
 *
 * @since 0.1.0
 */
export interface Crossing {
  readonly threshold: Threshold
  readonly key: string
  /** The level crossed: the threshold's value, or `k ×` it for a recurring one. */
  readonly level: string
}

/** `d` as an integer count of millionths (values carry at most 6 decimals). */
const micros = (d: Decimal.Decimal): bigint => Decimal.rescale(d, 6).value

/**
 * The thresholds of `alert` that the cycle's `value` (decimal text) and `amount` (minor units in
 * the alert's currency) reach and that did not fire in this cycle (`fired`, the keys of the
 * alert's current cycle). Reaching is `≥`. A recurring threshold crosses its k-th multiple, k the
 * largest with k × value ≤ the measure, when `…×k` did not fire: one crossing even if several
 * multiples were passed at once.
 *
 * @example
 * crossings(alert, "120", 0n, []) // a value threshold of 100 fires once: [{ key: "value:100", level: "100" }]
 * @since 0.1.0
 */
export const crossings = (
  alert: UsageAlert,
  value: string,
  amountMinor: bigint,
  fired: ReadonlyArray<string>
): ReadonlyArray<Crossing> => {
  const measured = Result.getOrElse(Decimal.parse(value), () => Decimal.make(0n))
  const out: Array<Crossing> = []
  for (const t of alert.thresholds) {
    const [have, unit] =
      t.type === "value"
        ? [micros(measured), micros(Result.getOrThrow(Decimal.parse(t.value)))]
        : [amountMinor, Result.getOrThrow(Money.parse(t.value, alert.currency)).amount]
    if (unit <= 0n || have < unit) continue
    if (!t.recurring) {
      const key = `${t.type}:${t.value}`
      if (!fired.includes(key)) out.push({ threshold: t, key, level: t.value })
      continue
    }
    const k = have / unit
    const key = `${t.type}:${t.value}×${k}`
    if (fired.includes(key)) continue
    const level =
      t.type === "value"
        ? Decimal.format(Decimal.normalize(Decimal.make(unit * k, 6)))
        : Money.format(Money.make(unit * k, alert.currency))
    out.push({ threshold: t, key, level })
  }
  return out
}

/**
 * The payload of `v2.usage_alert.triggered`: the alert (after it fired), the threshold and level
 * crossed, the cycle's value and amount when the check saw them, and the cycle.
 *
 * @since 0.1.0
 */
export class UsageAlertTriggered extends Schema.Class<UsageAlertTriggered>("UsageAlertTriggered")({
  usage_alert: UsageAlert,
  threshold: Threshold,
  level: Schema.String,
  value: Schema.String,
  amount: Schema.String,
  currency: Schema.String,
  cycle_index: Schema.Int,
  period_start: NullableString,
  period_end: NullableString,
  triggered_at: Schema.String
}) {}

/**
 * The payload of `v2.usage_alert.resolved`: the alert (reset for the new cycle), the cycle whose
 * crossings ended, and the keys that had fired in it.
 *
 * @since 0.1.0
 */
export class UsageAlertResolved extends Schema.Class<UsageAlertResolved>("UsageAlertResolved")({
  usage_alert: UsageAlert,
  ended_cycle_index: Schema.Int,
  fired: Schema.Array(Schema.String),
  resolved_at: Schema.String
}) {}
