/**
 * A billable metric as the merchant defines it (issue 35): a `code` usage events name, the
 * aggregation computed over a billing period's events (`Aggregation`), the event property it
 * reads, the filters an event must pass, the properties that split the value into groups priced
 * separately, and how long after a period ends its events still count. A usage price references
 * a metric (and one value per grouping property): see `BillableMetrics.forPrice`.
 *
 * @since 0.1.0
 */
import { Result, Schema } from "effect"
import { NullableString, Timestamp } from "../kernel/Common.js"
import * as Errors from "../kernel/Errors.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { BillableMetricStatus } from "../kernel/Lifecycle.js"
import * as Aggregation from "./Aggregation.js"

/**
 * A metric's code: 1 to 64 lowercase letters, digits and underscores, unique per merchant and
 * never changed (events name their metric by it).
 *
 * @since 0.1.0
 */
export const CODE_PATTERN = /^[a-z0-9_]{1,64}$/

/** Most filters one metric may have. @since 0.1.0 */
export const MAX_FILTERS = 10
/** Most values one filter may list. @since 0.1.0 */
export const MAX_FILTER_VALUES = 50
/** Most grouping properties one metric may have. @since 0.1.0 */
export const MAX_GROUP_BY = 3
/** The late window a metric gets when none is given, in days (Stripe meters' 35 days). @since 0.1.0 */
export const DEFAULT_LATE_WINDOW_DAYS = 35
/** The longest late window, in days. @since 0.1.0 */
export const MAX_LATE_WINDOW_DAYS = 365
/** Longest property name (of `property`, a filter's or a grouping's). @since 0.1.0 */
export const MAX_PROPERTY_LENGTH = 100
/** Longest filter value and longest group value of a price. @since 0.1.0 */
export const MAX_VALUE_LENGTH = 255

/**
 * `aggregation`: one of {@link Aggregation.aggregationTypes}.
 *
 * @since 0.1.0
 */
export const AggregationType = Schema.Literals(Aggregation.aggregationTypes)

/**
 * One filter of a metric: events count only when `property` has one of `values`.
 *
 * @since 0.1.0
 */
export class MetricFilter extends Schema.Class<MetricFilter>("MetricFilter")({
  property: Schema.String,
  values: Schema.Array(Schema.String)
}) {}

/**
 * A billable metric.
 *
 * @since 0.1.0
 */
export class BillableMetric extends Schema.Class<BillableMetric>("BillableMetric")({
  billable_metric_id: Schema.String,
  merchant_id: Schema.String,
  code: Schema.String,
  name: Schema.String,
  description: NullableString,
  aggregation: AggregationType,
  /** The event property read; `null` for `count`. */
  property: NullableString,
  filters: Schema.Array(MetricFilter),
  group_by: Schema.Array(Schema.String),
  /** How many days after a period ends its events still count (0 to 365). */
  late_window_days: Schema.Int,
  status: BillableMetricStatus,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/**
 * What a metric computes: the shape the storage port aggregates.
 *
 * @since 0.1.0
 */
export const specOf = (m: BillableMetric): Aggregation.AggregationSpec => ({
  aggregation: m.aggregation,
  property: m.property,
  filters: m.filters,
  group_by: m.group_by
})

/**
 * Moves a metric's `status` by `trigger` (the {@link Lifecycle.billableMetric} machine), with the
 * fields that change with it. The only way a metric's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  metric: BillableMetric,
  trigger: "update" | "archive",
  patch: Partial<Omit<BillableMetric, "status">> = {}
): Result.Result<Lifecycle.Moved<BillableMetric>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.billableMetric,
    metric.status,
    trigger,
    (to) => new BillableMetric({ ...metric, ...patch, status: to }, { disableChecks: true })
  )

// ------------------------------------------------------------------ the rules of a definition

/**
 * A filter as given.
 *
 * @since 0.1.0
 */
export interface FilterInput {
  readonly property?: string | undefined
  readonly values?: ReadonlyArray<string> | undefined
}

/**
 * A new metric as given: the merchant API's body (the contract's `MetricRequests.CreateBillableMetric`)
 * has these very fields and is taken as is; {@link checkNew} names the field a value breaks.
 *
 * @since 0.1.0
 */
export interface MetricCommand {
  readonly code?: string | undefined
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly aggregation?: string | undefined
  readonly property?: string | null | undefined
  readonly filters?: ReadonlyArray<FilterInput> | undefined
  readonly group_by?: ReadonlyArray<string> | undefined
  readonly late_window_days?: number | undefined
}

/**
 * The fields of a metric that may change: name, description (`null` clears it), filters
 * (replaced as a whole) and late window. Aggregation, property and grouping are fixed once the
 * metric exists (prices are priced on them), the code forever (events name the metric by it).
 *
 * @since 0.1.0
 */
export interface MetricUpdate {
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly filters?: ReadonlyArray<FilterInput> | undefined
  readonly late_window_days?: number | undefined
}

/**
 * A definition checked and normalised (names and values trimmed).
 *
 * @since 0.1.0
 */
export interface CheckedMetric {
  readonly code: string
  readonly name: string
  readonly description: string | null
  readonly aggregation: Aggregation.AggregationType
  readonly property: string | null
  readonly filters: ReadonlyArray<MetricFilter>
  readonly group_by: ReadonlyArray<string>
  readonly late_window_days: number
}

type Checked<A> = Result.Result<A, Errors.InvalidParameter>

const invalid = (param: string, reason: string, entry?: { readonly index: number; readonly field: string }) =>
  Result.fail(new Errors.InvalidParameter({ param, reason, ...(entry ? { entry } : {}) }))

const checkName = (name: string | undefined): Checked<string> => {
  const n = name?.trim() ?? ""
  return n === "" || n.length > 255 ? invalid("name", "is required (1 to 255 characters)") : Result.succeed(n)
}

const checkDescription = (d: string | null | undefined): Checked<string | null> => {
  const t = d?.trim() ?? ""
  if (t.length > 1000) return invalid("description", "must be at most 1000 characters")
  return Result.succeed(t === "" ? null : t)
}

const isPropertyName = (p: string) => p !== "" && p.length <= MAX_PROPERTY_LENGTH

const checkFilters = (filters: ReadonlyArray<FilterInput> | undefined): Checked<ReadonlyArray<MetricFilter>> => {
  const list = filters ?? []
  if (!Array.isArray(list)) return invalid("filters", "must be a list")
  if (list.length > MAX_FILTERS) return invalid("filters", `must have at most ${MAX_FILTERS} entries`)
  const out: Array<MetricFilter> = []
  const seen = new Set<string>()
  for (const [index, f] of list.entries()) {
    const property = typeof f?.property === "string" ? f.property.trim() : ""
    if (!isPropertyName(property))
      return invalid("filters", `is required (1 to ${MAX_PROPERTY_LENGTH} characters)`, { index, field: "property" })
    if (seen.has(property)) return invalid("filters", "filters this property twice", { index, field: "property" })
    seen.add(property)
    const values = f.values ?? []
    if (!Array.isArray(values) || values.length === 0 || values.length > MAX_FILTER_VALUES)
      return invalid("filters", `must list 1 to ${MAX_FILTER_VALUES} values`, { index, field: "values" })
    if (values.some((v) => typeof v !== "string" || v === "" || v.length > MAX_VALUE_LENGTH))
      return invalid("filters", `each value must be a string of 1 to ${MAX_VALUE_LENGTH} characters`, {
        index,
        field: "values"
      })
    out.push(new MetricFilter({ property, values: [...new Set(values)] }))
  }
  return Result.succeed(out)
}

const checkLateWindow = (days: number | undefined): Checked<number> =>
  days === undefined
    ? Result.succeed(DEFAULT_LATE_WINDOW_DAYS)
    : Number.isInteger(days) && days >= 0 && days <= MAX_LATE_WINDOW_DAYS
      ? Result.succeed(days)
      : invalid("late_window_days", `must be a whole number of days from 0 to ${MAX_LATE_WINDOW_DAYS}`)

/**
 * Checks a new metric, each refusal naming its field: a code of {@link CODE_PATTERN}, a name of
 * 1 to 255 characters, a known aggregation, a property for every aggregation but `count` (none
 * for `count`), at most {@link MAX_FILTERS} filters of 1 to {@link MAX_FILTER_VALUES} values,
 * at most {@link MAX_GROUP_BY} distinct grouping properties, a late window of 0 to 365 days.
 *
 * @example
 * BillableMetric.checkNew({ code: "api_calls", name: "API calls", aggregation: "count", group_by: ["region"] })
 * @since 0.1.0
 */
export const checkNew = (input: MetricCommand): Checked<CheckedMetric> =>
  Result.gen(function* () {
    const code = input.code ?? ""
    if (!CODE_PATTERN.test(code))
      return yield* invalid("code", "is required: 1 to 64 lowercase letters, digits and underscores")
    const name = yield* checkName(input.name)
    const description = yield* checkDescription(input.description)
    const aggregation = input.aggregation
    if (aggregation === undefined || !(Aggregation.aggregationTypes as ReadonlyArray<string>).includes(aggregation))
      return yield* invalid("aggregation", `is required: one of ${Aggregation.aggregationTypes.join(", ")}`)
    const agg = aggregation as Aggregation.AggregationType
    const property = typeof input.property === "string" ? input.property.trim() : null
    if (agg === "count" && property !== null && property !== "")
      return yield* invalid("property", "must be omitted for a count: it counts events")
    if (agg !== "count" && (property === null || !isPropertyName(property)))
      return yield* invalid("property", `is required for ${agg} (1 to ${MAX_PROPERTY_LENGTH} characters)`)
    const filters = yield* checkFilters(input.filters)
    const groupBy = input.group_by ?? []
    if (!Array.isArray(groupBy) || groupBy.length > MAX_GROUP_BY)
      return yield* invalid("group_by", `must list at most ${MAX_GROUP_BY} properties`)
    const group_by: Array<string> = []
    for (const [index, g] of groupBy.entries()) {
      const p = typeof g === "string" ? g.trim() : ""
      if (!isPropertyName(p))
        return yield* invalid("group_by", `must be a property name (1 to ${MAX_PROPERTY_LENGTH} characters)`, {
          index,
          field: ""
        })
      if (group_by.includes(p)) return yield* invalid("group_by", "lists this property twice", { index, field: "" })
      group_by.push(p)
    }
    const late_window_days = yield* checkLateWindow(input.late_window_days)
    return {
      code,
      name,
      description,
      aggregation: agg,
      property: agg === "count" ? null : property,
      filters,
      group_by,
      late_window_days
    }
  })

/**
 * Checks an update of `metric` as {@link checkNew} checks the same fields, and returns the
 * metric's fields after it (unchanged ones kept).
 *
 * @since 0.1.0
 */
export const checkUpdate = (
  metric: BillableMetric,
  input: MetricUpdate
): Checked<Pick<BillableMetric, "name" | "description" | "filters" | "late_window_days">> =>
  Result.gen(function* () {
    return {
      name: input.name === undefined ? metric.name : yield* checkName(input.name),
      description: input.description === undefined ? metric.description : yield* checkDescription(input.description),
      filters: input.filters === undefined ? metric.filters : yield* checkFilters(input.filters),
      late_window_days:
        input.late_window_days === undefined ? metric.late_window_days : yield* checkLateWindow(input.late_window_days)
    }
  })

/**
 * Why `group` (a usage price's `metric_group`) does not fit `metric`, or undefined when it does:
 * one value of 1 to {@link MAX_VALUE_LENGTH} characters for each of the metric's `group_by`
 * properties, no other key; no group (or an empty one) for a metric without grouping.
 *
 * @example
 * groupRefusal({ group_by: ["region"] }, { region: "eu" }) // undefined
 * groupRefusal({ group_by: ["region"] }, {}) // "must give a value for region"
 * @since 0.1.0
 */
export const groupRefusal = (
  metric: Pick<BillableMetric, "group_by">,
  group: Readonly<Record<string, string>> | null
): string | undefined => {
  const keys = Object.keys(group ?? {})
  const extra = keys.find((k) => !metric.group_by.includes(k))
  if (extra !== undefined)
    return metric.group_by.length === 0
      ? "the metric has no group_by: give no metric_group"
      : `${extra} is not one of the metric's group_by (${metric.group_by.join(", ")})`
  const missing = metric.group_by.find((k) => !keys.includes(k))
  if (missing !== undefined) return `must give a value for ${missing}`
  for (const k of keys) {
    const v = group![k]
    if (typeof v !== "string" || v === "" || v.length > MAX_VALUE_LENGTH)
      return `the value of ${k} must be a string of 1 to ${MAX_VALUE_LENGTH} characters`
  }
  return undefined
}
