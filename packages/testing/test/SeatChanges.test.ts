/**
 * Issue 33 (2, 9): several seat changes in one cycle, each through its quote, under every
 * proration policy and mode, on the whole engine (memory storage): after every change, what was
 * given back — refunds, the credit balance, the pending credits the next invoice owes — never
 * exceeds what the customer paid; each commit charges exactly its quote; the record holds the
 * last item set.
 */
import { expect, layer } from "@effect/vitest"
import { Entities, ItemChanges, type ItemRules, Money, SandboxClock, Store } from "@recur/core"
import { Effect, Option, Result } from "effect"
import fc from "fast-check"
import { MemoryStorage, ScenarioKit } from "../src/index.js"

const HOUR = 3_600_000
const cents = (s: string) => Result.getOrThrow(Money.parse(s, "USD", { allowNegative: true })).amount

interface Step {
  readonly hours: number
  readonly seats: number
  readonly mode: ItemRules.ItemProration
}
const step: fc.Arbitrary<Step> = fc.record({
  hours: fc.integer({ min: 1, max: 200 }),
  seats: fc.integer({ min: 1, max: 20 }),
  mode: fc.constantFrom("always_invoice" as const, "create_prorations" as const, "none" as const)
})
const run = fc.record({
  policy: fc.constantFrom("per_second", "per_day", "fixed_days(30)"),
  credit: fc.constantFrom("refund" as const, "credit_balance" as const),
  seats: fc.integer({ min: 1, max: 10 }),
  steps: fc.array(step, { minLength: 2, maxLength: 5 })
})

layer(ScenarioKit.engine(MemoryStorage.layer), { timeout: "300 seconds" })("seat changes in one cycle", (it) => {
  it.effect(
    "never give back more than was collected, each commit charges its quote (fixed seed, 50 runs)",
    () =>
      Effect.gen(function* () {
        const samples = fc.sample(run, { seed: 20261127, numRuns: 50 })
        let committed = 0
        for (const r of samples) {
          const start = "2026-01-01T00:00:00Z"
          const merchantId = yield* ScenarioKit.merchantAt(start, {
            proration_policy: r.policy,
            proration_credit: r.credit
          })
          const team = yield* ScenarioKit.monthly(merchantId, yield* ScenarioKit.productOf(merchantId, "Team"), "49.00")
          const seat = yield* ScenarioKit.monthly(
            merchantId,
            yield* ScenarioKit.productOf(merchantId, "Seats"),
            "12.00"
          )
          const bought = yield* ScenarioKit.checkout(merchantId, {
            line_items: [
              { price_id: team, quantity: "1" },
              { price_id: seat, quantity: String(r.seats) }
            ]
          })
          const sub = bought.subscriptionId
          const items = yield* ItemChanges.ItemChanges
          const seatItem = (yield* items.list(merchantId, sub))[1]!.id
          const storage = yield* Store.Storage
          const clock = yield* SandboxClock.SandboxClock
          let now = Date.parse(start)
          let seats = r.seats
          for (const s of r.steps) {
            now += s.hours * HOUR
            // stay within the first cycle (January)
            if (now >= Date.parse("2026-02-01T00:00:00Z")) break
            yield* clock.advanceClock(merchantId, now)
            if (s.seats === seats) continue
            const change = {
              subscriptionId: sub as never,
              items: [
                {
                  id: Option.some(seatItem),
                  priceId: Option.none(),
                  quantity: Option.some(BigInt(s.seats)),
                  deleted: false
                }
              ],
              proration: s.mode,
              quoteId: Option.none<string>()
            } satisfies ItemRules.ItemChangeCommand
            const quote = yield* Effect.result(items.preview(merchantId, change))
            // refused (an always_invoice change while pending lines wait): nothing moved
            if (Result.isFailure(quote)) continue
            const done = yield* items.commit(merchantId, { ...change, quoteId: Option.some(quote.success.quote_id) })
            expect(done.quote).toEqual(quote.success)
            seats = s.seats
            committed++
            // what the customer paid, and what was given back of it
            const trades = (yield* Effect.orDie(storage.repository(Entities.trade).list(merchantId, { limit: 100 })))
              .list
            const collected = trades
              .filter((t) => t.trade.trade_status === "succeeded")
              .reduce((a, t) => a + cents(t.trade.amount), 0n)
            const refunded = trades.reduce((a, t) => a + cents(t.trade.total_refunded_amount), 0n)
            const rec = Option.getOrThrow(
              yield* Effect.orDie(storage.repository(Entities.subscription).get(merchantId, sub))
            ).value
            const balance = cents(rec.subscription.credit_balance)
            const owed = rec.owed_refunds.reduce((a, o) => a + cents(o.owed), 0n)
            const pendingNet = rec.pending_prorations.reduce((a, p) => a + cents(p.amount), 0n)
            const given = refunded + owed + (balance > 0n ? balance : 0n) + (pendingNet < 0n ? -pendingNet : 0n)
            expect(
              given,
              JSON.stringify({ r, collected, refunded, owed, balance, pendingNet }, (_, v) =>
                typeof v === "bigint" ? v.toString() : v
              )
            ).toBeLessThanOrEqual(collected)
          }
          // the record holds the last item set committed
          const rec = Option.getOrThrow(
            yield* Effect.orDie(storage.repository(Entities.subscription).get(merchantId, sub))
          ).value
          expect(rec.extra_items[0]!.quantity).toBe(String(seats))
        }
        expect(committed).toBeGreaterThan(50)
      }),
    300_000
  )
})
