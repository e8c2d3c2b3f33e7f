/**
 * The facade's `usageAlerts` group: usage alerts on a subscription's metric and a subscription's
 * progressive billing (issue 35), as `POST|GET /api/v1/usage_alerts…` and
 * `GET|POST /api/v1/subscription/{id}/progressive_billing`, with the same request decoding as the
 * REST handlers.
 *
 * @since 0.1.0
 */
import { UsageAlertRequests } from "@recur/contract"
import { UsageAlert, UsageAlerts } from "@recur/core"
import { Effect } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, page, pageJson } from "./Kit.js"
import type { Answer, PageInput } from "./Types.js"

/** A usage alert as the REST API answers it. @since 0.1.0 */
export type UsageAlertJson = Answer<typeof UsageAlert.UsageAlert>
/** The body of a new usage alert. @since 0.1.0 */
export type CreateUsageAlertInput = typeof UsageAlertRequests.CreateUsageAlert.Encoded
/** A subscription's progressive billing as the REST API answers it. @since 0.1.0 */
export type ProgressiveBillingJson = UsageAlertRequests.ProgressiveBilling
/** The filters of the alert list. @since 0.1.0 */
export type ListUsageAlertsInput = PageInput & {
  readonly subscription_id?: string
  readonly customer_id?: string
}

/**
 * The `usageAlerts` group of the facade.
 *
 * @since 0.1.0
 */
export type UsageAlertsClient = BillingClient["usageAlerts"]

const use = <A, E, R>(f: (s: UsageAlerts.UsageAlerts["Service"]) => Effect.Effect<A, E, R>) =>
  UsageAlerts.UsageAlerts.use(f)

/** `usageAlerts`. @since 0.1.0 */
export const usageAlerts = ({ run }: Kit<Services>): UsageAlertsClient => ({
  create: (merchantId, input) =>
    run(
      decode(UsageAlertRequests.CreateUsageAlert, input).pipe(
        Effect.flatMap((i) => use((s) => s.create(merchantId, i))),
        Effect.map(json(UsageAlert.UsageAlert))
      )
    ),
  get: (merchantId, alertId) =>
    run(
      id("usage_alert_id", alertId).pipe(
        Effect.flatMap((i) => use((s) => s.get(merchantId, i))),
        Effect.map(json(UsageAlert.UsageAlert))
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const p = yield* page(filter)
        return yield* use((s) =>
          s.list(merchantId, {
            ...p,
            subscription_id: filter.subscription_id,
            customer_id: filter.customer_id
          })
        )
      }).pipe(Effect.map(pageJson(UsageAlert.UsageAlert)))
    ),
  delete: (merchantId, alertId) =>
    run(
      id("usage_alert_id", alertId).pipe(
        Effect.flatMap((i) => use((s) => s.remove(merchantId, i))),
        Effect.map(json(UsageAlert.UsageAlert))
      )
    ),
  progressiveBilling: (merchantId, subscriptionId) =>
    run(
      id("subscription_id", subscriptionId).pipe(
        Effect.flatMap((i) => use((s) => s.usageBilling(merchantId, i))),
        Effect.map(UsageAlertRequests.progressiveBillingJson)
      )
    ),
  setProgressiveBilling: (merchantId, subscriptionId, input) =>
    run(
      Effect.all([id("subscription_id", subscriptionId), decode(UsageAlertRequests.SetProgressiveBilling, input)]).pipe(
        Effect.flatMap(([i, body]) =>
          use((s) => s.setProgressiveBilling(merchantId, i, body.progressive_billing_threshold))
        ),
        Effect.map(UsageAlertRequests.progressiveBillingJson)
      )
    )
})
