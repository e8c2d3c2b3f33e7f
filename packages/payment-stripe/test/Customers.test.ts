import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Entities, Merchant, Store } from "@recur/core"
import { ConflictError, createBilling } from "@recur/embedded"
import { Effect, Option } from "effect"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30, after its payments review: the Stripe customer (`cus_…`) of each of our customers is
// kept with the Stripe account it lives in when Stripe makes it, and read back by id — no search
// on the way of a charge, a card save or a checkout once it is known; and a merchant's keys cannot
// move to another Stripe account while its subscriptions renew with cards saved in the old one.
// Engine scenarios over REST on the local fake (its search lagging a minute), on PGlite, and on
// PostgreSQL when RECUR_TEST_DATABASE_URL is set.

const DAY = 24 * 60 * 60

/** The engine on one Stripe account (the fake). */
const serve = Harness.oneAccount

/** The engine with each merchant's own Stripe account (the fake). */
const routedOn = Harness.perMerchant

type Api = ReturnType<typeof serve>

for (const [name, storage] of Harness.storages) {
  describe(`Stripe customers kept by id, and the account they live in (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: Api
    let routed: Api
    beforeAll(async () => {
      fake = await Fake.start()
      api = serve(storage(), fake)
      routed = routedOn(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await routed.dispose()
      await fake.close()
    })

    const merchant = Harness.merchantOn
    const ok = Harness.okOn
    const priceOf = Harness.monthlyPriceOn
    /** A checkout of `price` by `payer`, paid with `pm_card_visa`: the session. */
    const checkout = async (on: Api, key: string, price: string, payer: string) => {
      const session = await ok(on, key, "POST", "/api/v1/session", {
        payer_id: payer,
        line_items: [{ price_id: price }]
      })
      const paid = await on.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      return (await ok(on, key, "GET", `/api/v1/session/${session.session_id}`)).session
    }
    const intentsOf = (tradeId: string) =>
      [...fake.intents.values()].filter((i: any) => i.metadata.recur_trade_id === tradeId) as Array<any>
    const searches = () => fake.requests.filter((r) => r.path === "/v1/customers/search").length
    const kept = (on: Api, merchantId: string) =>
      on.runtime.runPromise(
        Effect.flatMap(Store.Storage, (s) =>
          Effect.orDie(s.repository(Entities.processorCustomer).list(merchantId, { limit: 100 }))
        )
      )

    it("a customer's Stripe customer is kept with its account when made: a second checkout and a card update read it by id, no search", async () => {
      const { key, id } = await merchant(api, "Kept customer")
      const price = await priceOf(api, key, "30.00")
      const first = await checkout(api, key, price, "ada")
      const stripeCustomer = intentsOf(first.trade_id)[0].customer as string
      const rows = (await kept(api, id)).list
      expect(rows.map((r) => [r.customer_id, r.reference, r.provider])).toEqual([
        [first.customer_id, stripeCustomer, "stripe"]
      ])
      expect(rows[0]!.account_id).toMatch(/^acct_/)
      const before = searches()
      // the same payer buys again, then gives another card: Stripe's customer is read by id
      const second = await checkout(api, key, await priceOf(api, key, "12.00"), "ada")
      expect(second.customer_id).toBe(first.customer_id)
      expect(intentsOf(second.trade_id)[0].customer).toBe(stripeCustomer)
      const updated = await ok(api, key, "POST", `/api/v1/subscription/${first.subscription_id}/payment_method`, {
        payment_method: "pm_card_mastercard"
      })
      expect(updated.payment_method.last4).toBe("4444")
      expect(searches()).toBe(before)
      expect(
        [...fake.customers.values()].filter((c: any) => c.metadata.recur_customer === `${id}/${first.customer_id}`)
          .length
      ).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("a Stripe customer made before customers were kept: found (by search, once it caught up), kept, then read by id", async () => {
      const { key, id } = await merchant(api, "Legacy customer")
      const price = await priceOf(api, key, "30.00")
      const first = await checkout(api, key, price, "grace")
      const made = intentsOf(first.trade_id)[0].customer as string
      // as it was before this change: nothing kept on Recur's side, and two days since at Stripe
      const rows = (await kept(api, id)).list
      for (const r of rows)
        await api.runtime.runPromise(
          Effect.flatMap(Store.Storage, (s) => s.repository(Entities.processorCustomer).remove(id, r.id))
        )
      expect((await kept(api, id)).list).toEqual([])
      fake.advance(2 * DAY)
      const before = searches()
      const second = await checkout(api, key, await priceOf(api, key, "12.00"), "grace")
      expect(intentsOf(second.trade_id)[0].customer).toBe(made)
      expect(searches()).toBe(before + 1)
      expect((await kept(api, id)).list.map((r) => r.reference)).toEqual([made])
      // from now on, by id
      await checkout(api, key, await priceOf(api, key, "15.00"), "grace")
      expect(searches()).toBe(before + 1)
      expect(fake.violations).toEqual([])
    })

    it("a new customer's first payments while Stripe's search lags: one Stripe customer, made once and kept", async () => {
      const { key, id } = await merchant(api, "Lagging")
      const price = await priceOf(api, key, "30.00")
      const first = await checkout(api, key, price, "lin")
      // seconds later (search cannot see the customer yet), the same payer again
      const second = await checkout(api, key, await priceOf(api, key, "12.00"), "lin")
      const customers = [first, second].map((s) => intentsOf(s.trade_id)[0].customer)
      expect(customers[0]).toBe(customers[1])
      expect(
        [...fake.customers.values()].filter((c: any) => c.metadata.recur_customer === `${id}/${first.customer_id}`)
          .length
      ).toBe(1)
      expect((await kept(api, id)).list.map((r) => r.reference)).toEqual([customers[0]])
      expect(fake.violations).toEqual([])
    })

    it("a kept Stripe customer deleted in Stripe's dashboard: the payer's next checkout and card update make a new one, kept in its place", async () => {
      const { key, id } = await merchant(api, "Deleted customer")
      const first = await checkout(api, key, await priceOf(api, key, "30.00"), "del")
      const gone = intentsOf(first.trade_id)[0].customer as string
      // the merchant deletes the customer in Stripe's dashboard (within the day: the key that
      // made it would answer it again)
      fake.customers.delete(gone)
      const second = await checkout(api, key, await priceOf(api, key, "12.00"), "del")
      const made = intentsOf(second.trade_id)[0].customer as string
      expect(made).not.toBe(gone)
      expect(fake.customers.has(made)).toBe(true)
      expect((await kept(api, id)).list.map((r) => r.reference)).toEqual([made])
      // and a card given for a subscription of before uses the new one
      fake.customers.delete(made)
      const updated = await ok(api, key, "POST", `/api/v1/subscription/${second.subscription_id}/payment_method`, {
        payment_method: "pm_card_mastercard"
      })
      expect(updated.payment_method.last4).toBe("4444")
      const rows = (await kept(api, id)).list
      expect(rows.map((r) => r.reference)).not.toContain(made)
      expect(fake.customers.has(rows[0]!.reference)).toBe(true)
      expect(fake.violations).toEqual([])
    })

    it("a kept Stripe customer deleted, and Stripe silent while its replacement is made: the payer is told to try again (503, nothing charged), then pays", async () => {
      const { key } = await merchant(api, "Deleted, then silent")
      const first = await checkout(api, key, await priceOf(api, key, "30.00"), "sil")
      fake.customers.delete(intentsOf(first.trade_id)[0].customer)
      const session = await ok(api, key, "POST", "/api/v1/session", {
        payer_id: "sil",
        line_items: [{ price_id: await priceOf(api, key, "12.00") }]
      })
      fake.down("503", /^POST \/v1\/customers$/)
      const silent = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect([silent.status, (silent.body as any).code], JSON.stringify(silent.body)).toEqual([
        503,
        "processor_unavailable"
      ])
      fake.down(undefined)
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      expect(fake.violations).toEqual([])
    })

    it("a restricted key that may not read its account (403 on GET /v1/account): nothing kept, payments still taken, one Stripe customer within the search lag", async () => {
      fake.down("403", /^GET \/v1\/account$/)
      const restricted = serve(storage(), fake)
      try {
        const { key, id } = await merchant(restricted, "Restricted")
        const first = await checkout(restricted, key, await priceOf(restricted, key, "30.00"), "rex")
        const second = await checkout(restricted, key, await priceOf(restricted, key, "12.00"), "rex")
        expect(intentsOf(second.trade_id)[0].customer).toBe(intentsOf(first.trade_id)[0].customer)
        expect((await kept(restricted, id)).list).toEqual([])
        // asked once: a key refused its account is not asked again at every charge
        expect(fake.faulted.filter((f) => f.path === "/v1/account").length).toBe(1)
      } finally {
        fake.down(undefined)
        await restricted.dispose()
      }
      expect(fake.violations).toEqual([])
    })

    describe("keys moved to another Stripe account", () => {
      /** A sandbox merchant on Stripe account `keys` (its settings saved over REST). */
      const onAccount = async (label: string, keys: { secret_key: string; publishable_key: string }) => {
        const m = await merchant(routed, label)
        await ok(routed, m.key, "POST", "/api/v1/payment_settings", { provider: "stripe", ...keys })
        return m
      }
      const stored = (merchantId: string) =>
        routed.runtime.runPromise(
          Effect.map(
            Effect.flatMap(Store.Storage, (s) => s.repository(Entities.merchant).get(merchantId, merchantId)),
            (found) => Option.getOrThrow(found)
          )
        )

      it("refused (409 state_conflict) while a subscription renews with a card saved in the old account; a rolled key of the same account is taken", async () => {
        const a = fake.account()
        const b = fake.account()
        const { key, id } = await onAccount("Switching", a)
        expect((await stored(id)).value.payment_processor?.account_id).toBe(a.id)
        const session = await checkout(routed, key, await priceOf(routed, key, "30.00"), "ada")
        expect(
          (await ok(routed, key, "GET", `/api/v1/subscription/${session.subscription_id}`)).subscription.status
        ).toBe("active")
        const moved = await routed.call("POST", "/api/v1/payment_settings", key, { provider: "stripe", ...b })
        expect(moved.status, JSON.stringify(moved.body)).toBe(409)
        expect((moved.body as any).code).toBe("state_conflict")
        expect((moved.body as any).message).toContain(session.subscription_id)
        expect((moved.body as any).message).toContain(b.id)
        // nothing changed: the old account's keys stay
        expect((await ok(routed, key, "GET", "/api/v1/payment_settings")).secret_key_last4).toBe(a.secret_key.slice(-4))
        // keys saved before the account was kept: the kept customers tell where the cards are
        await routed.runtime.runPromise(
          Effect.gen(function* () {
            const merchants = (yield* Store.Storage).repository(Entities.merchant)
            const found = Option.getOrThrow(yield* merchants.get(id, id))
            const processor = found.value.payment_processor!
            yield* Effect.orDie(
              merchants.update(
                new Merchant.Merchant({
                  ...found.value,
                  payment_processor: new Merchant.PaymentProcessor({ ...processor, account_id: null })
                }),
                found.version
              )
            )
          })
        )
        const again = await routed.call("POST", "/api/v1/payment_settings", key, { provider: "stripe", ...b })
        expect(again.status, JSON.stringify(again.body)).toBe(409)
        // a rolled key of the same account is no move: taken, and the account kept
        const rolled = fake.account({ id: a.id })
        await ok(routed, key, "POST", "/api/v1/payment_settings", { provider: "stripe", ...rolled })
        expect((await stored(id)).value.payment_processor?.account_id).toBe(a.id)
        expect(fake.violations).toEqual([])
      })

      it("keys saved before the account was kept, a renewing customer never kept since: the old key tells its account, the move is refused (409); a rolled key is taken", async () => {
        const a = fake.account()
        const b = fake.account()
        const { key, id } = await onAccount("Legacy move", a)
        await checkout(routed, key, await priceOf(routed, key, "30.00"), "dee")
        // as before this change: no account on the processor, no customer kept
        await routed.runtime.runPromise(
          Effect.gen(function* () {
            const storage = yield* Store.Storage
            const merchants = storage.repository(Entities.merchant)
            const found = Option.getOrThrow(yield* merchants.get(id, id))
            yield* Effect.orDie(
              merchants.update(
                new Merchant.Merchant({
                  ...found.value,
                  payment_processor: new Merchant.PaymentProcessor({
                    ...found.value.payment_processor!,
                    account_id: null
                  })
                }),
                found.version
              )
            )
            const rows = storage.repository(Entities.processorCustomer)
            for (const r of (yield* Effect.orDie(rows.list(id, { limit: 100 }))).list) yield* rows.remove(id, r.id)
          })
        )
        expect((await kept(routed, id)).list).toEqual([])
        const moved = await routed.call("POST", "/api/v1/payment_settings", key, { provider: "stripe", ...b })
        expect(moved.status, JSON.stringify(moved.body)).toBe(409)
        const rolled = fake.account({ id: a.id })
        await ok(routed, key, "POST", "/api/v1/payment_settings", { provider: "stripe", ...rolled })
        expect((await stored(id)).value.payment_processor?.account_id).toBe(a.id)
        expect(fake.violations).toEqual([])
      })

      it("not bypassed by going through the sandbox: keys of another account after sandbox are refused (409) while cards renew in the first", async () => {
        const a = fake.account()
        const b = fake.account()
        const { key } = await onAccount("Round trip", a)
        const session = await checkout(routed, key, await priceOf(routed, key, "30.00"), "cy")
        await ok(routed, key, "POST", "/api/v1/payment_settings", { provider: "sandbox" })
        const moved = await routed.call("POST", "/api/v1/payment_settings", key, { provider: "stripe", ...b })
        expect(moved.status, JSON.stringify(moved.body)).toBe(409)
        expect((moved.body as any).message).toContain(session.subscription_id)
        // the first account's keys again: taken
        await ok(routed, key, "POST", "/api/v1/payment_settings", { provider: "stripe", ...a })
        expect(fake.violations).toEqual([])
      })

      it("taken when no subscription renews with a saved card; the new account's first payment makes its own Stripe customer", async () => {
        const a = fake.account()
        const b = fake.account()
        const { key, id } = await onAccount("Moved", a)
        const first = await checkout(routed, key, await priceOf(routed, key, "30.00"), "bea")
        const inA = intentsOf(first.trade_id)[0].customer as string
        await ok(routed, key, "POST", `/api/v1/subscription/${first.subscription_id}/cancel`, {
          cancel_type: "immediate"
        })
        await ok(routed, key, "POST", "/api/v1/payment_settings", { provider: "stripe", ...b })
        expect((await stored(id)).value.payment_processor?.account_id).toBe(b.id)
        const second = await checkout(routed, key, await priceOf(routed, key, "12.00"), "bea")
        expect(second.customer_id).toBe(first.customer_id)
        const inB = intentsOf(second.trade_id)[0].customer as string
        // never the old account's customer (which account B's keys could not use at Stripe)
        expect(inB).not.toBe(inA)
        const rows = (await kept(routed, id)).list
        expect(new Map(rows.map((r) => [r.account_id, r.reference]))).toEqual(
          new Map([
            [a.id, inA],
            [b.id, inB]
          ])
        )
        expect(fake.violations).toEqual([])
      })
    })
  })
}

for (const [name, storage] of Harness.facadeStorages)
  describe(`keys moved to another Stripe account, through the facade (${name})`, { timeout: 120_000 }, () => {
    it("setPaymentSettings with another account's keys while a subscription renews with a saved card: a ConflictError (409 state_conflict), nothing saved", async () => {
      const fake = await Fake.start()
      const billing = await createBilling({
        storage,
        masterKey: "ab".repeat(32),
        payments: StripeGateway.perMerchant({ apiBase: fake.base, timeoutMs: 5_000 })
      })
      try {
        const a = fake.account()
        const b = fake.account()
        const { merchant_id: m } = await billing.merchants.create({ name: "Facade move", currency: "USD" })
        await billing.merchants.setPaymentSettings(m, { provider: "stripe", ...a })
        const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
        const price = await billing.catalog.createPrice(m, {
          name: "Pro monthly",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
        const session = await billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: price.id }] })
        const paid = await billing.checkout.pay(m, session.session_id, { payment_method: "pm_card_visa" })
        expect([paid.status, paid.subscription?.status]).toEqual(["succeeded", "active"])
        const refused = await billing.merchants.setPaymentSettings(m, { provider: "stripe", ...b }).then(
          () => undefined,
          (e: unknown) => e
        )
        expect(refused).toBeInstanceOf(ConflictError)
        expect(refused).toMatchObject({ status: 409, code: "state_conflict" })
        // no secret in the message: neither key of either account
        const message = (refused as ConflictError).message
        expect(message).toContain(b.id)
        for (const secret of [a.secret_key, b.secret_key]) expect(message).not.toContain(secret.slice(8))
        expect((await billing.merchants.paymentSettings(m)).publishable_key).toBe(a.publishable_key)
        expect(fake.violations).toEqual([])
      } finally {
        await billing.close()
        await fake.close()
      }
    })
  })

// `StripeGateway.make()` without storage: what it learnt in this process (a trade's owner, a
// customer's Stripe customer) is read by id and by list, not searched for.
describe("StripeGateway.make without storage", { timeout: 60_000 }, () => {
  it("a first payment whose answer was lost, asked about within Stripe's search lag: found in its customer's list, not `no_such_charge`", async () => {
    const fake = await Fake.start()
    try {
      const gateway = StripeGateway.make({ secretKey: "sk_test_recur", apiBase: fake.base, timeoutMs: 5_000 })
      fake.fault(/^POST \/v1\/payment_intents$/, "500_after", 3)
      const request = {
        trade_id: "trd_lost",
        merchant_id: "mch_nostore",
        customer_id: "cus_nostore",
        amount: { amount: 3000n, currency: "USD" },
        source: { _tag: "PaymentMethod" as const, id: "pm_card_visa" },
        off_session: false
      }
      const charged = await Effect.runPromise(gateway.charge(request as never))
      expect(charged._tag).toBe("Unknown")
      const before = fake.requests.filter((r) => r.path.endsWith("/search")).length
      const asked = await Effect.runPromise(gateway.retrieve("trd_lost"))
      expect(asked._tag).toBe("Succeeded")
      expect(fake.requests.filter((r) => r.path.endsWith("/search")).length).toBe(before)
      // a second payment of the same customer finds its Stripe customer without a search
      const again = await Effect.runPromise(
        gateway.charge({ ...request, trade_id: "trd_second", amount: { amount: 1200n, currency: "USD" } } as never)
      )
      expect(again._tag).toBe("Succeeded")
      expect(fake.requests.filter((r) => r.path.endsWith("/search")).length).toBe(before)
      expect(fake.violations).toEqual([])
    } finally {
      await fake.close()
    }
  })
})
