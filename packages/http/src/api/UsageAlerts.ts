/**
 * The usage alerts group (issue 35): alerts on a subscription's metric, and a subscription's
 * progressive billing threshold.
 *
 * @since 0.1.0
 */
import { UsageAlert } from "@recur/core"
import { UsageAlertRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope, Page, PageQuery } from "./Shared.js"

const Params = Schema.Struct({ usage_alert_id: Schema.String })
const SubscriptionParams = Schema.Struct({ subscription_id: Schema.String })
const ProgressiveAnswer = Schema.Struct({ progressive_billing: UsageAlertRequests.ProgressiveBilling })

/**
 * Usage alerts (`v2.usage_alert.triggered` once per crossing per cycle, `v2.usage_alert.resolved`
 * when the next cycle starts) and progressive billing (usage invoiced early at a threshold).
 *
 * @since 0.1.0
 */
export class UsageAlertsGroup extends HttpApiGroup.make("usageAlerts")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/usage_alerts", {
      payload: UsageAlertRequests.CreateUsageAlert,
      success: Envelope(UsageAlertRequests.UsageAlertAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/usage_alerts", {
      query: Schema.Struct({
        ...PageQuery,
        subscription_id: Schema.optional(Schema.String),
        customer_id: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(UsageAlert.UsageAlert)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/usage_alerts/:usage_alert_id", {
      params: Params,
      success: Envelope(UsageAlertRequests.UsageAlertAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("delete", "/api/v1/usage_alerts/:usage_alert_id/delete", {
      params: Params,
      success: Envelope(UsageAlertRequests.UsageAlertAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("progressiveBilling", "/api/v1/subscription/:subscription_id/progressive_billing", {
      params: SubscriptionParams,
      success: Envelope(ProgressiveAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("setProgressiveBilling", "/api/v1/subscription/:subscription_id/progressive_billing", {
      params: SubscriptionParams,
      payload: UsageAlertRequests.SetProgressiveBilling,
      success: Envelope(ProgressiveAnswer),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Usage alerts") {}
