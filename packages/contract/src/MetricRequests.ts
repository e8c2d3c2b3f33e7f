/**
 * The merchant API's billable-metric bodies (issue 35): a new metric
 * (`POST /api/v1/billable_metrics`) and an update (`POST /api/v1/billable_metrics/{id}`). Loosely
 * typed on purpose, as core's `BillableMetric.MetricCommand` takes them: the engine's checks name
 * the field a value breaks. The REST adapter and the Promise facade decode the same way.
 *
 * @since 0.1.0
 */
import { BillableMetric, Errors } from "@recur/core"
import { Effect, Schema } from "effect"

const Filters = Schema.Array(
  Schema.Struct({
    property: Schema.optional(Schema.String),
    values: Schema.optional(Schema.Array(Schema.String))
  })
)

/**
 * The body of a new billable metric: `code` (1 to 64 of `a-z 0-9 _`, unique per merchant),
 * `name`, `description`, `aggregation` (`count`, `sum`, `max`, `unique_count`, `latest`,
 * `weighted_sum`), `property` (none for `count`), `filters` (at most 10: a property and 1 to 50
 * values), `group_by` (at most 3 properties) and `late_window_days` (0 to 365, default 35).
 *
 * @since 0.1.0
 */
export const CreateBillableMetric = Schema.Struct({
  code: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.NullOr(Schema.String)),
  aggregation: Schema.optional(Schema.String),
  property: Schema.optional(Schema.NullOr(Schema.String)),
  filters: Schema.optional(Filters),
  group_by: Schema.optional(Schema.Array(Schema.String)),
  late_window_days: Schema.optional(Schema.Int)
})

/** @since 0.1.0 */
export type CreateBillableMetric = typeof CreateBillableMetric.Type

/**
 * The body of a metric's update: `name`, `description` (`null` clears it), `filters` (replaced
 * as a whole) and `late_window_days`. The other fields of a metric are fixed: sent, they are
 * refused by {@link updateCommand}, not ignored.
 *
 * @since 0.1.0
 */
export const UpdateBillableMetric = Schema.Struct({
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.NullOr(Schema.String)),
  filters: Schema.optional(Filters),
  late_window_days: Schema.optional(Schema.Int),
  code: Schema.optional(Schema.Unknown),
  aggregation: Schema.optional(Schema.Unknown),
  property: Schema.optional(Schema.Unknown),
  group_by: Schema.optional(Schema.Unknown)
})

/** @since 0.1.0 */
export type UpdateBillableMetric = typeof UpdateBillableMetric.Type

/** The fields of a metric an update may not change, and why. */
const fixed = {
  code: "is fixed: events name the metric by it",
  aggregation: "is fixed once the metric exists: create another metric",
  property: "is fixed once the metric exists: create another metric",
  group_by: "is fixed once the metric exists: create another metric"
} as const

/**
 * An update's body as the engine's command: a fixed field sent is an `InvalidParameter` naming it.
 *
 * @since 0.1.0
 */
export const updateCommand = (
  body: UpdateBillableMetric
): Effect.Effect<BillableMetric.MetricUpdate, Errors.InvalidParameter> => {
  for (const [param, reason] of Object.entries(fixed))
    if (body[param as keyof typeof fixed] !== undefined)
      return Effect.fail(new Errors.InvalidParameter({ param, reason }))
  return Effect.succeed({
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.filters !== undefined ? { filters: body.filters } : {}),
    ...(body.late_window_days !== undefined ? { late_window_days: body.late_window_days } : {})
  })
}

/**
 * The answer of a metric's create, read, update and archive.
 *
 * @since 0.1.0
 */
export const MetricAnswer = Schema.Struct({ billable_metric: BillableMetric.BillableMetric })
