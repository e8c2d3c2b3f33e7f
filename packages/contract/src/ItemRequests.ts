/**
 * The body of a subscription's item change (`POST /api/v1/subscription/{id}/items` and its
 * preview) and its decoding into the engine's `ItemRules.ItemChangeCommand`: Stripe's `items`
 * semantics (an entry with `id` updates or deletes that item, one without adds an item), the
 * proration mode and the quote to reproduce.
 *
 * @since 0.1.0
 */
import { Errors, Ids, type ItemRules, PriceChanges, PriceRules } from "@recur/core"
import { Effect, Option, Result, Schema } from "effect"

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * The proration modes an item change takes (`always_invoice` is the default).
 *
 * @since 0.1.0
 */
export const ITEM_PRORATIONS = ["always_invoice", "create_prorations", "none", "next_cycle"] as const

/**
 * One entry of an item change, as it arrives.
 *
 * @since 0.1.0
 */
export const ItemEntry = Schema.Struct({
  /** The item to update or delete (`si_…`); absent: a new item. */
  id: Schema.optional(Schema.String),
  /** The price to move the item to, or the new item's price (required then). */
  price_id: Schema.optional(Schema.String),
  /** The item's quantity (a whole number from 1); a new item's defaults to 1. */
  quantity: Schema.optional(Schema.Union([Schema.String, Schema.Number])),
  /** `true` removes the item named by `id` (not the base item). */
  deleted: Schema.optional(Schema.Boolean)
})

/**
 * The body of `POST /api/v1/subscription/{id}/items` and of `…/items/preview`.
 *
 * @since 0.1.0
 */
export const ItemChange = Schema.Struct({
  items: Schema.Array(ItemEntry),
  proration: Schema.optional(Schema.String),
  quote_id: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export type ItemChange = typeof ItemChange.Type

/**
 * Decodes an item change for the subscription `subscriptionId` (a path id: one of another shape
 * is simply not found). Each refused part names its entry: `items[2].price_id`.
 *
 * @since 0.1.0
 */
export const itemCommand = (
  subscriptionId: string,
  body: ItemChange
): Effect.Effect<ItemRules.ItemChangeCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const sub = Ids.SubscriptionId.makeOption(subscriptionId)
    if (Option.isNone(sub)) return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
    const proration = body.proration ?? "always_invoice"
    if (!(ITEM_PRORATIONS as ReadonlyArray<string>).includes(proration))
      return yield* invalid("proration", `must be one of ${ITEM_PRORATIONS.join(", ")}`)
    if (body.items.length < 1 || body.items.length > 20) return yield* invalid("items", "must hold 1 to 20 entries")
    const entries: Array<ItemRules.ItemEntry> = []
    const seen = new Set<string>()
    for (const [i, e] of body.items.entries()) {
      const at = (field: string) => `items[${i}].${field}`
      if (e.id !== undefined) {
        if (!/^si_[0-9a-z]{1,64}$/.test(e.id))
          return yield* new Errors.NotFound({ resource: "subscription_item", id: e.id, param: at("id") })
        if (seen.has(e.id)) return yield* invalid(at("id"), `item ${e.id} is named twice`)
        seen.add(e.id)
      }
      if (e.deleted !== undefined && e.deleted !== true) return yield* invalid(at("deleted"), "must be true when given")
      if (e.deleted === true && e.id === undefined)
        return yield* invalid(at("deleted"), "deletes the item named by id: id is required")
      if (e.deleted === true && (e.price_id !== undefined || e.quantity !== undefined))
        return yield* invalid(at("deleted"), "a deleted item takes no price_id or quantity")
      if (e.id === undefined && e.price_id === undefined)
        return yield* invalid(at("price_id"), "is required to add an item (or name the item to change by id)")
      if (e.id !== undefined && e.deleted !== true && e.price_id === undefined && e.quantity === undefined)
        return yield* invalid(at("id"), "names an item to change: give price_id, quantity or deleted")
      let priceId = Option.none<Ids.PriceId>()
      if (e.price_id !== undefined) {
        priceId = Ids.PriceId.makeOption(e.price_id)
        if (Option.isNone(priceId))
          return yield* new Errors.NotFound({ resource: "price", id: e.price_id, param: at("price_id") })
      }
      let quantity = Option.none<bigint>()
      if (e.quantity !== undefined) {
        const q = PriceRules.validateQuantity(at("quantity"), String(e.quantity))
        if (Result.isFailure(q)) return yield* invalid(at("quantity"), q.failure.message)
        quantity = Option.some(q.success)
      }
      entries.push({ id: Option.fromUndefinedOr(e.id), priceId, quantity, deleted: e.deleted === true })
    }
    if (body.quote_id !== undefined && PriceChanges.quoteInstant(body.quote_id) === undefined)
      return yield* invalid("quote_id", "malformed quote id")
    return {
      subscriptionId: sub.value,
      items: entries,
      proration: proration as ItemRules.ItemProration,
      quoteId: Option.fromUndefinedOr(body.quote_id)
    }
  })
