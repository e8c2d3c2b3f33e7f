/**
 * The checkout sessions group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { CheckoutSession } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Authentication } from "./Shared.js"

/**
 * The body of `POST /api/v1/session` (`@recur/contract`'s `RequestBodies.CreateSession`).
 *
 * @since 0.1.0
 */
export const SessionPayload = RequestBodies.CreateSession

/**
 * Checkout sessions.
 *
 * @since 0.1.0
 */
export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/session", {
      payload: RequestBodies.CreateSession,
      success: Envelope(Schema.Struct({ session_id: Schema.String, session_url: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/session/:session_id", {
      params: Schema.Struct({ session_id: Schema.String }),
      success: Envelope(Schema.Struct({ session: CheckoutSession.CheckoutSession })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Checkout sessions") {}
