/**
 * The handlers of the usage alerts group.
 *
 * @since 0.1.0
 */
import { UsageAlerts } from "@recur/core"
import { UsageAlertRequests } from "@recur/contract"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, ok, pageQuery } from "./Shared.js"

/**
 * The handlers of the usage alerts group.
 *
 * @since 0.1.0
 */
export const usageAlertsLive = HttpApiBuilder.group(BillingApi, "usageAlerts", (handlers) =>
  Effect.gen(function* () {
    const alerts = yield* UsageAlerts.UsageAlerts
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(alerts.create(m, payload), (usage_alert) => ok({ usage_alert })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(pageQuery(q), (page) =>
            Effect.map(
              alerts.list(m, {
                subscription_id: q.subscription_id,
                customer_id: q.customer_id,
                limit: page.limit,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              }),
              ok
            )
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(alerts.get(m, path.usage_alert_id), (usage_alert) => ok({ usage_alert })))
      )
      .handle("delete", ({ params: path }) =>
        call((m) => Effect.map(alerts.remove(m, path.usage_alert_id), (usage_alert) => ok({ usage_alert })))
      )
      .handle("progressiveBilling", ({ params: path }) =>
        call((m) =>
          Effect.map(alerts.usageBilling(m, path.subscription_id), (r) =>
            ok({ progressive_billing: UsageAlertRequests.progressiveBillingJson(r) })
          )
        )
      )
      .handle("setProgressiveBilling", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(
            alerts.setProgressiveBilling(m, path.subscription_id, payload.progressive_billing_threshold),
            (r) => ok({ progressive_billing: UsageAlertRequests.progressiveBillingJson(r) })
          )
        )
      )
  })
)
