/**
 * The model run's operations of one area, on the engine and on the model: Refunds of paid invoices and usage recorded on metered subscriptions.
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { Refunds, Subscriptions } from "@recur/core"
import { Effect } from "effect"
import { engineShape, invoicesOfSub, shape } from "../Operations.js"
import type { Handler } from "../PlainContext.js"
import { fmt, issue } from "../Reference.js"

export const refund: Handler<"Refund"> = (op, ctx) =>
  Effect.gen(function* () {
    const { billing, refunds } = ctx.services
    const { verify, where } = ctx
    const s = op.s
    // the engine's k-th paying invoice is the model's k-th
    const all = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
    const target = all[op.index]!
    expect(engineShape(target), where()).toEqual(shape(s.invoices[op.index]!))
    const refund = yield* refunds.refund(
      s.merchant.id,
      Refunds.refundOf(target.trade_id!, { amount: fmt(op.amount), reason: "model" })
    )
    expect(refund.refund_status, where()).toBe("succeeded")
    const inv = s.invoices[op.index]!
    inv.refunded += op.amount
    issue(s, "refund", inv.cycle, op.amount)
    s.segments = inv.cycle === s.cycle ? null : s.segments
    yield* verify(s)
  })

export const usage: Handler<"Usage"> = (op, ctx, n) =>
  Effect.gen(function* () {
    const { metering } = ctx.services
    const { conflict } = ctx
    const s = op.s
    if (s.status !== "active") {
      yield* conflict(metering.recordUsage(s.merchant.id, Subscriptions.usageOf(s.id, op.units, { eventId: `u-${n}` })))
      return
    }
    yield* metering.recordUsage(s.merchant.id, Subscriptions.usageOf(s.id, op.units, { eventId: `u-${n}` }))
    s.accrued += BigInt(op.units)
    ctx.tally.events++
  })
