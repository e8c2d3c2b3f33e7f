/**
 * The handlers of the checkout sessions group.
 *
 * @since 0.1.0
 */
import { BillingAnchors } from "@recur/contract"
import { Checkout } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call } from "./Shared.js"

/**
 * The handlers of the checkout sessions group.
 *
 * @since 0.1.0
 */
export const checkoutLive = HttpApiBuilder.group(BillingApi, "checkout", (handlers) =>
  Effect.gen(function* () {
    const checkout = yield* Checkout.Checkout
    return handlers
      .handle("create", ({ payload }) =>
        call((m) =>
          BillingAnchors.anchoredSessionCommand(payload).pipe(
            Effect.flatMap((command) => checkout.createSession(m, command)),
            Effect.map((s) => ok({ session_id: s.session_id, session_url: s.session_url }))
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(checkout.getSession(m, path.session_id), (session) => ok({ session })))
      )
  })
)
