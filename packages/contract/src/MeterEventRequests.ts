/**
 * The merchant API's meter event bodies (`POST /api/v1/meter_events`,
 * `POST /api/v1/meter_events/batch`), decoded into core's `MeterEvents.MeterEventInput`:
 * `timestamp` is RFC 3339 text or Unix ms (now when absent).
 *
 * @since 0.1.0
 */
import { Common, Errors, type MeterEvents } from "@recur/core"
import { Effect, Schema } from "effect"

/**
 * One property value: a string, a number (an exact decimal: at most 6 decimals, within ±10^12)
 * or a boolean.
 *
 * @since 0.1.0
 */
export const PropertyValue = Schema.Union([Schema.String, Schema.Number, Schema.Boolean]).annotate({
  identifier: "MeterProperty"
})

/**
 * The body of `POST /api/v1/meter_events`: one usage event of the billable metric `code` by a
 * customer (and optionally one of its subscriptions), de-duplicated by `transaction_id`.
 *
 * @since 0.1.0
 */
export const MeterEvent = Schema.Struct({
  transaction_id: Schema.String,
  customer_id: Schema.String,
  subscription_id: Schema.optional(Schema.NullOr(Schema.String)),
  code: Schema.String,
  timestamp: Schema.optional(Schema.Union([Schema.String, Schema.Int])),
  properties: Schema.optional(Schema.Record(Schema.String, PropertyValue))
})

/** @since 0.1.0 */
export type MeterEventRequest = typeof MeterEvent.Type

/**
 * The body of `POST /api/v1/meter_events/batch`: 1 to 1,000 events, stored all or none.
 *
 * @since 0.1.0
 */
export const MeterEventBatch = Schema.Struct({ events: Schema.Array(MeterEvent) })

/** @since 0.1.0 */
export type MeterEventBatchRequest = typeof MeterEventBatch.Type

/**
 * One decoded event as core's command (an RFC 3339 `timestamp` read as Unix ms); `param` names
 * the event's field in the request (`events[3].timestamp`).
 *
 * @since 0.1.0
 */
export const meterEventInput = (
  r: MeterEventRequest,
  param: (field: string) => string = (field) => field
): Effect.Effect<MeterEvents.MeterEventInput, Errors.InvalidParameter> => {
  if (typeof r.timestamp !== "string") return Effect.succeed(r as MeterEvents.MeterEventInput)
  const at = Common.parseInstant(r.timestamp)
  return at === undefined
    ? Effect.fail(Errors.invalid(param("timestamp"), "must be an RFC 3339 timestamp or Unix milliseconds"))
    : Effect.succeed({ ...r, timestamp: at })
}

/**
 * The events of a batch body as core's commands.
 *
 * @since 0.1.0
 */
export const meterEventInputs = (
  body: MeterEventBatchRequest
): Effect.Effect<ReadonlyArray<MeterEvents.MeterEventInput>, Errors.InvalidParameter> =>
  body.events.some((e) => typeof e.timestamp === "string")
    ? Effect.forEach(body.events, (e, i) => meterEventInput(e, (field) => `events[${i}].${field}`))
    : Effect.succeed(body.events as ReadonlyArray<MeterEvents.MeterEventInput>)
