/**
 * The handlers of the schedules group.
 *
 * @since 0.1.0
 */
import { ScheduleRequests } from "@recur/contract"
import { Schedules } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, ok } from "./Shared.js"

/**
 * The handlers of the schedules group.
 *
 * @since 0.1.0
 */
export const schedulesLive = HttpApiBuilder.group(BillingApi, "schedules", (handlers) =>
  Effect.gen(function* () {
    const schedules = yield* Schedules.Schedules
    return handlers
      .handle("create", ({ params: path, payload }) =>
        call((m) =>
          ScheduleRequests.scheduleCommand(path.subscription_id, payload).pipe(
            Effect.flatMap((command) => schedules.create(m, command)),
            Effect.map((schedule) => ok({ schedule }))
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(schedules.get(m, path.subscription_id), (schedule) => ok({ schedule })))
      )
      .handle("release", ({ params: path }) =>
        call((m) => Effect.map(schedules.release(m, path.subscription_id), (schedule) => ok({ schedule })))
      )
      .handle("cancel", ({ params: path }) =>
        call((m) => Effect.map(schedules.cancel(m, path.subscription_id), (schedule) => ok({ schedule })))
      )
  })
)
