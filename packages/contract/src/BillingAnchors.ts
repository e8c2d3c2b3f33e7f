/**
 * The billing cycle anchor a checkout may choose (`billing_cycle_anchor`, Stripe's name): its
 * request fields, and their decoding into the session command's `billingAnchor`. Kept beside
 * `Requests` so the one-price session body stays as the seed has it.
 *
 * @since 0.1.0
 */
import type { Checkout } from "@recur/core"
import { Errors } from "@recur/core"
import { Effect, Schema } from "effect"
import { type SessionRequest, sessionCommand } from "./Requests.js"

/**
 * The fields `POST /api/v1/session` takes for an anchor: `billing_cycle_anchor`, an RFC 3339
 * UTC instant after now and at most one billing interval ahead (e.g. `2026-02-01T00:00:00Z` for
 * the 1st of the month), and `proration_behavior`: `create_prorations` (default: the short first
 * period up to the anchor costs its share of a whole period under the merchant's proration
 * policy) or `none` (it is free).
 *
 * @since 0.1.0
 */
export const AnchorFields = {
  billing_cycle_anchor: Schema.optional(Schema.String),
  proration_behavior: Schema.optional(Schema.Literals(["create_prorations", "none"]))
}

/**
 * A session body with the anchor fields.
 *
 * @since 0.1.0
 */
export interface AnchoredSessionRequest extends SessionRequest {
  readonly billing_cycle_anchor?: string | undefined
  readonly proration_behavior?: "create_prorations" | "none" | undefined
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * The latest instant a request may name for a date the engine computes later dates from (an
 * anchor, a preview's failure): 9999-01-01, so every date derived from it stays a valid RFC 3339
 * date (year ≤ 9999).
 *
 * @since 0.1.0
 */
export const LATEST = Date.UTC(9999, 0, 1)

/**
 * Decodes a session body with its anchor: `Requests.sessionCommand` and then the anchor, which
 * must be a timestamp, in mode checkout only; `proration_behavior` needs an anchor. Whether the
 * anchor fits the price and the clock (after now, within one interval, no trial) is the engine's
 * check (`BillingAnchor.refusal`, a 400 naming `billing_cycle_anchor`).
 *
 * @example
 * anchoredSessionCommand({ email: "a@b.co", line_items: [{ price_id }], billing_cycle_anchor: "2026-02-01T00:00:00Z" })
 * @since 0.1.0
 */
export const anchoredSessionCommand = (
  input: AnchoredSessionRequest
): Effect.Effect<Checkout.SessionCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const command = yield* sessionCommand(input)
    const text = input.billing_cycle_anchor
    if (text === undefined) {
      if (input.proration_behavior !== undefined)
        return yield* Errors.invalid("proration_behavior", "applies with billing_cycle_anchor only")
      return command
    }
    const anchor = RFC3339.test(text) ? Date.parse(text) : Number.NaN
    if (Number.isNaN(anchor) || anchor > LATEST)
      return yield* Errors.invalid(
        "billing_cycle_anchor",
        "must be an RFC 3339 UTC timestamp, e.g. 2026-12-01T00:00:00Z"
      )
    if (command.mode !== "checkout")
      return yield* Errors.invalid("billing_cycle_anchor", "applies to mode checkout only")
    return { ...command, billingAnchor: { anchor, behavior: input.proration_behavior ?? "create_prorations" } }
  })
