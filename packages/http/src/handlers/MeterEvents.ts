/**
 * The handlers of the meter events group.
 *
 * @since 0.1.0
 */
import { MeterEventRequests } from "@recur/contract"
import { MeterEvents } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, invalid, ok } from "./Shared.js"

/**
 * The handlers of the meter events group.
 *
 * @since 0.1.0
 */
export const meterEventsLive = HttpApiBuilder.group(BillingApi, "meterEvents", (handlers) =>
  Effect.gen(function* () {
    const meter = yield* MeterEvents.MeterEvents
    return handlers
      .handle("send", ({ payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const sent = yield* meter.send(m, yield* MeterEventRequests.meterEventInput(payload))
            return ok({ event: MeterEvents.viewOf(sent.event), duplicate: sent.duplicate })
          })
        )
      )
      .handle("sendBatch", ({ payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const done = yield* meter.sendBatch(m, yield* MeterEventRequests.meterEventInputs(payload))
            return ok({ accepted: done.accepted.length, duplicates: done.duplicates })
          })
        )
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const limit = q.limit === undefined ? 10 : Number(q.limit)
            if (!Number.isInteger(limit) || limit < 1 || limit > 100) return yield* invalid("limit", "must be 1 to 100")
            const page = yield* meter.list(m, {
              customer_id: q.customer_id,
              code: q.code,
              limit,
              starting_after: q.starting_after
            })
            return ok({ has_more: page.has_more, list: page.list.map(MeterEvents.viewOf) })
          })
        )
      )
  })
)
