/**
 * The subscription schedules group: a schedule attached to a subscription, as a sub-resource of
 * it (`/api/v1/subscription/{id}/schedule`, like its `discount` and `upcoming_invoice`).
 *
 * @since 0.1.0
 */
import { Schedule } from "@recur/core"
import { ScheduleRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope } from "./Shared.js"

const SubscriptionPath = Schema.Struct({ subscription_id: Schema.String })
const Answer = Envelope(Schema.Struct({ schedule: Schedule.SubscriptionSchedule }))

/**
 * Subscription schedules: phases of price, quantity and discount that follow each other at
 * renewal boundaries, and what happens after the last one.
 *
 * @since 0.1.0
 */
export class SchedulesGroup extends HttpApiGroup.make("schedules")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/subscription/:subscription_id/schedule", {
      params: SubscriptionPath,
      payload: ScheduleRequests.CreateSchedule,
      success: Answer,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/subscription/:subscription_id/schedule", {
      params: SubscriptionPath,
      success: Answer,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("release", "/api/v1/subscription/:subscription_id/schedule/release", {
      params: SubscriptionPath,
      success: Answer,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("cancel", "/api/v1/subscription/:subscription_id/schedule/cancel", {
      params: SubscriptionPath,
      success: Answer,
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Schedules") {}
