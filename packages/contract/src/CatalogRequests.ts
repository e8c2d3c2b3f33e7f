/**
 * The catalog's requests added by issue 33 (kept out of `Requests.ts`): a catalog migration's
 * body, decoded into the engine's `PriceMigrations.MigrationCommand`, and the outcome filter of
 * its lines. The REST adapter and the Promise facade decode the same way, so both refuse the
 * same input naming the same field.
 *
 * @since 0.1.0
 */
import { Errors, PriceMigration, type PriceMigrations } from "@recur/core"
import { Effect, Schema } from "effect"

/**
 * The body of `POST /api/v1/price/{price_id}/migrations`: the version moved from, the version
 * moved to (both of the price), and when (`next_cycle`, the default and only value).
 *
 * @since 0.1.0
 */
export const CreatePriceMigration = Schema.Struct({
  from_version_id: Schema.optional(Schema.String),
  to_version_id: Schema.optional(Schema.String),
  effective: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 */
export type CreatePriceMigration = typeof CreatePriceMigration.Type

const required = (param: string, value: string | undefined) =>
  value === undefined || value.trim() === ""
    ? Effect.fail(new Errors.InvalidParameter({ param, reason: "is required" }))
    : Effect.succeed(value.trim())

/**
 * A migration's body as the engine's command: both versions required (`InvalidParameter` naming
 * the missing one); `effective` checked by the engine.
 *
 * @since 0.1.0
 */
export const migrationCommand = (
  body: CreatePriceMigration
): Effect.Effect<PriceMigrations.MigrationCommand, Errors.InvalidParameter> =>
  Effect.gen(function* () {
    const from_version_id = yield* required("from_version_id", body.from_version_id)
    const to_version_id = yield* required("to_version_id", body.to_version_id)
    return { from_version_id, to_version_id, ...(body.effective !== undefined ? { effective: body.effective } : {}) }
  })

/**
 * The `outcome` filter of a migration's lines: `pending`, `migrated` or `skipped`
 * (`InvalidParameter` naming `outcome` otherwise).
 *
 * @since 0.1.0
 */
export const lineOutcome = (
  outcome: string | undefined
): Effect.Effect<PriceMigration.LineOutcome | undefined, Errors.InvalidParameter> =>
  outcome === undefined
    ? Effect.succeed(undefined)
    : Schema.is(PriceMigration.LineOutcome)(outcome)
      ? Effect.succeed(outcome)
      : Effect.fail(new Errors.InvalidParameter({ param: "outcome", reason: "must be pending, migrated or skipped" }))
