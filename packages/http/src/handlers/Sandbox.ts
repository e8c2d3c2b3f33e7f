/**
 * The handlers of the sandbox group (test helpers).
 *
 * @since 0.1.0
 */
import { Common, Errors, SandboxClock, Settings } from "@recur/core"
import { DateTime, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, invalid, instant } from "./Shared.js"

/**
 * The handlers of the sandbox group.
 *
 * @since 0.1.0
 */
export const sandboxLive = HttpApiBuilder.group(BillingApi, "sandbox", (handlers) =>
  Effect.gen(function* () {
    const sandboxClock = yield* SandboxClock.SandboxClock
    const sandboxOnly = (m: string, merchant: { readonly mode: string }) =>
      merchant.mode === "sandbox"
        ? Effect.void
        : Effect.fail(
            new Errors.StateConflict({
              resource: "merchant",
              id: m,
              state: "live",
              reason: "test helpers need a sandbox key"
            })
          )
    const wire = (d: DateTime.Utc) => Common.formatInstant(DateTime.toEpochMillis(d))
    return handlers
      .handle("clock", () =>
        call((m, merchant) =>
          Effect.gen(function* () {
            yield* sandboxOnly(m, merchant)
            const c = yield* sandboxClock.clockOf(m)
            return ok({
              frozen_time: c.merchant.frozen_time === null ? null : wire(c.merchant.frozen_time),
              target_time: Option.match(c.target, { onNone: () => null, onSome: Common.formatInstant }),
              advancing: Option.isSome(c.target)
            })
          })
        )
      )
      .handle("advanceClock", ({ payload }) =>
        call((m, merchant) =>
          Effect.gen(function* () {
            yield* sandboxOnly(m, merchant)
            const to = payload.frozen_time === undefined ? undefined : instant(payload.frozen_time)
            if (to === undefined) return yield* invalid("frozen_time", "must be an RFC 3339 timestamp")
            const settings = yield* Settings.Settings
            const r = yield* sandboxClock.advanceTo(m, to, { maxItems: settings.advanceClockMaxItems })
            // past the request's bound, the rest runs in the background, a chunk at a time
            if (!r.complete && r.ran > 0) yield* sandboxClock.continueInBackground(m, to)
            return ok({
              frozen_time: wire(r.merchant.frozen_time!),
              target_time: Common.formatInstant(to),
              complete: r.complete
            })
          })
        )
      )
  })
)
