/**
 * Late events and corrections (issue 35): voiding and amending a meter event, previewing the
 * re-rating of a subscription's billed period, and the adjustments it made.
 *
 * @since 0.1.0
 */
import { MeterEvents, UsageAdjustment } from "@recur/core"
import { UsageAdjustmentRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope, Page } from "./Shared.js"

const EventPath = Schema.Struct({ transaction_id: Schema.String })
const SubscriptionPath = Schema.Struct({ subscription_id: Schema.String })

/**
 * Corrections of meter events and the usage adjustments they (and late events) make.
 *
 * @since 0.1.0
 */
export class UsageAdjustmentsGroup extends HttpApiGroup.make("usageAdjustments")
  .add(
    HttpApiEndpoint.post("voidEvent", "/api/v1/meter_events/:transaction_id/void", {
      params: EventPath,
      success: Envelope(Schema.Struct({ event: MeterEvents.MeterEventView, voided: Schema.Boolean })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("amendEvent", "/api/v1/meter_events/:transaction_id/amend", {
      params: EventPath,
      payload: UsageAdjustmentRequests.AmendMeterEvent,
      success: Envelope(
        Schema.Struct({
          event: MeterEvents.MeterEventView,
          amended: MeterEvents.MeterEventView,
          duplicate: Schema.Boolean
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("preview", "/api/v1/subscription/:subscription_id/usage_adjustments/preview", {
      params: SubscriptionPath,
      payload: UsageAdjustmentRequests.PreviewUsageAdjustment,
      success: Envelope(Schema.Struct({ preview: UsageAdjustment.AdjustmentPreview })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/subscription/:subscription_id/usage_adjustments", {
      params: SubscriptionPath,
      query: Schema.Struct({ limit: Schema.optional(Schema.String), starting_after: Schema.optional(Schema.String) }),
      success: Envelope(Page(UsageAdjustment.UsageAdjustment)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("apply", "/api/v1/usage_adjustments/:usage_adjustment_id/apply", {
      params: Schema.Struct({ usage_adjustment_id: Schema.String }),
      success: Envelope(Schema.Struct({ usage_adjustment: UsageAdjustment.UsageAdjustment })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Usage adjustments") {}
