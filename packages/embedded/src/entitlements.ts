/**
 * The facade's entitlements methods: "may this customer use this feature?", answered from the
 * subscriptions as committed (no webhook lag), and the merchant's policy of which subscription
 * states grant. Kept apart from `createBilling.ts`, which only mounts it.
 *
 * @since 0.1.0
 */
import { Entitlement, Entitlements, type Entitlement as EntitlementNs } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Effect, Schema } from "effect"

/** A customer's entitlements as `GET /api/v1/customer/{customer_id}/entitlements` returns them. */
export type CustomerEntitlementsJson = typeof EntitlementNs.CustomerEntitlements.Encoded
/** One feature as `GET /api/v1/customer/{customer_id}/entitlements/{feature}` returns it. */
export type EntitlementCheckJson = typeof EntitlementNs.EntitlementCheck.Encoded
/** The merchant's entitlement settings as `GET /api/v1/entitlement_settings` returns them. */
export type EntitlementSettingsJson = typeof EntitlementNs.EntitlementSettings.Encoded

/**
 * `billing.entitlements`.
 *
 * @since 0.1.0
 */
export interface EntitlementsClient {
  /**
   * `GET /api/v1/customer/{customer_id}/entitlements/{feature}`: the feature's value (`null` when no
   * granting subscription has it) and whether it is enabled (`true`, or a number above 0).
   */
  readonly check: (merchantId: string, customerId: string, feature: string) => Promise<EntitlementCheckJson>
  /**
   * `GET /api/v1/customer/{customer_id}/entitlements`: the merged features of the customer's
   * subscriptions that grant (booleans OR, numbers the largest) and their ids.
   */
  readonly list: (merchantId: string, customerId: string) => Promise<CustomerEntitlementsJson>
  /**
   * `POST /api/v1/product/{product_id}/entitlements`: replaces the features the product declares
   * (customers' entitlements follow on the next read; no event is sent for this change).
   */
  readonly setProductEntitlements: (
    merchantId: string,
    productId: string,
    entitlements: Readonly<Record<string, boolean | number>>
  ) => Promise<{ product_id: string; entitlements: Record<string, boolean | number> }>
  /** `GET /api/v1/entitlement_settings`: the subscription states that grant. */
  readonly settings: (merchantId: string) => Promise<EntitlementSettingsJson>
  /**
   * `POST /api/v1/entitlement_settings`: `granting_statuses` among trial, active, past_due,
   * paused, unpaid (`null`: the default trial, active, past_due).
   */
  readonly updateSettings: (
    merchantId: string,
    input: (typeof RequestBodies.EntitlementSettings)["Encoded"]
  ) => Promise<EntitlementSettingsJson>
}

/**
 * The methods over the facade's runner and input decoder.
 *
 * @since 0.1.0
 */
export const entitlementsClient = <R>(
  run: <A, E>(effect: Effect.Effect<A, E, R | Entitlements.Entitlements>) => Promise<A>,
  decode: <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown) => Effect.Effect<S["Type"], unknown>
): EntitlementsClient => {
  const use = <A, E>(f: (e: Entitlements.Entitlements["Service"]) => Effect.Effect<A, E>) =>
    Entitlements.Entitlements.use(f)
  const id = (param: string, value: unknown) => decode(Schema.String.annotate({ identifier: param }), value)
  return {
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
  }
}
