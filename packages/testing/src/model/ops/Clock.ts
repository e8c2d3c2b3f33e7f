/**
 * The model run's operations of one area, on the engine and on the model: The merchant's sandbox clock moved: every renewal due, in time order.
 * On the merchant with a grace period (issue 34, 1) each renewal is first a draft, finalised by
 * the worker an hour later; its amount is the one the upcoming invoice showed before it.
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { shape } from "../Operations.js"
import type { Handler } from "../PlainContext.js"
import { advanceModel, type MSub } from "../Reference.js"

/**
 * The clock moved to `now + ms`: every renewal due, in time order, on both; on the merchant with a
 * grace period each renewing subscription's upcoming invoice is read first and its renewal must
 * bill that amount, and every subscription's invoices are compared with status and number.
 */
export const advance: Handler<"Advance"> = (op, ctx) =>
  Effect.gen(function* () {
    const { sandboxClock } = ctx.services
    const { verify, where } = ctx
    const to = op.m.now + op.ms
    const drafts = op.m.grace > 0
    // what the next renewal of each subscription renewing by `to` will bill, as previewed
    const previews = new Map<MSub, { readonly cycle: number; readonly amount: string }>()
    if (drafts)
      for (const s of op.m.subs.filter((s) => s.status === "active" && s.end <= to)) {
        const upcoming = yield* ctx.services.renewals.upcoming(s.merchant.id, s.id)
        if (Option.isSome(upcoming))
          previews.set(s, { cycle: upcoming.value.cycle_index, amount: upcoming.value.amount })
      }
    yield* sandboxClock.advanceClock(op.m.id, to)
    advanceModel(op.m, to)
    yield* Effect.forEach(
      op.m.subs.filter((s) => s.checked < s.invoices.length || s.status !== "canceled"),
      verify,
      { discard: true }
    )
    if (drafts) {
      for (const [s, preview] of previews) {
        const renewal = s.invoices.find((i) => i.type === "renewal" && i.cycle === preview.cycle)
        if (renewal !== undefined) {
          expect(shape(renewal)[2], `${where()}: ${s.id} cycle ${preview.cycle} as previewed`).toBe(preview.amount)
          ctx.tally.previewed++
        }
      }
      yield* Effect.forEach(op.m.subs, ctx.verifyDrafts, { discard: true })
    }
  })
