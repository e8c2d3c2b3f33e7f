/**
 * The merchant API's bodies for late events and corrections (issue 35): amending a meter event
 * (`POST /api/v1/meter_events/{transaction_id}/amend`; a void takes no body) and previewing the
 * re-rating of a subscription's billed period
 * (`POST /api/v1/subscription/{id}/usage_adjustments/preview`), decoded into core's commands.
 *
 * @since 0.1.0
 */
import { Common, Errors, type MeterCorrections } from "@recur/core"
import { Effect, Schema } from "effect"
import { PropertyValue } from "./MeterEventRequests.js"

/**
 * The body of `POST /api/v1/meter_events/{transaction_id}/amend`: the replacement's
 * `transaction_id` (1 to 255 characters, not the amended one's), its `timestamp` (RFC 3339 or
 * Unix ms) and `properties`, each the amended event's when absent.
 *
 * @since 0.1.0
 */
export const AmendMeterEvent = Schema.Struct({
  transaction_id: Schema.String,
  timestamp: Schema.optional(Schema.Union([Schema.String, Schema.Int])),
  properties: Schema.optional(Schema.Record(Schema.String, PropertyValue))
})

/** @since 0.1.0 */
export type AmendMeterEventRequest = typeof AmendMeterEvent.Type

/**
 * The body of `POST /api/v1/meter_events/{transaction_id}/void`: none is needed (`{}`).
 *
 * @since 0.1.0
 */
export const VoidMeterEvent = Schema.Struct({})

/**
 * The body of `POST /api/v1/subscription/{id}/usage_adjustments/preview`: any instant of the
 * billed period to re-rate (RFC 3339 or Unix ms).
 *
 * @since 0.1.0
 */
export const PreviewUsageAdjustment = Schema.Struct({
  timestamp: Schema.Union([Schema.String, Schema.Int])
})

/** @since 0.1.0 */
export type PreviewUsageAdjustmentRequest = typeof PreviewUsageAdjustment.Type

/** An instant of a body as Unix ms; `param` names it when it is not one. */
const instantOf = (value: string | number, param: string): Effect.Effect<number, Errors.InvalidParameter> => {
  const at = typeof value === "string" ? Common.parseInstant(value) : value
  return at === undefined || !Number.isSafeInteger(at)
    ? Effect.fail(Errors.invalid(param, "must be an RFC 3339 timestamp or Unix milliseconds"))
    : Effect.succeed(at)
}

/**
 * An amendment body as core's command.
 *
 * @since 0.1.0
 */
export const amendmentOf = (
  r: AmendMeterEventRequest
): Effect.Effect<MeterCorrections.Amendment, Errors.InvalidParameter> =>
  r.timestamp === undefined
    ? Effect.succeed({ transaction_id: r.transaction_id, properties: r.properties })
    : Effect.map(instantOf(r.timestamp, "timestamp"), (timestamp) => ({
        transaction_id: r.transaction_id,
        timestamp,
        properties: r.properties
      }))

/**
 * The instant of a preview body (Unix ms).
 *
 * @since 0.1.0
 */
export const previewAt = (r: PreviewUsageAdjustmentRequest): Effect.Effect<number, Errors.InvalidParameter> =>
  instantOf(r.timestamp, "timestamp")
