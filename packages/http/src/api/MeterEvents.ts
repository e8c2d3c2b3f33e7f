/**
 * The meter events group: ingestion of usage events (one, or a batch) and their list.
 *
 * @since 0.1.0
 */
import { MeterEvents } from "@recur/core"
import { MeterEventRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope, Page } from "./Shared.js"

/**
 * Meter events: usage of billable metrics, de-duplicated by `transaction_id`.
 *
 * @since 0.1.0
 */
export class MeterEventsGroup extends HttpApiGroup.make("meterEvents")
  .add(
    HttpApiEndpoint.post("send", "/api/v1/meter_events", {
      payload: MeterEventRequests.MeterEvent,
      success: Envelope(Schema.Struct({ event: MeterEvents.MeterEventView, duplicate: Schema.Boolean })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("sendBatch", "/api/v1/meter_events/batch", {
      payload: MeterEventRequests.MeterEventBatch,
      success: Envelope(Schema.Struct({ accepted: Schema.Int, duplicates: Schema.Array(Schema.String) })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/meter_events", {
      query: Schema.Struct({
        customer_id: Schema.optional(Schema.String),
        code: Schema.optional(Schema.String),
        limit: Schema.optional(Schema.String),
        starting_after: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(MeterEvents.MeterEventView)),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Meter events") {}
