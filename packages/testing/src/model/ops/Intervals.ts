/**
 * The model run's operations of one area, on the engine and on the model: Interval switches to and from the yearly price (issue 33, 3).
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { PriceChanges } from "@recur/core"
import { Effect } from "effect"
import type { Handler } from "../PlainContext.js"
import { fmt, hasPending, inStub, switchModel } from "../Reference.js"

export const switchInterval: Handler<"SwitchInterval"> = (op, ctx) =>
  Effect.gen(function* () {
    const { priceChanges } = ctx.services
    const { verify, conflict, governed, where } = ctx
    const s = op.s
    const to = s.months === 12 ? s.merchant.flat[op.target]! : s.merchant.yearly
    const input = { priceId: to, proration: op.mode }
    // a schedule, or an item set waiting for the next cycle, governs the price: refused
    if (s.status === "active" && ((s.schedule ?? null) !== null || (s.pendingItems ?? null) !== null)) {
      yield* governed(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
      return
    }
    if (s.status !== "active") {
      yield* conflict(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
      return
    }
    if (s.addon > 0n || s.cancelAtEnd || inStub(s)) {
      // its add-on item bills monthly, it ends at this period, or its short first period before
      // the anchor was charged as a share of a month: it keeps its interval
      expect(
        yield* Effect.flip(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input))),
        where()
      ).toMatchObject({ _tag: "PriceChangeRefused", reason: "interval" })
      yield* verify(s)
      return
    }
    if (hasPending(s)) {
      // the cycle's pending proration lines wait for its invoice: the switch is refused
      expect(
        yield* Effect.flip(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input))),
        where()
      ).toMatchObject({ _tag: "PriceChangeRefused", reason: "proration" })
      yield* verify(s)
      return
    }
    const preview = yield* priceChanges.previewChange(s.merchant.id, PriceChanges.change(s.id, input))
    const quote = yield* priceChanges.changePrice(
      s.merchant.id,
      PriceChanges.change(s.id, { ...input, quoteId: preview.quote_id })
    )
    expect(quote, where()).toEqual(preview)
    const refund = switchModel(s, op.target, op.mode)
    expect([quote.outcome, quote.total], where()).toEqual([
      "interval_switch",
      refund > 0n ? fmt(-refund) : fmt([...s.invoices].reverse().find((i) => i.type === "renewal")!.amount)
    ])
    yield* verify(s)
  })
