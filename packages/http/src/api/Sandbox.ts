/**
 * The sandbox group (test helpers, `sk_test_…` keys only): its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Authentication } from "./Shared.js"

/**
 * Sandbox helpers (keys `sk_test_…` only).
 *
 * @since 0.1.0
 */
export class SandboxGroup extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("advanceClock", "/api/v1/test_helpers/advance_clock", {
      payload: Schema.Struct({ frozen_time: Schema.optional(Schema.String) }),
      success: Envelope(
        Schema.Struct({
          frozen_time: Schema.String.annotate({ description: "where the clock is now" }),
          target_time: Schema.String.annotate({ description: "the frozen_time asked for" }),
          complete: Schema.Boolean.annotate({
            description:
              "false when the request's work bound (2,000 items by default) stopped the clock before target_time; the advance then continues in the background (see GET /api/v1/test_helpers/clock)"
          })
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("clock", "/api/v1/test_helpers/clock", {
      success: Envelope(
        Schema.Struct({
          frozen_time: Schema.NullOr(Schema.String).annotate({ description: "where the clock is now" }),
          target_time: Schema.NullOr(Schema.String).annotate({
            description: "where a background advance is taking it, or null"
          }),
          advancing: Schema.Boolean
        })
      ),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox") {}
