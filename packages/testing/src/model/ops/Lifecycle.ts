/**
 * The model run's operations of one area, on the engine and on the model: Cancellations (now and at the period end), their revocation, pause and resume.
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { Subscriptions } from "@recur/core"
import { Effect } from "effect"
import type { Handler } from "../PlainContext.js"
import { cancelPending, renewModel } from "../Reference.js"

export const cancel: Handler<"Cancel"> = (op, ctx) =>
  Effect.gen(function* () {
    const { subsService } = ctx.services
    const { verify, conflict } = ctx
    const s = op.s
    if (op.atEnd) {
      if (s.status !== "active") return
      if (!s.cancelAtEnd && s.prorations.reduce((a, p) => a + p.amount, 0n) > 0n) {
        // pending charges an end-of-period cancel would never bill: refused
        yield* conflict(subsService.cancel(s.merchant.id, Subscriptions.cancelOf(s.id, { when: "end_of_period" })))
        yield* verify(s)
        return
      }
      yield* subsService.cancel(s.merchant.id, Subscriptions.cancelOf(s.id, { when: "end_of_period" }))
      s.cancelAtEnd = true
    } else {
      yield* subsService.cancel(s.merchant.id, Subscriptions.cancelOf(s.id, { when: "immediate" }))
      s.status = "canceled"
      s.schedule = null
      s.segments = null
      cancelPending(s)
    }
    yield* verify(s)
  })

export const revokeCancel: Handler<"RevokeCancel"> = (op, ctx) =>
  Effect.gen(function* () {
    const { subsService } = ctx.services
    const { verify, conflict } = ctx
    const s = op.s
    if (!s.cancelAtEnd) {
      yield* conflict(subsService.revokeCancel(s.merchant.id, s.id))
      return
    }
    yield* subsService.revokeCancel(s.merchant.id, s.id)
    s.cancelAtEnd = false
    yield* verify(s)
  })

export const pause: Handler<"Pause"> = (op, ctx) =>
  Effect.gen(function* () {
    const { subsService } = ctx.services
    const { verify } = ctx
    yield* subsService.pause(op.s.merchant.id, op.s.id)
    op.s.status = "paused"
    op.s.segments = null
    yield* verify(op.s)
  })

export const resume: Handler<"Resume"> = (op, ctx) =>
  Effect.gen(function* () {
    const { subsService } = ctx.services
    const { verify } = ctx
    const s = op.s
    yield* subsService.resume(s.merchant.id, s.id)
    s.status = "active"
    renewModel(s, s.merchant.now, true)
    yield* verify(s)
  })
