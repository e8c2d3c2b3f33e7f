/**
 * The handlers of the customer portal group.
 *
 * @since 0.1.0
 */
import { Requests } from "@recur/contract"
import { Portal } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call } from "./Shared.js"

/**
 * The handlers of the customer portal group.
 *
 * @since 0.1.0
 */
export const portalLive = HttpApiBuilder.group(BillingApi, "portal", (handlers) =>
  Effect.gen(function* () {
    const portal = yield* Portal.Portal
    return handlers
      .handle("createSession", ({ payload }) =>
        call((m) =>
          Requests.portalSessionCommand(payload).pipe(
            Effect.flatMap((command) =>
              Requests.referencedBy("customer_id")(Requests.refusedAsParameter(portal.createSession(m, command)))
            ),
            Effect.map((portal_session) => ok({ portal_session }))
          )
        )
      )
      .handle("revokeSession", ({ params }) =>
        call((m) =>
          Effect.map(portal.revokeSession(m, params.portal_session_id), (portal_session) => ok({ portal_session }))
        )
      )
      .handle("settings", () => call((m) => Effect.map(portal.settingsOf(m), ok)))
      .handle("updateSettings", ({ payload }) =>
        call((m) =>
          Requests.portalSettingsCommand(payload).pipe(
            Effect.flatMap((command) => Requests.refusedAsParameter(portal.setSettings(m, command))),
            Effect.map(ok)
          )
        )
      )
  })
)
