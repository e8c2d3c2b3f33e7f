import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Billing, Charges, Refunds } from "@recur/core"
import { createBilling } from "@recur/embedded"
import { Effect } from "effect"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30, "charges exactly once": the PaymentIntent (and the refund) is the truth, read by the id
// Stripe gave — never by a search that lags, never by re-sending a create whose idempotency key
// Stripe forgot after 24 hours. Engine scenarios over REST with the Stripe adapter on the local
// fake (search lagging a minute, keys pruned after 24 h of its clock), on PGlite, and on
// PostgreSQL when RECUR_TEST_DATABASE_URL is set.

const DAY = 24 * 60 * 60

/** The engine on one Stripe account (the fake). */
const serve = Harness.oneAccount

/** The engine with each merchant's own Stripe account (the fake). */
const routedOn = Harness.perMerchant

type Api = ReturnType<typeof serve>

for (const [name, storage] of Harness.storages) {
  describe(`charges exactly once with Stripe (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: Api
    beforeAll(async () => {
      fake = await Fake.start()
      api = serve(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    const merchant = Harness.merchantOn
    const ok = Harness.okOn
    /** A session for a monthly price of `amount`: its id. */
    const sessionFor = async (on: Api, key: string, amount: string) => {
      const session = await ok(on, key, "POST", "/api/v1/session", {
        payer_id: `p${Math.random()}`,
        line_items: [{ price_id: await Harness.monthlyPriceOn(on, key, amount) }]
      })
      return session.session_id as string
    }
    const pay = (on: Api, sessionId: string, paymentMethod: string) =>
      on.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { payment_method: paymentMethod },
        { accept: "application/json" }
      )
    const intentsOf = (tradeId: string) =>
      [...fake.intents.values()].filter((i: any) => i.metadata.recur_trade_id === tradeId) as Array<any>
    const refundsOf = (intentId: string) =>
      [...fake.refunds.values()].filter((r: any) => r.payment_intent === intentId) as Array<any>
    /** A paid checkout of `amount`: its trade and the intent that paid it. */
    const paidCheckout = async (on: Api, key: string, amount: string) => {
      const sessionId = await sessionFor(on, key, amount)
      const paid = await pay(on, sessionId, "pm_card_visa")
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const session = (await ok(on, key, "GET", `/api/v1/session/${sessionId}`)).session
      return { session, tradeId: session.trade_id as string, intent: intentsOf(session.trade_id)[0] }
    }

    it("a 3-D Secure checkout while Stripe's search lags: back on /complete the payment is confirmed, paying again charges nothing", async () => {
      const { key } = await merchant(api, "Lagging search")
      const sessionId = await sessionFor(api, key, "25.00")
      const challenged = await pay(api, sessionId, "pm_card_authenticationRequired")
      expect(challenged.status, JSON.stringify(challenged.body)).toBe(200)
      const challenge: string = challenged.body.data.next_action.redirect.url
      // the new customer authenticates seconds after Stripe made its customer: search cannot see it yet
      const back = await fetch(challenge, { redirect: "manual" })
      const returned = new URL(back.headers.get("location")!)
      expect(returned.pathname).toBe(`/checkout/${sessionId}/complete`)
      const shown = await api.handler(new Request(`http://localhost${returned.pathname}${returned.search}`))
      const html = await shown.text()
      expect(html).not.toContain("authentication failed")
      const session = (await ok(api, key, "GET", `/api/v1/session/${sessionId}`)).session
      expect(session.status).toBe("complete")
      // the payer pays again anyway: refused, and Stripe holds one payment for the trade
      const again = await pay(api, sessionId, "pm_card_visa")
      expect(again.status).not.toBe(200)
      const intents = intentsOf(session.trade_id)
      expect(intents.filter((i) => i.status === "succeeded").length).toBe(1)
      expect(intents.length).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("back from 3-D Secure while Stripe does not answer: 'we are confirming your payment', no failure and no Pay button", async () => {
      const { key } = await merchant(api, "Confirming")
      const sessionId = await sessionFor(api, key, "25.00")
      const challenged = await pay(api, sessionId, "pm_card_authenticationRequired")
      const challenge: string = challenged.body.data.next_action.redirect.url
      const back = await fetch(challenge, { redirect: "manual" })
      const returned = new URL(back.headers.get("location")!)
      // reading the intent fails (a 500): the outcome is unknown
      fake.fault(/^GET \/v1\/payment_intents\/pi_/, "500_after", 3)
      const shown = await api.handler(new Request(`http://localhost${returned.pathname}${returned.search}`))
      const html = await shown.text()
      expect(html).toContain("We are confirming your payment")
      expect(html).not.toContain("failed")
      expect(html).not.toContain("<form")
      // the worker settles it a few minutes later, without webhooks and without the payer
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-01-01T00:10:00Z" })
      expect((await ok(api, key, "GET", `/api/v1/session/${sessionId}`)).session.status).toBe("complete")
      expect(fake.violations).toEqual([])
    })

    it("back from 3-D Secure without authenticating: the form again; paying with another card cancels the waiting intent first — paid once", async () => {
      const { key } = await merchant(api, "Left the challenge")
      const sessionId = await sessionFor(api, key, "25.00")
      const challenged = await pay(api, sessionId, "pm_card_authenticationRequired")
      const waiting: string = challenged.body.data.next_action.redirect.url.split("/3ds/")[1]
      const shown = await api.handler(
        new Request(`http://localhost/checkout/${sessionId}/complete?payment_intent=${waiting}`)
      )
      expect(shown.status).toBe(402)
      const html = await shown.text()
      expect(html).toContain("not completed")
      expect(html).toContain("<form")
      const paid = await pay(api, sessionId, "pm_card_visa")
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const session = (await ok(api, key, "GET", `/api/v1/session/${sessionId}`)).session
      expect(session.status).toBe("complete")
      expect((fake.intents.get(waiting) as any).status).toBe("canceled")
      // the payer authenticates the old challenge after all: it cannot be paid any more
      await fetch(`${fake.base}/3ds/${waiting}`, { redirect: "manual" })
      expect(intentsOf(session.trade_id).filter((i) => i.status === "succeeded").length).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("a 3-D Secure payment finished while no webhook comes and the payer never returns: the worker finds it paid", async () => {
      const { key } = await merchant(api, "No webhooks")
      const sessionId = await sessionFor(api, key, "25.00")
      const challenged = await pay(api, sessionId, "pm_card_authenticationRequired")
      const challenge: string = challenged.body.data.next_action.redirect.url
      // the worker's first look finds it waiting
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-01-01T00:02:00Z" })
      expect((await ok(api, key, "GET", `/api/v1/session/${sessionId}`)).session.status).toBe("open")
      // the payer authenticates, then closes the tab before Stripe's redirect lands
      await fetch(challenge, { redirect: "manual" })
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-01-01T00:30:00Z" })
      const session = (await ok(api, key, "GET", `/api/v1/session/${sessionId}`)).session
      expect(session.status).toBe("complete")
      expect((await ok(api, key, "GET", `/api/v1/subscription/${session.subscription_id}`)).subscription.status).toBe(
        "active"
      )
      expect(fake.violations).toEqual([])
    })

    it("a renewal charge re-run by the worker more than 24 hours after a crash reads what the first call did: no second PaymentIntent", async () => {
      const { key, id } = await merchant(api, "Crash")
      const { session } = await paidCheckout(api, key, "30.00")
      // the renewal: Stripe charges, then its answer is lost (the process dies before recording it)
      fake.fault(/^POST \/v1\/payment_intents$/, "500_after", 3)
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-01T00:00:30Z" })
      const renewal = (
        await ok(api, key, "GET", `/api/v1/invoices?subscription_id=${session.subscription_id}&limit=10`)
      ).list.find((i: any) => i.invoice_type === "renewal")
      expect((await ok(api, key, "GET", `/api/v1/trade/${renewal.trade_id}`)).trade.trade_status).toBe("processing")
      expect(intentsOf(renewal.trade_id).length).toBe(1)
      // more than a day later at Stripe (its idempotency key is gone), the worker's charge item runs again
      fake.advance(DAY + 3600)
      const result = await api.runtime.runPromise(
        Charges.Charges.use((c) => c.chargePending(id, renewal.trade_id as string))
      )
      expect(result._tag === "Some" && result.value.status).toBe("succeeded")
      expect((await ok(api, key, "GET", `/api/v1/trade/${renewal.trade_id}`)).trade.trade_status).toBe("succeeded")
      expect(intentsOf(renewal.trade_id).length).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("a refund still pending after 24 hours: the every-minute settling reads it by id, never a second refund", async () => {
      const { key } = await merchant(api, "Pending refund")
      const { tradeId, intent } = await paidCheckout(api, key, "40.00")
      fake.pendRefunds(true)
      const refund = await ok(api, key, "POST", "/api/v1/refund", { trade_id: tradeId, amount: "5.00" })
      fake.pendRefunds(false)
      expect(refund.refund_status).toBe("pending")
      // a day and more at Stripe (the refund's key is pruned); the settling runs again
      fake.advance(DAY + 3600)
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-01-01T00:05:00Z" })
      expect(refundsOf(intent.id).length).toBe(1)
      expect((await ok(api, key, "GET", `/api/v1/refund/${refund.refund_id}`)).refund.refund_status).toBe("pending")
      // the bank settles it: the next settling records it
      fake.settleRefund(refundsOf(intent.id)[0].id, "succeeded")
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-01-01T00:10:00Z" })
      expect((await ok(api, key, "GET", `/api/v1/refund/${refund.refund_id}`)).refund.refund_status).toBe("succeeded")
      expect(refundsOf(intent.id).map((r) => r.amount)).toEqual([500])
      expect(fake.violations).toEqual([])
    })

    it("a refund whose answer is lost after Stripe refunded: pending with the amount still reserved, settled by reading it — refunded once", async () => {
      const { key } = await merchant(api, "Refund timeout")
      const { tradeId, intent } = await paidCheckout(api, key, "40.00")
      fake.fault(/^POST \/v1\/refunds$/, "500_after", 3)
      const r = await api.call("POST", "/api/v1/refund", key, { trade_id: tradeId })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const refund = (r.body as any).data
      expect(refund.refund_status).toBe("pending")
      expect(refundsOf(intent.id).length).toBe(1)
      // the reservation stands: the merchant cannot refund the same money again
      expect((await ok(api, key, "GET", `/api/v1/trade/${tradeId}`)).trade.total_refunded_amount).toBe("40.00")
      const again = await api.call("POST", "/api/v1/refund", key, { trade_id: tradeId, amount: "40.00" })
      expect(again.status).toBe(400)
      // settled by reading it, even after Stripe forgot the key (no re_ id ever came back)
      fake.advance(DAY + 3600)
      await ok(api, key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-01-01T00:05:00Z" })
      expect((await ok(api, key, "GET", `/api/v1/refund/${refund.refund_id}`)).refund.refund_status).toBe("succeeded")
      expect((await ok(api, key, "GET", `/api/v1/trade/${tradeId}`)).trade.refund_status).toBe("refunded")
      expect(refundsOf(intent.id).map((x) => x.amount)).toEqual([4000])
      expect(fake.violations).toEqual([])
    })

    it("a late payment_intent.succeeded for a trade already marked failed is applied: the money was taken", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const { key, id } = await merchant(routed, "Late success")
        const secret = "whsec_latesuccesssecret"
        fake.account({ secret_key: "sk_test_latesuccess01", publishable_key: "pk_test_latesuccess01" })
        await ok(routed, key, "POST", "/api/v1/payment_settings", {
          provider: "stripe",
          secret_key: "sk_test_latesuccess01",
          publishable_key: "pk_test_latesuccess01",
          webhook_secret: secret
        })
        const sessionId = await sessionFor(routed, key, "25.00")
        const challenged = await pay(routed, sessionId, "pm_card_authenticationRequired")
        const challenge: string = challenged.body.data.next_action.redirect.url
        // the payer fails the challenge: the trade is recorded failed
        const intentId = challenge.split("/3ds/")[1]!
        await fetch(`${challenge}?fail=1`, { redirect: "manual" })
        const failed = await routed.handler(
          new Request(`http://localhost/checkout/${sessionId}/complete?payment_intent=${intentId}`)
        )
        expect(failed.status).toBe(402)
        const session = (await ok(routed, key, "GET", `/api/v1/session/${sessionId}`)).session
        const trade = async () => (await ok(routed, key, "GET", `/api/v1/trade/${session.trade_id}`)).trade
        expect((await trade()).trade_status).toBe("payment_failed")
        // then the intent succeeds after all (confirmed again in the payer's browser); Stripe says so
        const intent = fake.succeedLater(intentId)
        const event = fake.event("payment_intent.succeeded", intent, secret)
        const answered = await routed.handler(
          new Request(`http://localhost/webhooks/stripe/${id}`, {
            method: "POST",
            headers: { "content-type": "application/json", "stripe-signature": event.header },
            body: event.payload
          })
        )
        expect(answered.status).toBe(200)
        expect((await trade()).trade_status).toBe("succeeded")
        const after = (await ok(routed, key, "GET", `/api/v1/session/${sessionId}`)).session
        expect(after.status).toBe("complete")
        expect(
          (await ok(routed, key, "GET", `/api/v1/subscription/${after.subscription_id}`)).subscription.status
        ).toBe("active")
        const events = (
          await ok(routed, key, "GET", `/api/v2/webhook/events?business_ids=${session.trade_id}&limit=100`)
        ).list.map((e: any) => e.event_type)
        expect(events).toContain("v2.trades.succeeded")
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })
  })
}

// The same through the facade (`createBilling` with the Stripe gateway): a refund whose answer was
// lost is pending with its amount reserved, then settled by reading it — refunded once.

for (const [name, storage] of Harness.facadeStorages) {
  describe(`charges exactly once through the facade (${name})`, { timeout: 180_000 }, () => {
    it("a refund whose answer is lost after Stripe refunded stays pending and reserved, then settles once", async () => {
      const fake = await Fake.start()
      fake.account({ secret_key: "sk_test_facade", publishable_key: "pk_test_facade" })
      const billing = await createBilling({
        storage,
        masterKey: "ab".repeat(32),
        payments: StripeGateway.layer({ secretKey: "sk_test_facade", apiBase: fake.base, timeoutMs: 5_000 })
      })
      try {
        const { merchant_id: m } = await billing.merchants.create({
          name: `Facade ${Math.random()}`,
          currency: "USD",
          frozen_time: Date.parse("2026-01-01T00:00:00Z")
        })
        const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
        const price = await billing.catalog.createPrice(m, {
          name: "Pro monthly",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
        const session = await billing.checkout.createSession(m, {
          payer_id: "facade",
          line_items: [{ price_id: price.id }]
        })
        const paid = await billing.checkout.pay(m, session.session_id, { payment_method: "pm_card_visa" })
        expect(paid.status).toBe("succeeded")
        const tradeId = paid.trade.trade_id
        const ctx = await billing.context()
        const engine = <A, E>(f: (b: Billing.Billing["Service"]) => Effect.Effect<A, E>) =>
          Effect.runPromise(Billing.Billing.use(f).pipe(Effect.provide(ctx)))
        fake.fault(/^POST \/v1\/refunds$/, "500_after", 3)
        const refund = await billing.refunds.create(m, { trade_id: tradeId })
        expect(refund.refund_status).toBe("pending")
        expect((await engine((b) => b.getTrade(m, tradeId))).total_refunded_amount).toBe("30.00")
        await expect(billing.refunds.create(m, { trade_id: tradeId, amount: "30.00" })).rejects.toMatchObject({
          status: 400
        })
        fake.advance(DAY + 3600)
        await billing.advanceClock(m, new Date("2026-01-01T00:05:00Z"))
        const settled = await Effect.runPromise(
          Refunds.Refunds.use((s) => s.getRefund(m, refund.refund_id)).pipe(Effect.provide(ctx))
        )
        expect(settled.refund_status).toBe("succeeded")
        expect([...fake.refunds.values()].map((r: any) => r.amount)).toEqual([3000])
        expect(fake.violations).toEqual([])
      } finally {
        await billing.close()
        await fake.close()
      }
    })
  })
}
