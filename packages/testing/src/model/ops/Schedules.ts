/**
 * The model run's operations of one area, on the engine and on the model: subscription schedules
 * (issue 33, 4) of one phase or a ramp of two, released or canceled at their end.
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Handler, priceIdOf } from "../PlainContext.js"

export const schedule: Handler<"Schedule"> = (op, ctx) =>
  Effect.gen(function* () {
    const { schedules } = ctx.services
    const { verify, where } = ctx
    const s = op.s
    const phase = (target: number, qty: bigint, cycles: number) => ({
      items: [{ priceId: priceIdOf(s, target), quantity: s.usage ? Option.none<bigint>() : Option.some(qty) }],
      discountCode: Option.none<string>(),
      duration: { cycles }
    })
    if ((s.pendingItems ?? null) !== null) {
      // an item set waits for the next cycle: revoke it first, nothing changes
      yield* ctx.governed(
        schedules.create(s.merchant.id, {
          subscriptionId: s.id,
          start: "next_period",
          endBehavior: op.end,
          phases: [phase(op.target, op.qty, op.cycles)]
        })
      )
      yield* verify(s)
      return
    }
    const made = yield* schedules.create(s.merchant.id, {
      subscriptionId: s.id,
      start: "next_period",
      endBehavior: op.end,
      phases: [
        phase(op.target, op.qty, op.cycles),
        ...(op.ramp === null ? [] : [phase(op.ramp.target, op.ramp.qty, op.ramp.cycles)])
      ]
    })
    const start = s.cycle + 1
    const phases = [
      { start, end: start + op.cycles, price: op.target, qty: op.qty },
      ...(op.ramp === null
        ? []
        : [
            {
              start: start + op.cycles,
              end: start + op.cycles + op.ramp.cycles,
              price: op.ramp.target,
              qty: op.ramp.qty
            }
          ])
    ]
    expect([made.status, made.end_behavior, made.phases.map((p) => [p.start_cycle, p.end_cycle])], where()).toEqual([
      "not_started",
      op.end,
      phases.map((p) => [p.start, p.end])
    ])
    s.schedule = { start, end: phases.at(-1)!.end, phases, cancel: op.end === "cancel" }
    yield* verify(s)
  })
