/**
 * The handlers of the entitlements group.
 *
 * @since 0.1.0
 */
import { Entitlements } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, ok } from "./Shared.js"

/**
 * The handlers of the entitlements group.
 *
 * @since 0.1.0
 */
export const entitlementsLive = HttpApiBuilder.group(BillingApi, "entitlements", (handlers) =>
  Effect.gen(function* () {
    const entitlements = yield* Entitlements.Entitlements
    return handlers
      .handle("list", ({ params: path }) => call((m) => Effect.map(entitlements.list(m, path.customer_id), ok)))
      .handle("check", ({ params: path }) =>
        call((m) => Effect.map(entitlements.check(m, path.customer_id, path.feature), ok))
      )
      .handle("settings", () => call((m) => Effect.map(entitlements.settings(m), ok)))
      .handle("updateSettings", ({ payload }) => call((m) => Effect.map(entitlements.setSettings(m, payload), ok)))
      .handle("setProductEntitlements", ({ params: path, payload }) =>
        call((m) => Effect.map(entitlements.setProductFeatures(m, path.product_id, payload.entitlements), ok))
      )
  })
)
