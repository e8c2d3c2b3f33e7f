/**
 * The handlers of the usage adjustments group (issue 35).
 *
 * @since 0.1.0
 */
import { UsageAdjustmentRequests } from "@recur/contract"
import { MeterCorrections, MeterEvents, UsageAdjustments } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, invalid, ok } from "./Shared.js"

/**
 * The handlers of the usage adjustments group.
 *
 * @since 0.1.0
 */
export const usageAdjustmentsLive = HttpApiBuilder.group(BillingApi, "usageAdjustments", (handlers) =>
  Effect.gen(function* () {
    const corrections = yield* MeterCorrections.MeterCorrections
    const adjustments = yield* UsageAdjustments.UsageAdjustments
    return handlers
      .handle("voidEvent", ({ params }) =>
        call((m) =>
          Effect.map(corrections.void(m, params.transaction_id), (done) =>
            ok({ event: MeterEvents.viewOf(done.event), voided: done.voided })
          )
        )
      )
      .handle("amendEvent", ({ params, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const done = yield* corrections.amend(
              m,
              params.transaction_id,
              yield* UsageAdjustmentRequests.amendmentOf(payload)
            )
            return ok({
              event: MeterEvents.viewOf(done.event),
              amended: MeterEvents.viewOf(done.amended),
              duplicate: done.duplicate
            })
          })
        )
      )
      .handle("preview", ({ params, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const at = yield* UsageAdjustmentRequests.previewAt(payload)
            const plan = yield* adjustments.preview(m, params.subscription_id, at)
            return ok({ preview: UsageAdjustments.previewOf(plan) })
          })
        )
      )
      .handle("apply", ({ params }) =>
        call((m) =>
          Effect.map(adjustments.apply(m, params.usage_adjustment_id), (usage_adjustment) => ok({ usage_adjustment }))
        )
      )
      .handle("list", ({ params, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const limit = q.limit === undefined ? 10 : Number(q.limit)
            if (!Number.isInteger(limit) || limit < 1 || limit > 100) return yield* invalid("limit", "must be 1 to 100")
            return ok(yield* adjustments.list(m, params.subscription_id, { limit, starting_after: q.starting_after }))
          })
        )
      )
  })
)
