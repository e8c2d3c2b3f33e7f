/**
 * Billable metrics' aggregations: what one metric computes over the usage events of one billing
 * period (issue 35). These are the shapes every layer agrees on — the metric definitions
 * (`BillableMetric`), the storage port that aggregates in the database (`MeterEvents`), and the
 * pricing of a metric's value. The semantics, fixed here and written down in docs/usage.md:
 *
 * | `aggregation` | value of a period | `property` |
 * |---|---|---|
 * | `count` | the number of events | ignored (`null`) |
 * | `sum` | Σ of the property's values | required, numeric |
 * | `max` | the largest value (0 with no event) | required, numeric |
 * | `unique_count` | the number of distinct values of the property | required, any scalar |
 * | `latest` | the value of the event with the latest timestamp (ties: the later ingested; 0 with none) | required, numeric |
 * | `weighted_sum` | Σ level × time held, in level-hours: each event states the level from its timestamp on (a gauge reading, e.g. GB stored); the level at the period's start is the last reading before it (0 without one) | required, numeric |
 *
 * Numeric property values are exact decimals (a JSON number written in plain notation, or a
 * decimal string), at most {@link MAX_SCALE} decimals and within ±{@link MAX_ABS_VALUE}; a value
 * that is not one refuses the event at ingestion. Values of an aggregation are decimal strings.
 * `weighted_sum` is the only aggregation that divides: level × milliseconds / 3,600,000, rounded
 * once, half-even, to {@link MAX_SCALE} decimals (its one rounding step).
 *
 * Filters keep the events whose property's value (as a string) is one of `values`; every filter
 * must hold. `group_by` splits the value by the listed properties' values (a missing property is
 * the group value `null`): one value per combination present in the period.
 *
 * @since 0.1.0
 */

/**
 * The aggregations a billable metric may use.
 *
 * @since 0.1.0
 */
export const aggregationTypes = ["count", "sum", "max", "unique_count", "latest", "weighted_sum"] as const

/**
 * @since 0.1.0
 */
export type AggregationType = (typeof aggregationTypes)[number]

/**
 * The most decimals a numeric property value (and an aggregated value) carries.
 *
 * @since 0.1.0
 */
export const MAX_SCALE = 6

/**
 * The largest absolute numeric property value one event may carry (10^12).
 *
 * @since 0.1.0
 */
export const MAX_ABS_VALUE = 1_000_000_000_000n

/**
 * One filter: the event's `property` must have one of `values` (compared as strings).
 *
 * @since 0.1.0
 */
export interface MetricFilter {
  readonly property: string
  readonly values: ReadonlyArray<string>
}

/**
 * What to compute over a period's events: the aggregation, the property it reads, the filters
 * and the grouping dimensions.
 *
 * @since 0.1.0
 */
export interface AggregationSpec {
  readonly aggregation: AggregationType
  /** The event property read; `null` for `count`. */
  readonly property: string | null
  readonly filters: ReadonlyArray<MetricFilter>
  readonly group_by: ReadonlyArray<string>
}

/**
 * One scalar property value of an event.
 *
 * @since 0.1.0
 */
export type PropertyValue = string | number | boolean

/**
 * One aggregated value: the group (one value per `group_by` property, in its order; empty
 * without grouping) and the value as an exact decimal string.
 *
 * @since 0.1.0
 */
export interface AggregatedValue {
  readonly group: ReadonlyArray<string | null>
  readonly value: string
  /** The number of events that matched (after filters) in this group. */
  readonly events: number
}
