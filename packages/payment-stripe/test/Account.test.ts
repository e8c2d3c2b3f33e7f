import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Entities, Merchant, Merchants, Store, Worker } from "@recur/core"
import { ConflictError, createBilling, InvalidParameterError, UnavailableError } from "@recur/embedded"
import type { TestClient } from "@recur/http"
import { Effect, Option } from "effect"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30 (8): which processor a merchant may use, and its keys checked with Stripe when saved —
// through the REST adapter with each merchant's own Stripe account (the local fake), the sandbox
// for sandbox merchants without one; on PGlite, and on PostgreSQL when RECUR_TEST_DATABASE_URL is set.

/** The engine with each merchant's own Stripe account (the fake). */
const routedOn = Harness.perMerchant

type Api = ReturnType<typeof routedOn>

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; message?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

/** A monthly price of 12.00 of the merchant with `key`, and a checkout session of it (the answer). */
const sessionOf = async (api: Api, key: string) => {
  const product = (await api.call("POST", "/api/v1/products", key, { product_name: "P" })).body.data
  const price = (
    await api.call("POST", "/api/v1/prices", key, {
      name: "Monthly",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" }
    })
  ).body.data
  return api.call("POST", "/api/v1/session", key, { payer_id: "p", line_items: [{ price_id: price.price_id }] })
}

for (const [name, storage] of Harness.storages) {
  describe(`a merchant's processor and its keys (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: Api
    beforeAll(async () => {
      fake = await Fake.start()
      api = routedOn(storage(), fake)
      await api.runtime.runPromise(Effect.void)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    const merchant = (mode: "sandbox" | "live") =>
      api.runtime.runPromise(
        Merchants.Merchants.use((m) =>
          m.create({
            name: `A ${mode} shop`,
            currency: "USD",
            mode,
            ...(mode === "sandbox" ? { frozen_time: Date.parse("2026-01-01T00:00:00Z") } : {})
          })
        )
      )
    const settings = (key: string) => api.call("GET", "/api/v1/payment_settings", key)

    it("a live merchant without Stripe keys opens no checkout session (409, naming it); with verified live keys it does; a sandbox merchant stays on the sandbox", async () => {
      const live = await merchant("live")
      const refused = await sessionOf(api, live.api_key)
      expect(refusal(refused)).toEqual([409, "state_conflict", undefined])
      expect((refused.body as any).message).toContain(live.merchant.merchant_id)
      expect((refused.body as any).message).toContain("no payment processor")
      // its live keys, verified with Stripe, and the session opens
      const account = fake.account({ live: true })
      const set = await api.call("POST", "/api/v1/payment_settings", live.api_key, {
        provider: "stripe",
        secret_key: account.secret_key,
        publishable_key: account.publishable_key
      })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      expect((await sessionOf(api, live.api_key)).status).toBe(200)
      // a sandbox merchant without keys: the sandbox takes its payments, as before
      const sandbox = await merchant("sandbox")
      const session = await sessionOf(api, sandbox.api_key)
      expect(session.status).toBe(200)
      const paid = await api.call(
        "POST",
        `/checkout/${session.body.data.session_id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      expect(fake.violations).toEqual([])
    })

    it("a live merchant cannot switch back to the sandbox (400 provider), with keys or without; a sandbox merchant can", async () => {
      const live = await merchant("live")
      expect(
        refusal(await api.call("POST", "/api/v1/payment_settings", live.api_key, { provider: "sandbox" }))
      ).toEqual([400, "InvalidParameter", "provider"])
      const account = fake.account({ live: true })
      const keys = { provider: "stripe", secret_key: account.secret_key, publishable_key: account.publishable_key }
      expect((await api.call("POST", "/api/v1/payment_settings", live.api_key, keys)).status).toBe(200)
      expect(
        refusal(await api.call("POST", "/api/v1/payment_settings", live.api_key, { provider: "sandbox" }))
      ).toEqual([400, "InvalidParameter", "provider"])
      expect((await settings(live.api_key)).body.data).toMatchObject({
        provider: "stripe",
        secret_key_last4: account.secret_key.slice(-4)
      })
      const sandbox = await merchant("sandbox")
      const test = fake.account()
      expect(
        (
          await api.call("POST", "/api/v1/payment_settings", sandbox.api_key, {
            provider: "stripe",
            secret_key: test.secret_key,
            publishable_key: test.publishable_key
          })
        ).status
      ).toBe(200)
      expect(
        (await api.call("POST", "/api/v1/payment_settings", sandbox.api_key, { provider: "sandbox" })).body.data
          .provider
      ).toBe("sandbox")
    })

    it("keys are verified with Stripe when saved: an unknown key, another account's publishable key, a live key of a test account are refused (400, naming the field) and nothing changes; Stripe unreachable is a 503", async () => {
      const shop = await merchant("sandbox")
      const mine = fake.account()
      const other = fake.account()
      const post = (body: Record<string, unknown>) =>
        api.call("POST", "/api/v1/payment_settings", shop.api_key, { provider: "stripe", ...body })
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
        [
          "an unknown secret key",
          { secret_key: "sk_test_51NotAKeyStripeKnows0", publishable_key: mine.publishable_key },
          "secret_key"
        ],
        [
          "an unknown publishable key",
          { secret_key: mine.secret_key, publishable_key: "pk_test_51NotAKeyStripeKnows0" },
          "publishable_key"
        ],
        [
          "another account's publishable key",
          { secret_key: mine.secret_key, publishable_key: other.publishable_key },
          "publishable_key"
        ],
        [
          "a secret key given as the publishable key",
          { secret_key: mine.secret_key, publishable_key: mine.secret_key },
          "publishable_key"
        ]
      ]
      for (const [what, body, param] of cases) {
        const r = await post(body)
        expect([what, ...refusal(r)]).toEqual([what, 400, "InvalidParameter", param])
        // the answer never shows a key
        expect(JSON.stringify(r.body)).not.toContain(String(body.secret_key))
        expect((await settings(shop.api_key)).body.data.provider).toBe("sandbox")
      }
      // the right pair is kept
      expect((await post({ secret_key: mine.secret_key, publishable_key: mine.publishable_key })).status).toBe(200)
      // a new publishable key alone is checked against the stored secret key
      expect(refusal(await post({ publishable_key: other.publishable_key }))).toEqual([
        400,
        "InvalidParameter",
        "publishable_key"
      ])
      expect((await settings(shop.api_key)).body.data.publishable_key).toBe(mine.publishable_key)
      // a key rolled in Stripe's dashboard
      const rolled = fake.account()
      fake.roll(rolled.secret_key)
      expect(refusal(await post({ secret_key: rolled.secret_key, publishable_key: rolled.publishable_key }))).toEqual([
        400,
        "InvalidParameter",
        "secret_key"
      ])
      // Stripe does not answer: 503, nothing saved, and the same Request-Id may be sent again
      const next = fake.account()
      fake.fault(/^GET \/v1\/account$/, "drop_before", 3)
      const body = { provider: "stripe", secret_key: next.secret_key, publishable_key: next.publishable_key }
      const down = await api.call("POST", "/api/v1/payment_settings", shop.api_key, body, { "request-id": "verify-1" })
      expect(refusal(down)).toEqual([503, "service_unavailable", undefined])
      expect((await settings(shop.api_key)).body.data.publishable_key).toBe(mine.publishable_key)
      const again = await api.call("POST", "/api/v1/payment_settings", shop.api_key, body, { "request-id": "verify-1" })
      expect(again.status, JSON.stringify(again.body)).toBe(200)
      expect(again.body.data.publishable_key).toBe(next.publishable_key)
      // a live merchant's live keys belong to a live account: a live secret key of it with the
      // test publishable key of another is refused
      const live = await merchant("live")
      const liveAccount = fake.account({ live: true })
      expect(
        refusal(
          await api.call("POST", "/api/v1/payment_settings", live.api_key, {
            provider: "stripe",
            secret_key: liveAccount.secret_key,
            publishable_key: fake.account({ live: true }).publishable_key
          })
        )
      ).toEqual([400, "InvalidParameter", "publishable_key"])
      expect(fake.violations).toEqual([])
    })

    it("a renewal of a live merchant whose Stripe keys are gone is refused, never charged by the sandbox", async () => {
      // subscribed on the sandbox as a sandbox merchant, then made live with no processor (its
      // keys removed from the record): the sandbox's saved card must not pay its renewals
      const shop = await merchant("sandbox")
      const session = (await sessionOf(api, shop.api_key)).body.data
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const merchantId = shop.merchant.merchant_id
      await api.runtime.runPromise(
        Effect.gen(function* () {
          const merchants = (yield* Store.Storage).repository(Entities.merchant)
          const current = Option.getOrThrow(yield* merchants.get(merchantId, merchantId))
          yield* merchants.update(
            new Merchant.Merchant({ ...current.value, mode: "live", frozen_time: null, payment_processor: null }),
            current.version
          )
        })
      )
      // the renewal falls due (2026-02-01) and the worker runs it
      // (queued on the frozen clock's lane while it was a sandbox merchant)
      const ran = await api.runtime.runPromise(
        Worker.Worker.use((b) =>
          b.runDue({ now: Date.parse("2026-02-02T00:00:00Z"), owner: "test", lane: "frozen", merchantId })
        )
      )
      expect(ran).toBeGreaterThan(0)
      const sub = (await api.call("GET", `/api/v1/session/${session.session_id}`, shop.api_key)).body.data.session
        .subscription_id
      const invoices = (await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, shop.api_key)).body
        .data.list as Array<any>
      const renewal = invoices.find((i) => i.cycle_index === 1)
      expect(renewal, JSON.stringify(invoices)).toBeDefined()
      expect(renewal.biz_status).not.toBe("success")
      const trade = (await api.call("GET", `/api/v1/trade/${renewal.trade_id}`, shop.api_key)).body.data.trade
      expect(trade.trade_status).not.toBe("succeeded")
      expect(trade.last_payment_error?.code).toBe("processor_not_configured")
      // nor is a new card saved for it (the portal's and the API's card update): the sandbox is not asked
      const card = await api.call("POST", `/api/v1/subscription/${sub}/payment_method`, shop.api_key, {
        card_number: "4242424242424242",
        exp_month: 12,
        exp_year: 2030,
        cvc: "123"
      })
      expect(card.status, JSON.stringify(card.body)).toBe(400)
      expect((card.body as any).message).toContain("no payment processor")
      expect(
        (await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, shop.api_key)).body.data.list.find(
          (i: any) => i.cycle_index === 1
        ).biz_status
      ).not.toBe("success")
      // and no new checkout either
      expect(refusal(await sessionOf(api, shop.api_key))).toEqual([409, "state_conflict", undefined])
    })

    it("a sandbox merchant without Stripe keys is challenged on the sandbox's own 3-D Secure page, served by the host", async () => {
      const sandbox = await merchant("sandbox")
      const session = (await sessionOf(api, sandbox.api_key)).body.data
      const paid = await api.handler(
        new Request(`http://localhost/checkout/${session.session_id}/pay`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            card_number: "4000000000003220",
            exp_month: "12",
            exp_year: "2030",
            cvc: "123"
          }).toString(),
          redirect: "manual"
        })
      )
      expect(paid.status).toBe(303)
      const location = paid.headers.get("location")!
      expect(location).toMatch(/^http:\/\/localhost:4000\/sandbox\/3ds\/trd_/)
      const path = new URL(location).pathname
      const page = await api.handler(new Request(`http://localhost${path}`))
      expect([page.status, await page.text()]).toEqual([200, expect.stringContaining("3-D Secure test challenge")])
      const approved = await api.handler(
        new Request(`http://localhost${path}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "approve=1"
        })
      )
      expect(approved.status).toBe(200)
      expect(await approved.text()).toContain("Payment complete")
      const trades = await api.call("GET", "/api/v1/trades?trade_status=succeeded", sandbox.api_key)
      expect(trades.body.data.list).toHaveLength(1)
    })
  })
}

describe("a merchant's processor and its keys, through the facade (PGlite)", { timeout: 120_000 }, () => {
  it("createBilling: a live merchant's session is a ConflictError, its way back to the sandbox and a foreign publishable key InvalidParameterErrors, Stripe's silence an UnavailableError", async () => {
    const fake = await Fake.start()
    const billing = await createBilling({
      payments: StripeGateway.perMerchant({ apiBase: fake.base, timeoutMs: 5_000 })
    })
    try {
      const live = await billing.merchants.create({ name: "Live", currency: "USD", mode: "live" })
      const product = await billing.catalog.createProduct(live.merchant_id, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(live.merchant_id, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const refused = await billing.checkout
        .createSession(live.merchant_id, { payer_id: "ada", line_items: [{ price_id: price.id }] })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(refused).toBeInstanceOf(ConflictError)
      expect(refused).toMatchObject({ status: 409, code: "state_conflict", error: { _tag: "PaymentsUnavailable" } })
      const back = await billing.merchants.setPaymentSettings(live.merchant_id, { provider: "sandbox" }).then(
        () => undefined,
        (e: unknown) => e
      )
      expect(back).toBeInstanceOf(InvalidParameterError)
      expect(back).toMatchObject({ status: 400, param: "provider" })

      const shop = await billing.merchants.create({ name: "Test", currency: "USD" })
      const mine = fake.account()
      const foreign = await billing.merchants
        .setPaymentSettings(shop.merchant_id, {
          provider: "stripe",
          secret_key: mine.secret_key,
          publishable_key: fake.account().publishable_key
        })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(foreign).toBeInstanceOf(InvalidParameterError)
      expect(foreign).toMatchObject({ status: 400, param: "publishable_key" })
      fake.fault(/^POST \/v1\/tokens$/, "drop_before", 3)
      const silent = await billing.merchants
        .setPaymentSettings(shop.merchant_id, {
          provider: "stripe",
          secret_key: mine.secret_key,
          publishable_key: mine.publishable_key
        })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(silent).toBeInstanceOf(UnavailableError)
      expect(silent).toMatchObject({ status: 503, code: "service_unavailable" })
      expect((await billing.merchants.paymentSettings(shop.merchant_id)).provider).toBe("sandbox")
      const saved = await billing.merchants.setPaymentSettings(shop.merchant_id, {
        provider: "stripe",
        secret_key: mine.secret_key,
        publishable_key: mine.publishable_key
      })
      expect(saved).toMatchObject({ provider: "stripe", publishable_key: mine.publishable_key })
      expect(fake.violations).toEqual([])
    } finally {
      await billing.close()
      await fake.close()
    }
  })
})
