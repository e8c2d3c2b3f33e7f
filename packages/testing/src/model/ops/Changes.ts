/**
 * The model run's operations of one area, on the engine and on the model: Price changes under each proration mode (immediate, create_prorations, none, end of period) and quantity changes
 * under each mode (all wait for the next cycle).
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { PriceChanges } from "@recur/core"
import { Effect } from "effect"
import { type Handler, priceIdOf } from "../PlainContext.js"
import { fmt, hasPending, pendingModel, prorateModel } from "../Reference.js"

export const changePrice: Handler<"ChangePrice"> = (op, ctx) =>
  Effect.gen(function* () {
    const { priceChanges } = ctx.services
    const { verify, conflict, governed, where } = ctx
    const s = op.s
    if (s.status === "active" && ((s.schedule ?? null) !== null || (s.pendingItems ?? null) !== null)) {
      // the schedule (or an item set waiting for the next cycle) governs the price: refused, nothing changes
      yield* governed(
        priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, { priceId: priceIdOf(s, op.target) }))
      )
      return
    }
    const input = {
      priceId: priceIdOf(s, op.target),
      effective: op.mode === "end_of_period" ? ("end_of_period" as const) : ("immediate" as const),
      proration: op.mode === "none" || op.mode === "create_prorations" ? op.mode : ("immediate" as const)
    }
    if (s.status !== "active") {
      yield* conflict(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
      return
    }
    if (op.mode === "create_prorations" && s.cancelAtEnd && priceIdOf(s, op.target) !== priceIdOf(s, s.price)) {
      // no next invoice would bill the lines: refused, nothing moves
      expect(
        yield* Effect.flip(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input))),
        where()
      ).toMatchObject({ _tag: "PriceChangeRefused", reason: "proration" })
      yield* verify(s)
      return
    }
    if (op.mode === "immediate" && hasPending(s)) {
      // an invoiced change while the cycle's pending lines wait is refused, nothing moves
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
      PriceChanges.change(s.id, {
        ...input,
        quoteId: preview.quote_id
      })
    )
    expect(quote, where()).toEqual(preview)
    if (op.mode === "end_of_period") s.scheduled = op.target
    else if (op.mode === "create_prorations") {
      const { net } = pendingModel(s, op.target)
      expect([quote.outcome, quote.net, quote.total], where()).toEqual(["pending_prorations", fmt(net), "0.00"])
    } else if (op.mode === "none") {
      s.price = op.target
      s.scheduled = null
      s.segments = null
    } else {
      const { net } = prorateModel(s, op.target)
      expect(quote.net, where()).toBe(fmt(net))
    }
    yield* verify(s)
  })

export const changeQuantity: Handler<"ChangeQuantity"> = (op, ctx) =>
  Effect.gen(function* () {
    const { billing, priceChanges } = ctx.services
    const { verify, conflict, governed, where } = ctx
    const s = op.s
    const input = { quantity: op.qty, ...(op.mode === "next_cycle" ? {} : { proration: op.mode }) }
    if (s.status === "active" && ((s.schedule ?? null) !== null || (s.pendingItems ?? null) !== null)) {
      yield* governed(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
      return
    }
    if (s.status !== "active") {
      yield* conflict(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
      return
    }
    if (op.mode === "next_cycle") yield* priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input))
    else {
      // whatever the mode, a quantity alone waits for the next cycle: quoted as nothing now
      const preview = yield* priceChanges.previewChange(s.merchant.id, PriceChanges.change(s.id, input))
      const quote = yield* priceChanges.changePrice(
        s.merchant.id,
        PriceChanges.change(s.id, { ...input, quoteId: preview.quote_id })
      )
      expect(quote, where()).toEqual(preview)
      expect(
        [quote.outcome, quote.proration, quote.credit, quote.charge, quote.total, quote.effective_at],
        where()
      ).toEqual(["quantity_next_cycle", op.mode, "0.00", "0.00", "0.00", s.end])
    }
    s.pending = op.qty
    const sub = yield* billing.getSubscription(s.merchant.id, s.id)
    expect(sub.pending_change?.quantity, where()).toBe(op.qty.toString())
    yield* verify(s)
  })
