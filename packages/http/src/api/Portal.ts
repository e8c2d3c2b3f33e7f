/**
 * The customer portal group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { PortalSession } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Authentication } from "./Shared.js"

/**
 * The customer portal: a signed, short-lived link to one customer's billing.
 *
 * @since 0.1.0
 */
export class PortalGroup extends HttpApiGroup.make("portal")
  .add(
    HttpApiEndpoint.post("createSession", "/api/v1/customer-portal/auth", {
      payload: RequestBodies.PortalSession,
      success: Envelope(Schema.Struct({ portal_session: PortalSession.PortalSession })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("revokeSession", "/api/v1/customer-portal/session/:portal_session_id/revoke", {
      params: Schema.Struct({ portal_session_id: Schema.String }),
      success: Envelope(Schema.Struct({ portal_session: PortalSession.PortalSession })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("settings", "/api/v1/portal_settings", {
      success: Envelope(PortalSession.PortalSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateSettings", "/api/v1/portal_settings", {
      payload: RequestBodies.PortalSettings,
      success: Envelope(PortalSession.PortalSettings),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customer portal") {}
