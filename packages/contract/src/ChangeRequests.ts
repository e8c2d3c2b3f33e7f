/**
 * The body of a subscription's price or quantity change (`POST /api/v1/subscription/{id}` and
 * its preview) and its decoding into the engine's `PriceChanges.ChangeCommand`: the effective
 * time, the proration mode (`always_invoice` or its alias `immediate`, `create_prorations`,
 * `none`), the new price or quantity and the quote to reproduce.
 *
 * @since 0.1.0
 */
import { Errors, Ids, PriceChanges, PriceRules } from "@recur/core"
import { Effect, Option, Result } from "effect"

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

const missing = (resource: string, id: string, param: string) => new Errors.NotFound({ resource, id, param })

/**
 * The proration modes a change takes, as the API spells them (`immediate` is `always_invoice`'s
 * alias, the seed's name).
 *
 * @since 0.1.0
 */
export const PRORATIONS = ["always_invoice", "create_prorations", "none", "immediate"] as const

const isProration = (s: string): s is PriceChanges.ChangeCommand["proration"] =>
  (PRORATIONS as ReadonlyArray<string>).includes(s)

/**
 * The body of `POST /api/v1/subscription/{id}` and of its preview: strings as they arrive.
 *
 * @since 0.1.0
 */
export interface ChangeRequest {
  readonly price_id?: string | undefined
  readonly quantity?: string | undefined
  readonly effective_type?: string | undefined
  readonly proration?: string | undefined
  readonly quote_id?: string | undefined
}

/**
 * Decodes a change request for the subscription `subscriptionId` (a path id: one of another
 * shape is simply not found).
 *
 * @since 0.1.0
 */
export const changeCommand = (
  subscriptionId: string,
  body: ChangeRequest
): Effect.Effect<PriceChanges.ChangeCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const sub = Ids.SubscriptionId.makeOption(subscriptionId)
    if (Option.isNone(sub)) return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
    const effective = body.effective_type ?? "immediate"
    if (effective !== "immediate" && effective !== "end_of_period")
      return yield* invalid("effective_type", "must be immediate or end_of_period")
    const proration = body.proration ?? "immediate"
    if (!isProration(proration)) return yield* invalid("proration", `must be one of ${PRORATIONS.join(", ")}`)
    if (body.price_id === undefined && body.quantity === undefined)
      return yield* invalid("price_id", "price_id or quantity is required")
    let priceId = Option.none<Ids.PriceId>()
    if (body.price_id !== undefined) {
      priceId = Ids.PriceId.makeOption(body.price_id)
      if (Option.isNone(priceId)) return yield* missing("price", body.price_id, "price_id")
    }
    let quantity = Option.none<bigint>()
    if (body.quantity !== undefined) {
      const q = PriceRules.validateQuantity("quantity", body.quantity)
      if (Result.isFailure(q)) return yield* invalid("quantity", q.failure.message)
      quantity = Option.some(q.success)
    }
    if (body.quote_id !== undefined && PriceChanges.quoteInstant(body.quote_id) === undefined)
      return yield* invalid("quote_id", "malformed quote id")
    return {
      subscriptionId: sub.value,
      priceId,
      quantity,
      effective,
      proration,
      quoteId: Option.fromUndefinedOr(body.quote_id)
    }
  })
