/**
 * The entitlements service: "may this customer use this feature?", answered from the
 * subscriptions as committed (computed on read in one transaction, so never behind a change),
 * and the merchant's policy of which subscription states grant.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { merchantNow } from "../kernel/ServiceSupport.js"
import { Storage } from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Entitlement from "./Entitlement.js"
import { entitlementStore } from "./EntitlementStore.js"

/**
 * A merchant's entitlement settings as given: the states that grant (`null` or absent: the
 * default, trial, active and past_due).
 *
 * @since 0.1.0
 */
export interface UpdateEntitlementSettings {
  readonly granting_statuses?: ReadonlyArray<string> | null | undefined
}

/**
 * The entitlements service.
 *
 * @since 0.1.0
 */
export class Entitlements extends Context.Service<Entitlements>()("@recur/core/Entitlements", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const merchants = yield* Merchants.Merchants
    const customers = storage.repository(Entities.customer)
    const products = storage.repository(Entities.product)
    const now = merchantNow(storage)
    const store = entitlementStore(storage)

    const mustBeCustomer = (merchantId: string, customerId: string) =>
      Effect.flatMap(customers.get(merchantId, customerId), (found) =>
        Option.isNone(found) || found.value.value.deleted_at !== null
          ? Effect.fail(new Errors.NotFound({ resource: "customer", id: customerId }))
          : Effect.void
      )

    /** The customer's entitlements: the merged features of its subscriptions that grant. */
    const list = Effect.fn("Entitlements.list")(function* (merchantId: string, customerId: string) {
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* mustBeCustomer(merchantId, customerId)
          return yield* store.entitlementsOf(merchantId, customerId)
        })
      )
    })

    /** One feature of the customer: its value and whether it is enabled. */
    const check = Effect.fn("Entitlements.check")(function* (merchantId: string, customerId: string, feature: string) {
      if (!Entitlement.FEATURE_KEY.test(feature))
        return yield* new Errors.InvalidParameter({ param: "feature", reason: "must match ^[a-z][a-z0-9_]{0,63}$" })
      const all = yield* list(merchantId, customerId)
      const value = Object.hasOwn(all.features, feature) ? all.features[feature]! : undefined
      return new Entitlement.EntitlementCheck({
        customer_id: customerId,
        feature,
        enabled: Entitlement.enabled(value),
        value: value ?? null
      })
    })

    /** The merchant's policy: which subscription states grant. */
    const settings = Effect.fn("Entitlements.settings")(function* (merchantId: string) {
      const merchant = yield* merchants.get(merchantId)
      return new Entitlement.EntitlementSettings({
        granting_statuses: Entitlement.grantingOf(merchant.entitlement_statuses)
      })
    })

    /**
     * Sets which subscription states grant. Takes effect on the next read; it writes no
     * `v2.entitlements.updated` for customers whose set it changes (those events come from
     * subscription changes).
     */
    const setSettings = Effect.fn("Entitlements.setSettings")(function* (
      merchantId: string,
      input: UpdateEntitlementSettings
    ) {
      const given = input.granting_statuses ?? null
      if (given !== null) {
        const unknown = given.find((s) => !(Entitlement.GrantingStatus.literals as ReadonlyArray<string>).includes(s))
        if (unknown !== undefined)
          return yield* new Errors.InvalidParameter({
            param: "granting_statuses",
            reason: `"${unknown}" cannot grant: one of ${Entitlement.GrantingStatus.literals.join(", ")}`
          })
      }
      const statuses =
        given === null
          ? null
          : Entitlement.GrantingStatus.literals.filter((s) => (given as ReadonlyArray<string>).includes(s))
      const merchant = yield* merchants.setEntitlementStatuses(merchantId, statuses)
      return new Entitlement.EntitlementSettings({
        granting_statuses: Entitlement.grantingOf(merchant.entitlement_statuses)
      })
    })

    /**
     * Replaces the features a product declares. Customers' entitlements follow on the next read;
     * no `v2.entitlements.updated` is written for them (only subscription changes write it).
     */
    const setProductFeatures = Effect.fn("Entitlements.setProductFeatures")(function* (
      merchantId: string,
      productId: string,
      features: Readonly<Record<string, boolean | number>>
    ) {
      const reason = Entitlement.invalidFeatures(features)
      if (reason !== undefined) return yield* new Errors.InvalidParameter({ param: "entitlements", reason })
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const found = yield* products.get(merchantId, productId)
          if (Option.isNone(found)) return yield* new Errors.NotFound({ resource: "product", id: productId })
          const at = yield* now(merchantId)
          const next = { ...found.value.value, entitlements: { ...features }, updated_at: at }
          yield* products.update(next, found.value.version).pipe(
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "product", id: productId }))
            ),
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
          )
          return { product_id: productId, entitlements: next.entitlements }
        })
      )
    })

    return { list, check, settings, setSettings, setProductFeatures } as const
  })
}) {
  /** The live implementation: needs `Storage` and `Merchants`. */
  static readonly layer = Layer.effect(this, this.make)
}
