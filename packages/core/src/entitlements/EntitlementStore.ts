/**
 * Entitlements read from storage: a customer's live subscriptions and their items' products' and
 * price versions' features, computed on read (in the caller's transaction when there is one), and the
 * `v2.entitlements.updated` event written in the transaction of a subscription change that
 * altered a customer's set.
 */
import { Effect, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import { emit, knownMerchant, type StorageService } from "../kernel/ServiceSupport.js"
import * as Entitlement from "./Entitlement.js"

/** One subscription's write: the record before (none when inserted) and after. */
export interface SubscriptionChange {
  readonly before: Entities.SubscriptionRecord | undefined
  readonly after: Entities.SubscriptionRecord
}

/** The price versions of a subscription's items, the base item's first. */
const itemVersions = (rec: Entities.SubscriptionRecord): ReadonlyArray<string> => [
  rec.subscription.price_version_id,
  ...rec.extra_items.map((x) => x.price_version_id)
]

/** Whether two records hold the same items' versions (in order). */
const sameItems = (a: Entities.SubscriptionRecord, b: Entities.SubscriptionRecord) =>
  itemVersions(a).join(" ") === itemVersions(b).join(" ")

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
      const out: Array<Entities.SubscriptionRecord> = []
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
        for (const r of page.list) out.push(r)
        if (!page.has_more || page.list.length === 0) return out
        after = page.list[page.list.length - 1]!.subscription.id
      }
    })

  /**
   * Each subscription with its features: over its items (the base item and every add-on item),
   * each item's product's then its price version's, merged as subscriptions are.
   */
  const held = (merchantId: string, list: ReadonlyArray<Entities.SubscriptionRecord>) =>
    Effect.gen(function* () {
      if (list.length === 0) return [] as ReadonlyArray<Entitlement.Held>
      const pvs = yield* versions.getMany(merchantId, [...new Set(list.flatMap(itemVersions))])
      const productIds = [...new Set([...pvs.values()].map((v) => v.value.product_id))]
      const prods = yield* products.getMany(merchantId, productIds)
      return list.map((rec): Entitlement.Held => {
        const items = itemVersions(rec).map((id) => {
          const pv = pvs.get(id)?.value
          const product = pv === undefined ? undefined : prods.get(pv.product_id)?.value
          return Entitlement.featuresOf(product?.entitlements ?? {}, pv?.entitlements ?? {})
        })
        return {
          subscription_id: rec.subscription.id,
          status: rec.subscription.status,
          features: Entitlement.merge(items)
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
   * moves neither status nor an item's price version (nor adds or removes an item) changes
   * nothing and reads nothing.
   */
  const afterChange = (merchantId: string, changes: ReadonlyArray<SubscriptionChange>, at: number) =>
    Effect.gen(function* () {
      const moved = changes.filter(
        (c) =>
          c.before === undefined ||
          c.before.subscription.status !== c.after.subscription.status ||
          !sameItems(c.before, c.after)
      )
      if (moved.length === 0) return
      const policy = yield* granting(merchantId)
      const relevant = moved.filter((c) => {
        const was = c.before !== undefined && Entitlement.grants(policy, c.before.subscription.status)
        const is = Entitlement.grants(policy, c.after.subscription.status)
        return was !== is || (is && (c.before === undefined || !sameItems(c.before, c.after)))
      })
      const customers = [...new Set(relevant.map((c) => c.after.subscription.customer_id))]
      for (const customerId of customers) {
        const now = yield* customerSubs(merchantId, customerId)
        const mine = relevant.filter((c) => c.after.subscription.customer_id === customerId)
        const changedIds = new Set(mine.map((c) => c.after.subscription.id))
        const earlier = [
          ...now.filter((s) => !changedIds.has(s.subscription.id)),
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
