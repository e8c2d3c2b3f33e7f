/**
 * Entitlements, told through the engine's services on a frozen sandbox clock: features declared
 * on products and prices, a customer's entitlements right after the call that changed them
 * (checkout, failed renewal, dunning's end, cancel), the merchant's policy, the
 * `v2.entitlements.updated` event — and a replayable random sequence of operations after each
 * of which the entitlements equal those computed from the live subscriptions and the last event
 * carries them. Run against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Entities,
  Entitlement,
  Entitlements,
  Merchants,
  PriceChanges,
  SandboxClock,
  Store,
  Subscriptions
} from "@recur/core"
import { Effect, type Layer } from "effect"
import { engine, iso, merchantAt, monthly, subscribeTo } from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"
const LATER_DECLINE = "4000000000000341"

/** A shop whose catalog declares features: Pro (sso, 5 seats) at 10 seats, and an add-on. */
const featuredShop = Effect.gen(function* () {
  const merchantId = yield* merchantAt(START)
  const catalog = yield* Catalog.Catalog
  const pro = yield* catalog.createProduct(merchantId, { product_name: "Pro", entitlements: { sso: true, seats: 5 } })
  const addon = yield* catalog.createProduct(merchantId, { product_name: "API", entitlements: { api_calls: 100000 } })
  const proMonthly = yield* monthly(merchantId, pro.product_id, "30.00", { entitlements: { seats: 10 } })
  const proSmall = yield* monthly(merchantId, pro.product_id, "20.00", { entitlements: { seats: 2, sso: false } })
  const addonMonthly = yield* monthly(merchantId, addon.product_id, "5.00")
  return { merchantId, proMonthly, proSmall, addonMonthly }
})

/** The payloads of the customer's `v2.entitlements.updated` events, in order. */
const entitlementEvents = (merchantId: string, customerId: string) =>
  Effect.gen(function* () {
    const page = yield* Effect.orDie(
      (yield* Store.Storage).repository(Entities.webhookEvent).list(merchantId, {
        limit: 100,
        filters: [
          { column: "business_id", op: "in", values: [customerId] },
          { column: "type", op: "in", values: ["v2.entitlements.updated"] }
        ]
      })
    )
    return [...page.list]
      .sort((a, b) => a.sequence - b.sequence)
      .map((e) => (JSON.parse(e.content) as { data: { features: Entitlement.Features } }).data.features)
  })

/** The entitlements computed longhand from the customer's subscriptions, as the API lists them. */
const expectedOf = (merchantId: string, customerId: string) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog.Catalog
    const merchant = yield* Merchants.Merchants.use((m) => m.get(merchantId))
    const subs = yield* Billing.Billing.use((b) =>
      b.listSubscriptions(merchantId, {
        limit: 100,
        filters: [{ column: "customer_id", op: "in", values: [customerId] }]
      })
    )
    const held = yield* Effect.forEach(subs.list, (s) =>
      Effect.gen(function* () {
        const pv = yield* catalog.getVersion(merchantId, s.price_version_id)
        const product = yield* catalog.getProduct(merchantId, pv.product_id)
        return {
          subscription_id: s.id,
          status: s.status,
          features: Entitlement.featuresOf(product.entitlements, pv.entitlements)
        }
      })
    )
    return Entitlement.compute(Entitlement.grantingOf(merchant.entitlement_statuses), held)
  })

/** A replayable generator (mulberry32) from a fixed seed. */
const random = (seed: number) => {
  let a = seed >>> 0
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
  }
}

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "240 seconds" })(`Entitlement scenarios: ${name}`, (it) => {
    it.effect(
      "checkout grants at once; a failed renewal keeps them while past due; unpaid and cancel take them away; each change is one event",
      () =>
        Effect.gen(function* () {
          const entitlements = yield* Entitlements.Entitlements
          const { merchantId, proMonthly, addonMonthly } = yield* featuredShop
          const pro = yield* subscribeTo(merchantId, proMonthly, {}, LATER_DECLINE)
          const customerId = pro.customerId
          expect((yield* entitlements.list(merchantId, customerId)).features).toEqual({ seats: 10, sso: true })
          const addon = yield* subscribeTo(merchantId, addonMonthly, { customer_id: customerId })
          const both = { api_calls: 100000, seats: 10, sso: true }
          expect((yield* entitlements.list(merchantId, customerId)).features).toEqual(both)
          expect(yield* entitlements.check(merchantId, customerId, "seats")).toMatchObject({ enabled: true, value: 10 })
          expect(yield* entitlements.check(merchantId, customerId, "audit_log")).toMatchObject({
            enabled: false,
            value: null
          })

          // the renewal of Pro is declined: past due keeps access (the default policy)
          yield* SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, iso("2026-02-01T12:00:00Z")))
          expect((yield* Billing.Billing.use((b) => b.getSubscription(merchantId, pro.subscriptionId))).status).toBe(
            "past_due"
          )
          expect((yield* entitlements.list(merchantId, customerId)).features).toEqual(both)
          // a merchant whose policy takes past_due out answers so on the next read
          yield* entitlements.setSettings(merchantId, { granting_statuses: ["trial", "active"] })
          expect((yield* entitlements.list(merchantId, customerId)).features).toEqual({ api_calls: 100000 })
          expect((yield* entitlements.settings(merchantId)).granting_statuses).toEqual(["trial", "active"])
          yield* entitlements.setSettings(merchantId, { granting_statuses: null })
          expect((yield* entitlements.settings(merchantId)).granting_statuses).toEqual(["trial", "active", "past_due"])

          // retries exhausted: unpaid loses Pro's features
          yield* SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, iso("2026-02-09T12:00:00Z")))
          expect((yield* Billing.Billing.use((b) => b.getSubscription(merchantId, pro.subscriptionId))).status).toBe(
            "unpaid"
          )
          expect((yield* entitlements.list(merchantId, customerId)).features).toEqual({ api_calls: 100000 })

          yield* Subscriptions.Subscriptions.use((s) =>
            s.cancel(merchantId, Subscriptions.cancelOf(addon.subscriptionId))
          )
          const none = yield* entitlements.list(merchantId, customerId)
          expect(none.features).toEqual({})
          expect(none.subscription_ids).toEqual([])

          expect(yield* entitlementEvents(merchantId, customerId)).toEqual([
            { seats: 10, sso: true },
            both,
            { api_calls: 100000 },
            {}
          ])
        })
    )

    it.effect("an unknown customer is NotFound; a feature name outside the pattern is refused", () =>
      Effect.gen(function* () {
        const entitlements = yield* Entitlements.Entitlements
        const { merchantId } = yield* featuredShop
        const missing = yield* Effect.flip(entitlements.list(merchantId, "cus_nobody"))
        expect(missing._tag).toBe("NotFound")
        const bad = yield* Effect.flip(entitlements.setSettings(merchantId, { granting_statuses: ["canceled"] }))
        expect(bad._tag).toBe("InvalidParameter")
        const badFeatures = yield* Effect.flip(
          Catalog.Catalog.use((c) =>
            c.createProduct(merchantId, { product_name: "X", entitlements: { "Bad-Key": true } })
          )
        )
        expect(badFeatures).toMatchObject({ _tag: "InvalidParameter", param: "entitlements" })
      })
    )

    it.effect(
      "after any sequence of checkouts, switches, pauses, resumes, cancels and renewals (fixed seed), the entitlements equal those computed from the live subscriptions, and the last event carries them",
      () =>
        Effect.gen(function* () {
          const entitlements = yield* Entitlements.Entitlements
          const { merchantId, proMonthly, proSmall, addonMonthly } = yield* featuredShop
          const prices = [proMonthly, proSmall, addonMonthly]
          const next = random(20_261_126)
          const customers: Array<string> = []
          const subs: Array<{ readonly id: string; readonly customerId: string }> = []
          let now = iso(START)
          const attempt = <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.ignore(e)
          for (let step = 0; step < 30; step++) {
            const op = next(6)
            const sub = subs.length > 0 ? subs[next(subs.length)] : undefined
            if (op === 0 || sub === undefined) {
              const known = customers.length > 0 && next(2) === 0 ? customers[next(customers.length)] : undefined
              const made = yield* subscribeTo(
                merchantId,
                prices[next(prices.length)]!,
                known === undefined ? {} : { customer_id: known },
                next(3) === 0 ? LATER_DECLINE : "4242424242424242"
              )
              if (!customers.includes(made.customerId)) customers.push(made.customerId)
              if (made.subscriptionId !== "") subs.push({ id: made.subscriptionId, customerId: made.customerId })
            } else if (op === 1) {
              yield* attempt(
                PriceChanges.PriceChanges.use((p) =>
                  p.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: prices[next(2)]! }))
                )
              )
            } else if (op === 2) {
              yield* attempt(Subscriptions.Subscriptions.use((s) => s.pause(merchantId, sub.id)))
            } else if (op === 3) {
              yield* attempt(Subscriptions.Subscriptions.use((s) => s.resume(merchantId, sub.id)))
            } else if (op === 4) {
              yield* attempt(
                Subscriptions.Subscriptions.use((s) => s.cancel(merchantId, Subscriptions.cancelOf(sub.id)))
              )
            } else {
              now += 9 * 86_400_000
              yield* SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, now))
            }
            for (const customerId of customers) {
              const listed = yield* entitlements.list(merchantId, customerId)
              const expected = yield* expectedOf(merchantId, customerId)
              expect(listed.features).toEqual(expected.features)
              expect(listed.subscription_ids).toEqual(expected.subscription_ids)
              const events = yield* entitlementEvents(merchantId, customerId)
              expect(events.length > 0 ? events[events.length - 1] : {}).toEqual(listed.features)
            }
          }
          expect(customers.length).toBeGreaterThan(1)
          // the sequence did move entitlements: more events than customers, some subscriptions ended
          const events = yield* Effect.forEach(customers, (c) => entitlementEvents(merchantId, c))
          expect(events.flat().length).toBeGreaterThan(customers.length)
        })
    )
  })
