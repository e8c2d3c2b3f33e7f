/**
 * Entitlements read from storage: a customer's live subscriptions and their products' and price
 * versions' features, computed on read (in the caller's transaction when there is one), and the
 * `v2.entitlements.updated` event written in the transaction of a subscription change that
 * altered a customer's set.
 */
import { Effect, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import { emit, knownMerchant, type StorageService } from "../kernel/ServiceSupport.js"
import type * as Subscription from "../subscriptions/Subscription.js"
import * as Entitlement from "./Entitlement.js"

/** One subscription's write: the record before (none when inserted) and after. */
export interface SubscriptionChange {
  readonly before: Subscription.Subscription | undefined
  readonly after: Subscription.Subscription
}

/** Reads and the change hook bound to one storage. */
export const entitlementStore = (storage: StorageService) => {
  const subs = storage.repository(Entities.subscription)
  const versions = storage.repository(Entities.priceVersion)
  const products = storage.repository(Entities.product)
  const merchants = storage.repository(Entities.merchant)

  /** The states that grant for the merchant (its policy, or the default). */
  const granting = (merchantId: string) =>
    Effect.gen(function* () {
      const known = yield* Effect.service(knownMerchant)
      if (known !== undefined && known.merchant_id === merchantId)
        return Entitlement.grantingOf(known.entitlement_statuses)
      const found = yield* merchants.get(merchantId, merchantId)
      return Entitlement.grantingOf(Option.isSome(found) ? found.value.value.entitlement_statuses : null)
    })

  /** The customer's subscriptions in a state some policy may grant (every page). */
  const customerSubs = (merchantId: string, customerId: string) =>
    Effect.gen(function* () {
      const out: Array<Subscription.Subscription> = []
      let after: string | undefined
      for (;;) {
        const page = yield* Effect.orDie(
          subs.list(merchantId, {
            filters: [
              { column: "customer_id", op: "in", values: [customerId] },
              { column: "status", op: "in", values: Entitlement.GrantingStatus.literals }
            ],
            limit: 100,
            starting_after: after
          })
        )
        for (const r of page.list) out.push(r.subscription)
        if (!page.has_more || page.list.length === 0) return out
        after = page.list[page.list.length - 1]!.subscription.id
      }
    })

  /** Each subscription with its features (its product's, then its price version's). */
  const held = (merchantId: string, list: ReadonlyArray<Subscription.Subscription>) =>
    Effect.gen(function* () {
      if (list.length === 0) return [] as ReadonlyArray<Entitlement.Held>
      const pvs = yield* versions.getMany(merchantId, [...new Set(list.map((s) => s.price_version_id))])
      const productIds = [...new Set([...pvs.values()].map((v) => v.value.product_id))]
      const prods = yield* products.getMany(merchantId, productIds)
      return list.map((s): Entitlement.Held => {
        const pv = pvs.get(s.price_version_id)?.value
        const product = pv === undefined ? undefined : prods.get(pv.product_id)?.value
        return {
          subscription_id: s.id,
          status: s.status,
          features: Entitlement.featuresOf(product?.entitlements ?? {}, pv?.entitlements ?? {})
        }
      })
    })

  /** The customer's entitlements from its subscriptions as stored now. */
  const entitlementsOf = (merchantId: string, customerId: string) =>
    Effect.gen(function* () {
      const policy = yield* granting(merchantId)
      const computed = Entitlement.compute(policy, yield* held(merchantId, yield* customerSubs(merchantId, customerId)))
      return new Entitlement.CustomerEntitlements({ customer_id: customerId, ...computed })
    })

  /**
   * After subscriptions were written (in the same transaction): for each customer whose set of
   * features they changed, writes `v2.entitlements.updated` carrying the new set. A write that
   * moves neither status nor price version changes nothing and reads nothing.
   */
  const afterChange = (merchantId: string, changes: ReadonlyArray<SubscriptionChange>, at: number) =>
    Effect.gen(function* () {
      const moved = changes.filter(
        (c) =>
          c.before === undefined ||
          c.before.status !== c.after.status ||
          c.before.price_version_id !== c.after.price_version_id
      )
      if (moved.length === 0) return
      const policy = yield* granting(merchantId)
      const relevant = moved.filter((c) => {
        const was = c.before !== undefined && Entitlement.grants(policy, c.before.status)
        const is = Entitlement.grants(policy, c.after.status)
        return was !== is || (is && c.before?.price_version_id !== c.after.price_version_id)
      })
      const customers = [...new Set(relevant.map((c) => c.after.customer_id))]
      for (const customerId of customers) {
        const now = yield* customerSubs(merchantId, customerId)
        const mine = relevant.filter((c) => c.after.customer_id === customerId)
        const changedIds = new Set(mine.map((c) => c.after.id))
        const earlier = [
          ...now.filter((s) => !changedIds.has(s.id)),
          ...mine.flatMap((c) => (c.before === undefined ? [] : [c.before]))
        ]
        const all = yield* held(merchantId, [...now, ...earlier])
        const heldNow = all.slice(0, now.length)
        const heldEarlier = all.slice(now.length)
        const after = Entitlement.compute(policy, heldNow)
        const before = Entitlement.compute(policy, heldEarlier)
        if (Entitlement.sameFeatures(before.features, after.features)) continue
        yield* emit(storage, {
          merchant_id: merchantId,
          type: "v2.entitlements.updated",
          business_id: customerId,
          schema: Entitlement.CustomerEntitlements,
          data: new Entitlement.CustomerEntitlements({ customer_id: customerId, ...after }),
          at
        })
      }
    })

  return { granting, entitlementsOf, afterChange } as const
}
