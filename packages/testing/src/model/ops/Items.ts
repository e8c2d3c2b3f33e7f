/**
 * The model run's operations of one area, on the engine and on the model: item changes (issue
 * 33, 9) through `ItemChanges` — the base item's quantity, the add-on item added, removed or of
 * another quantity — under each proration mode (`always_invoice`, `create_prorations`, `none`,
 * `next_cycle`), each a preview and a commit of its quote. The handler checks the quote against
 * the model's (`ItemsReference`), the items, and the subscription after its step; a refused
 * change (a schedule governs, an item set already waits, pending lines in the cycle, a cancel at
 * the period's end) moves nothing.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { Ids, type ItemRules } from "@recur/core"
import { Effect, Option } from "effect"
import { itemsModel, itemsOf } from "../ItemsReference.js"
import type { Handler, PlainContext } from "../PlainContext.js"
import { addonMinor, hasPending, type MSub } from "../Reference.js"

/** The engine's items of the subscription equal the model's. */
const expectItems = (ctx: PlainContext, s: MSub) =>
  Effect.gen(function* () {
    const listed = yield* ctx.services.itemChanges.list(s.merchant.id, s.id)
    expect(
      listed.map((i) => [i.price_id, i.quantity]),
      ctx.where()
    ).toEqual(itemsOf(s))
    return listed
  })

export const changeItems: Handler<"ChangeItems"> = (op, ctx) =>
  Effect.gen(function* () {
    const { itemChanges } = ctx.services
    const { verify, conflict, governed, where } = ctx
    const s = op.s
    const m = s.merchant
    const listed = yield* expectItems(ctx, s)
    const entry: ItemRules.ItemEntry =
      op.change === "add"
        ? {
            id: Option.none(),
            priceId: Option.some(Ids.PriceId.make(m.addon)),
            quantity: Option.some(op.qty),
            deleted: false
          }
        : {
            id: Option.some(listed[op.change === "base" ? 0 : 1]!.id),
            priceId: Option.none(),
            quantity: op.change === "remove" ? Option.none() : Option.some(op.qty),
            deleted: op.change === "remove"
          }
    const command = (quoteId: Option.Option<string>): ItemRules.ItemChangeCommand => ({
      subscriptionId: Ids.SubscriptionId.make(s.id),
      items: [entry],
      proration: op.mode,
      quoteId
    })
    const refused = (why: string, effect: Effect.Effect<void, unknown>) =>
      Effect.gen(function* () {
        yield* effect
        ctx.tally.itemsRefused.set(why, (ctx.tally.itemsRefused.get(why) ?? 0) + 1)
        yield* expectItems(ctx, s)
        yield* verify(s)
      })
    if (s.status !== "active")
      return yield* refused("not live", conflict(itemChanges.commit(m.id, command(Option.none()))))
    // a schedule governs the items of each cycle; an item set waiting for the next cycle is
    // replaced only by another (next_cycle)
    if ((s.schedule ?? null) !== null || ((s.pendingItems ?? null) !== null && op.mode !== "next_cycle"))
      return yield* refused(
        (s.schedule ?? null) !== null ? "schedule" : "items waiting",
        governed(itemChanges.commit(m.id, command(Option.none())))
      )
    // no next invoice would bill the lines (it cancels at the period's end), or the cycle's
    // pending lines would be billed next to a credit that already counted them
    if ((op.mode === "create_prorations" && s.cancelAtEnd) || (op.mode === "always_invoice" && hasPending(s)))
      return yield* refused(
        s.cancelAtEnd && op.mode === "create_prorations" ? "cancel at period end" : "pending lines",
        Effect.gen(function* () {
          expect(yield* Effect.flip(itemChanges.commit(m.id, command(Option.none()))), where()).toMatchObject({
            _tag: "ItemChangeRefused",
            part: "proration"
          })
        })
      )
    const preview = yield* itemChanges.preview(m.id, command(Option.none()))
    const done = yield* itemChanges.commit(m.id, command(Option.some(preview.quote_id)))
    expect(done.quote, where()).toEqual(preview)
    const qty = op.change === "base" ? op.qty : s.qty
    const addon = op.change === "remove" ? 0n : op.change === "base" ? s.addon : addonMinor * op.qty
    const expected = itemsModel(s, qty, addon, op.mode)
    const q = done.quote
    expect(
      {
        outcome: q.outcome,
        credit: q.credit,
        charge: q.charge,
        net: q.net,
        total: q.total,
        effective_at: q.effective_at,
        billed_at: q.billed_at,
        lines: q.lines
      },
      where()
    ).toEqual(expected)
    // the items in force (for next_cycle, as they are until the next renewal)
    expect(
      done.items.map((i) => [i.price_id, i.quantity]),
      where()
    ).toEqual(itemsOf(s))
    yield* verify(s)
  })
