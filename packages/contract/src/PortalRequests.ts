/**
 * The portal settings' quantity rules as the merchant API takes them (`adjust_quantities` of
 * `POST /api/v1/portal_settings`): prices whose quantity customers may change in the portal,
 * each with its bounds.
 *
 * @since 0.1.0
 */
import type { PortalSession } from "@recur/core"
import { Schema } from "effect"

/**
 * `adjust_quantities`: `[{ price_id, min?, max }]` — `min` defaults to 1. Whether the bounds
 * hold (1 ≤ min ≤ max ≤ 999,999,999, each price once) and each price is sold by quantity the
 * engine checks, naming `adjust_quantities[i].…`.
 *
 * @since 0.1.0
 */
export const PortalQuantityRules = Schema.Array(
  Schema.Struct({
    price_id: Schema.String,
    min: Schema.optional(Schema.Int),
    max: Schema.Int
  })
)

/**
 * The rules as the engine keeps them (`min` 1 when left out).
 *
 * @example
 * quantityRules([{ price_id: "pri_seats", max: 50 }]) // [{ price_id: "pri_seats", min: 1, max: 50 }]
 * @since 0.1.0
 */
export const quantityRules = (
  given: ReadonlyArray<{ readonly price_id: string; readonly min?: number | undefined; readonly max: number }>
): ReadonlyArray<PortalSession.QuantityRule> =>
  given.map((r) => ({ price_id: r.price_id, min: r.min ?? 1, max: r.max }))
