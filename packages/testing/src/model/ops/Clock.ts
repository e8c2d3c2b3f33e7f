/**
 * The model run's operations of one area, on the engine and on the model: The merchant's sandbox clock moved: every renewal due, in time order.
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { Handler } from "../PlainContext.js"
import { advanceModel } from "../Reference.js"

export const advance: Handler<"Advance"> = (op, ctx) =>
  Effect.gen(function* () {
    const { sandboxClock } = ctx.services
    const { verify } = ctx
    const to = op.m.now + op.ms
    yield* sandboxClock.advanceClock(op.m.id, to)
    advanceModel(op.m, to)
    yield* Effect.forEach(
      op.m.subs.filter((s) => s.checked < s.invoices.length || s.status !== "canceled"),
      verify,
      { discard: true }
    )
  })
