/**
 * The dunning requests of the merchant API: what each class of decline does, as the billing
 * settings take it (`dunning_on_decline`), and the body of `POST /api/v1/dunning/preview`, with
 * its decoding into the engine's `Dunning.PreviewInput`.
 *
 * @since 0.1.0
 */
import { Common, type Dunning, DunningPolicy, Errors } from "@recur/core"
import { Effect, Schema } from "effect"
import { LATEST } from "./BillingAnchors.js"

const DECLINE_CLASSES: ReadonlySet<string> = new Set(["hard", "soft", "expired_card"])

/**
 * `dunning_on_decline` as a request gives it: the classes given (`hard`, `soft`,
 * `expired_card`), each `retry` or `stop`; the others keep the policy in force. Any other key is
 * refused (400 naming it).
 *
 * @since 0.1.0
 */
export const DeclineRulesPatch = Schema.StructWithRest(
  Schema.Struct({
    hard: Schema.optional(DunningPolicy.DeclineAction),
    soft: Schema.optional(DunningPolicy.DeclineAction),
    expired_card: Schema.optional(DunningPolicy.DeclineAction)
  }),
  // any other key is refused, naming it: a typo in a policy (`expired` for `expired_card`) must
  // not be dropped silently (docs/decisions.md, "Unknown keys of dunning_on_decline")
  [
    Schema.Record(
      Schema.String.check(Schema.makeFilter((key: string) => !DECLINE_CLASSES.has(key))),
      Schema.Never.annotate({ message: "is not a class of decline: hard, soft or expired_card" })
    )
  ]
)

/**
 * The body of `POST /api/v1/dunning/preview`: the class of decline every charge meets
 * (required), when the renewal fails (`failed_at`, RFC 3339; default the merchant's clock now),
 * and a proposed policy — the fields given replace the merchant's policy in force.
 *
 * @since 0.1.0
 */
export const DunningPreview = Schema.Struct({
  decline_class: DunningPolicy.DeclineClass,
  failed_at: Schema.optional(Schema.String),
  dunning_retry_days: Schema.optional(Schema.Array(Schema.Finite)),
  dunning_final_state: Schema.optional(Schema.Literals(["unpaid", "canceled"])),
  dunning_on_decline: Schema.optional(DeclineRulesPatch)
})

/**
 * The engine's preview input of a decoded body: `failed_at` parsed (a malformed one is
 * `InvalidParameter` naming it).
 *
 * @example
 * previewInput({ decline_class: "hard", failed_at: "2026-01-01T00:00:00Z" })
 * @since 0.1.0
 */
export const previewInput = (
  body: typeof DunningPreview.Type
): Effect.Effect<Dunning.PreviewInput, Errors.InvalidParameter> => {
  const failedAt = body.failed_at === undefined ? undefined : Common.parseInstant(body.failed_at)
  if (body.failed_at !== undefined && failedAt === undefined)
    return Effect.fail(new Errors.InvalidParameter({ param: "failed_at", reason: "must be an RFC 3339 timestamp" }))
  // the anchor's bound: the timeline (at most 60 days of retries) then stays within year 9999
  if (failedAt !== undefined && failedAt > LATEST)
    return Effect.fail(
      new Errors.InvalidParameter({ param: "failed_at", reason: "must be no later than 9999-01-01T00:00:00Z" })
    )
  return Effect.succeed({
    decline_class: body.decline_class,
    failed_at: failedAt,
    dunning_retry_days: body.dunning_retry_days,
    dunning_final_state: body.dunning_final_state,
    dunning_on_decline: body.dunning_on_decline
  })
}
