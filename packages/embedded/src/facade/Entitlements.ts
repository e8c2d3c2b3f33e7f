/**
 * The facade's entitlements group: "may this customer use this feature?", answered from the
 * subscriptions as committed (no webhook lag), and the merchant's policy of which subscription
 * states grant.
 *
 * @since 0.1.0
 */
import { RequestBodies } from "@recur/contract"
import { Entitlement, Entitlements } from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, type Kit } from "./Kit.js"

const use = <A, E>(f: (e: Entitlements.Entitlements["Service"]) => Effect.Effect<A, E>) =>
  Entitlements.Entitlements.use(f)

/** `entitlements`. @since 0.1.0 */
export const entitlements = ({ run }: Kit<Services>): BillingClient["entitlements"] => ({
  check: (merchantId, customerId, feature) =>
    run(
      Effect.all([id("customer_id", customerId), id("feature", feature)]).pipe(
        Effect.flatMap(([c, f]) => use((e) => e.check(merchantId, c, f))),
        Effect.map(Schema.encodeSync(Entitlement.EntitlementCheck))
      )
    ),
  list: (merchantId, customerId) =>
    run(
      id("customer_id", customerId).pipe(
        Effect.flatMap((c) => use((e) => e.list(merchantId, c))),
        Effect.map(Schema.encodeSync(Entitlement.CustomerEntitlements))
      )
    ),
  setProductEntitlements: (merchantId, productId, entitlements) =>
    run(
      Effect.all([id("product_id", productId), decode(RequestBodies.ProductEntitlements, { entitlements })]).pipe(
        Effect.flatMap(([p, body]) => use((e) => e.setProductFeatures(merchantId, p, body.entitlements))),
        Effect.map((r) => ({ product_id: r.product_id, entitlements: { ...r.entitlements } }))
      )
    ),
  settings: (merchantId) =>
    run(use((e) => e.settings(merchantId)).pipe(Effect.map(Schema.encodeSync(Entitlement.EntitlementSettings)))),
  updateSettings: (merchantId, input) =>
    run(
      decode(RequestBodies.EntitlementSettings, input).pipe(
        Effect.flatMap((i) => use((e) => e.setSettings(merchantId, i))),
        Effect.map(Schema.encodeSync(Entitlement.EntitlementSettings))
      )
    )
})
