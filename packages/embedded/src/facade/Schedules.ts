/**
 * The facade's schedules group: the same service and the same request decoding
 * (`@recur/contract`'s `ScheduleRequests`) as the REST handlers of
 * `/api/v1/subscription/{id}/schedule`.
 *
 * @since 0.1.0
 */
import { ScheduleRequests } from "@recur/contract"
import { Schedule, Schedules } from "@recur/core"
import { Effect } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit } from "./Kit.js"

/** `schedules`. @since 0.1.0 */
export const schedules = ({ run }: Kit<Services>): BillingClient["schedules"] => ({
  create: (merchantId, subscriptionId, input) =>
    run(
      Effect.all([id("subscription_id", subscriptionId), decode(ScheduleRequests.CreateSchedule, input)]).pipe(
        Effect.flatMap(([s, body]) => ScheduleRequests.scheduleCommand(s, body)),
        Effect.flatMap((command) => Schedules.Schedules.use((sc) => sc.create(merchantId, command))),
        Effect.map(json(Schedule.SubscriptionSchedule))
      )
    ),
  get: (merchantId, subscriptionId) =>
    run(
      id("subscription_id", subscriptionId).pipe(
        Effect.flatMap((s) => Schedules.Schedules.use((sc) => sc.get(merchantId, s))),
        Effect.map(json(Schedule.SubscriptionSchedule))
      )
    ),
  release: (merchantId, subscriptionId) =>
    run(
      id("subscription_id", subscriptionId).pipe(
        Effect.flatMap((s) => Schedules.Schedules.use((sc) => sc.release(merchantId, s))),
        Effect.map(json(Schedule.SubscriptionSchedule))
      )
    ),
  cancel: (merchantId, subscriptionId) =>
    run(
      id("subscription_id", subscriptionId).pipe(
        Effect.flatMap((s) => Schedules.Schedules.use((sc) => sc.cancel(merchantId, s))),
        Effect.map(json(Schedule.SubscriptionSchedule))
      )
    )
})
