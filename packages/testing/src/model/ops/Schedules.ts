/**
 * The model run's operations of one area, on the engine and on the model: Subscription schedules (issue 33, 4).
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
    const made = yield* schedules.create(s.merchant.id, {
      subscriptionId: s.id,
      start: "next_period",
      endBehavior: "release",
      phases: [
        {
          items: [{ priceId: priceIdOf(s, op.target), quantity: s.usage ? Option.none() : Option.some(op.qty) }],
          discountCode: Option.none(),
          duration: { cycles: op.cycles }
        }
      ]
    })
    expect([made.status, made.phases[0]!.start_cycle], where()).toEqual(["not_started", s.cycle + 1])
    s.schedule = { start: s.cycle + 1, end: s.cycle + 1 + op.cycles, price: op.target, qty: op.qty }
    yield* verify(s)
  })
