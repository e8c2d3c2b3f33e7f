/**
 * The line items of `POST /api/v1/session`: 1 to 20 in mode checkout, each a price with its
 * quantity and the payer's bounds, decoded into core's `SessionItem`s — the first recurring
 * line the subscription's base item, the other recurring lines its further items, one-time lines
 * charged with its first invoice (issue 33). A field at fault is named with its line:
 * `line_items[2].quantity`.
 *
 * @since 0.1.0
 */
import { type Checkout, Errors, Ids, PriceRules, SubscriptionItems } from "@recur/core"
import { Effect, Option, Result } from "effect"

/**
 * One line item as the body gives it.
 *
 * @since 0.1.0
 */
export interface SessionLine {
  readonly price_id?: string | undefined
  readonly quantity?: string | undefined
  readonly quantity_editable?: boolean | undefined
  readonly quantity_min?: string | undefined
  readonly quantity_max?: string | undefined
}

/** A core session item (`Checkout.SessionCommand`'s `item`). */
type SessionItem = Checkout.SessionCommand["item"] extends Option.Option<infer I> ? I : never

/**
 * The request field of line `index`'s `field` (`line_items[1].price_id`).
 *
 * @since 0.1.0
 */
export const lineField = (index: number, field: string) => `line_items[${index}].${field}`

/**
 * Decodes one line item (`index` in the body): its price id, its quantity (1 when absent) and
 * the payer's bounds, each a quantity, min ≤ max, the quantity inside them.
 *
 * @since 0.1.0
 */
export const sessionLine = (
  line: SessionLine,
  index: number
): Effect.Effect<SessionItem, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const field = (name: string) => lineField(index, name)
    const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })
    if (!line.price_id) return yield* invalid(field("price_id"), "is required")
    const priceId = Ids.PriceId.makeOption(line.price_id)
    if (Option.isNone(priceId))
      return yield* new Errors.NotFound({ resource: "price", id: line.price_id, param: field("price_id") })
    let quantity = 1n
    if (line.quantity !== undefined) {
      const q = PriceRules.validateQuantity(field("quantity"), line.quantity)
      if (Result.isFailure(q)) return yield* invalid(q.failure.field, q.failure.message)
      quantity = q.success
    }
    const bound = (name: "quantity_min" | "quantity_max") => {
      const text = line[name]
      if (text === undefined || text === "") return Result.succeed(null)
      return PriceRules.validateQuantity(field(name), text)
    }
    const min = bound("quantity_min")
    if (Result.isFailure(min)) return yield* invalid(min.failure.field, min.failure.message)
    const max = bound("quantity_max")
    if (Result.isFailure(max)) return yield* invalid(max.failure.field, max.failure.message)
    if (min.success !== null && max.success !== null && min.success > max.success)
      return yield* invalid(field("quantity_min"), "must not be above quantity_max")
    if (min.success !== null && quantity < min.success)
      return yield* invalid(field("quantity"), `must be at least quantity_min (${min.success})`)
    if (max.success !== null && quantity > max.success)
      return yield* invalid(field("quantity"), `must be at most quantity_max (${max.success})`)
    return {
      priceId: priceId.value,
      quantity,
      editable: line.quantity_editable ?? false,
      min: min.success === null ? null : min.success.toString(),
      max: max.success === null ? null : max.success.toString()
    }
  })

/**
 * Decodes a session's line items in mode checkout: 1 to {@link SubscriptionItems.MAX_ITEMS},
 * the first and then the others.
 *
 * @since 0.1.0
 */
export const sessionLines = (
  lines: ReadonlyArray<SessionLine>
): Effect.Effect<
  { readonly first: SessionItem; readonly others: ReadonlyArray<SessionItem> },
  Errors.InvalidParameter | Errors.NotFound
> =>
  Effect.gen(function* () {
    if (lines.length < 1 || lines.length > SubscriptionItems.MAX_ITEMS)
      return yield* new Errors.InvalidParameter({
        param: "line_items",
        reason: `must hold 1 to ${SubscriptionItems.MAX_ITEMS} line items`
      })
    const items = yield* Effect.forEach(lines, sessionLine)
    return { first: items[0]!, others: items.slice(1) }
  })
