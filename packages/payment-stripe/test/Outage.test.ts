import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Merchants } from "@recur/core"
import { createBilling } from "@recur/embedded"
import type { TestClient } from "@recur/http"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30, items 4 and 5, through REST with the Stripe adapter on the local fake: an outage or
// the merchant's keys are never a decline (no dunning, retried with backoff, the operator told),
// and a card whose issuer wants its cardholder is not retried off session: the invoice waits for
// them and their 3-D Secure on its hosted page — on PGlite, and on PostgreSQL when
// RECUR_TEST_DATABASE_URL is set.

/** The engine on one Stripe account (the fake). */
const serve = Harness.oneAccount

for (const [name, storage] of Harness.storages) {
  describe(`an outage is not a decline, with Stripe (${name})`, { timeout: 240_000 }, () => {
    let fake: Fake.StripeFake
    let api: ReturnType<typeof serve>
    beforeAll(async () => {
      fake = await Fake.start()
      api = serve(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    /** A merchant on the sandbox clock of 2026-01-01 with a subscriber paying `amount` monthly with `method`. */
    const subscriber = async (name: string, amount: string, method = "pm_card_visa") => {
      const merchant = await api.runtime.runPromise(
        Merchants.Merchants.use((m) =>
          m.create({ name, currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
        )
      )
      const key = merchant.api_key
      const ok = async (method: string, path: string, body?: unknown) => {
        const r = await api.call(method, path, key, body)
        expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200)
        return (r.body as any).data
      }
      const product = await ok("POST", "/api/v1/products", { product_name: "P" })
      const price = await ok("POST", "/api/v1/prices", {
        name: "Monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: amount }
      })
      const session = await ok("POST", "/api/v1/session", { payer_id: "p", line_items: [{ price_id: price.price_id }] })
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: method },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const challenge = (paid.body as any).data.next_action?.redirect?.url as string | undefined
      if (challenge !== undefined) {
        // the payer authenticates and comes back to the checkout
        const back = await fetch(challenge, { redirect: "manual" })
        const returned = new URL(back.headers.get("location")!)
        await api.handler(new Request(`http://localhost${returned.pathname}${returned.search}`))
      }
      const sub = (await ok("GET", `/api/v1/session/${session.session_id}`)).session.subscription_id as string
      const subscription = async () => (await ok("GET", `/api/v1/subscription/${sub}`)).subscription
      expect((await subscription()).status).toBe("active")
      const invoices = async () =>
        (await ok("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`)).list as Array<any>
      const renewal = async (cycle: number) => (await invoices()).find((i) => i.cycle_index === cycle)
      const trade = async (id: string) => (await ok("GET", `/api/v1/trade/${id}`)).trade
      const events = async (businessId: string) =>
        ((await ok("GET", `/api/v2/webhook/events?business_ids=${businessId}&limit=100`)).list as Array<any>).map(
          (e) => e.event_type as string
        )
      const advance = (to: string) => ok("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: to })
      const intentsOf = (tradeId: string) =>
        [...fake.intents.values()].filter((i: any) => i.metadata.recur_trade_id === tradeId) as Array<any>
      return { key, ok, sub, subscription, invoices, renewal, trade, events, advance, intentsOf }
    }

    it("a rolled key (401) meets every renewal: no dunning, no failed invoice, never canceled; retried with backoff and paid once the key works", async () => {
      const s = await subscriber("Rolled key", "30.00")
      fake.down("401")
      try {
        await s.advance("2026-02-01T01:00:00Z")
        const feb = await s.renewal(1)
        expect(feb.biz_status).toBe("pending")
        const waiting = await s.trade(feb.trade_id)
        expect(waiting).toMatchObject({
          trade_status: "requires_payment_method",
          last_payment_error: { code: "invalid_api_key" }
        })
        expect((await s.subscription()).status).toBe("active")
        // the operator is told once; nothing says the payment failed
        expect(await s.events(feb.trade_id)).toContain("v2.trades.processor_unavailable")
        // well past the merchant's whole dunning window (1, 3, 5, 7 days, then unpaid)
        await s.advance("2026-02-10T06:00:00Z")
        const sub = await s.subscription()
        expect([sub.status, sub.cancel_reason]).toEqual(["active", null])
        const all = await s.invoices()
        expect(all.map((i) => i.biz_status).sort()).toEqual(["pending", "success"])
        for (const i of all.filter((i) => i.biz_status === "pending")) {
          const events = await s.events(i.trade_id)
          expect(events.filter((e) => e === "v2.trades.processor_unavailable").length).toBe(1)
          expect(events).not.toContain("v2.trades.payment_failed")
          expect(s.intentsOf(i.trade_id)).toEqual([])
        }
        // the backoff: nine days of a rolled key are hourly tries at most, not a storm
        const tries = fake.faulted.filter((f) => f.path === "/v1/payment_intents").length
        expect(tries).toBeGreaterThan(10)
        expect(tries).toBeLessThanOrEqual(9 * 24 + 20)
      } finally {
        fake.down(undefined)
      }
      // the merchant saves a working key: within the hour each waiting renewal is charged, once
      await s.advance("2026-02-10T07:30:00Z")
      const all = await s.invoices()
      expect(all.map((i) => i.biz_status)).toEqual(["success", "success"])
      for (const i of all) expect(s.intentsOf(i.trade_id).filter((p) => p.status === "succeeded").length).toBe(1)
      expect((await s.subscription()).status).toBe("active")
      expect(fake.violations).toEqual([])
    })

    it("a rate limit (429) on a renewal: no dunning; the worker tries again a minute later and it is paid", async () => {
      const s = await subscriber("Rate limited", "12.00")
      fake.down("rate_limit", /^POST \/v1\/payment_intents$/)
      await s.advance("2026-02-01T00:00:00Z")
      const feb = await s.renewal(1)
      expect([feb.biz_status, (await s.trade(feb.trade_id)).trade_status]).toEqual([
        "pending",
        "requires_payment_method"
      ])
      expect((await s.subscription()).status).toBe("active")
      fake.down(undefined)
      await s.advance("2026-02-01T00:01:00Z")
      expect((await s.renewal(1)).biz_status).toBe("success")
      expect((await s.trade(feb.trade_id)).trade_status).toBe("succeeded")
      expect((await s.subscription()).status).toBe("active")
      const events = await s.events(feb.trade_id)
      expect(events).toContain("v2.trades.processor_unavailable")
      expect(events).not.toContain("v2.trades.payment_failed")
      expect(fake.violations).toEqual([])
    })

    it("a checkout when Stripe is down: 503 'nothing was charged, try again', never a decline; the payer's next try is charged", async () => {
      const merchant = await api.runtime.runPromise(
        Merchants.Merchants.use((m) => m.create({ name: "Down at checkout", currency: "USD" }))
      )
      const key = merchant.api_key
      const product = (await api.call("POST", "/api/v1/products", key, { product_name: "P" })).body.data
      const price = (
        await api.call("POST", "/api/v1/prices", key, {
          name: "Monthly",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "9.00" }
        })
      ).body.data
      const session = (
        await api.call("POST", "/api/v1/session", key, { payer_id: "p", line_items: [{ price_id: price.price_id }] })
      ).body.data
      fake.down("403")
      let json: TestClient.Answer
      let page: Response
      try {
        json = await api.call(
          "POST",
          `/checkout/${session.session_id}/pay`,
          null,
          { payment_method: "pm_card_visa" },
          { accept: "application/json" }
        )
        expect([json.status, (json.body as any).code, (json.body as any).data]).toMatchObject([
          503,
          "processor_unavailable",
          { reason: "merchant_configuration", code: "permission_denied", trade_status: "requires_payment_method" }
        ])
        page = await api.handler(
          new Request(`http://localhost/checkout/${session.session_id}/pay`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: "payment_method=pm_card_visa"
          })
        )
      } finally {
        fake.down(undefined)
      }
      const html = await page.text()
      expect(page.status).toBe(503)
      expect(html).toContain("Payments are temporarily unavailable. Nothing was charged")
      expect(html).not.toMatch(/declined/i)
      const s = (await api.call("GET", `/api/v1/session/${session.session_id}`, key)).body.data.session
      expect(s.status).toBe("open")
      const sub = (await api.call("GET", `/api/v1/subscription/${s.subscription_id}`, key)).body.data.subscription
      expect(sub.status).toBe("init")
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      expect((await api.call("GET", `/api/v1/session/${session.session_id}`, key)).body.data.session.status).toBe(
        "complete"
      )
      expect(fake.violations).toEqual([])
    })

    it("a portal card update with a card that asks for 3-D Secure: challenged by Stripe, completed when the cardholder is back, the card saved and the past-due subscription paid", async () => {
      const s = await subscriber("Portal challenge", "15.00")
      fake.declineOffSession(1)
      await s.advance("2026-02-01T01:00:00Z")
      expect((await s.subscription()).status).toBe("past_due")
      const customerId = (await s.subscription()).customer_id as string
      const portal = await s.ok("POST", "/api/v1/customer-portal/auth", { customer_id: customerId })
      const base = new URL(portal.portal_session.url).pathname
      const update = await api.handler(
        new Request(`http://localhost${base}/subscription/${s.sub}/payment_method`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "payment_method=pm_card_authenticationRequiredOnSetup"
        })
      )
      expect(update.status, await update.clone().text()).toBe(303)
      const challenge = update.headers.get("location")!
      expect(challenge).toContain(`${fake.base}/3ds/seti_`)
      // nothing changed before the cardholder answers
      expect((await s.subscription()).status).toBe("past_due")
      const back = new URL((await fetch(challenge, { redirect: "manual" })).headers.get("location")!)
      expect(back.pathname).toBe(`${base}/subscription/${s.sub}/payment_method/complete`)
      expect(back.searchParams.get("setup_intent")).toMatch(/^seti_/)
      // a forged or foreign set-up id changes nothing
      const forged = await api.handler(
        new Request(`http://localhost${back.pathname}?setup_intent=seti_${"0".repeat(24)}`)
      )
      expect(forged.status).toBe(400)
      expect((await s.subscription()).status).toBe("past_due")
      const done = await api.handler(new Request(`http://localhost${back.pathname}${back.search}`))
      expect(done.status).toBe(303)
      const after = await s.subscription()
      expect(after.status).toBe("active")
      const shown = await (await api.handler(new Request(`http://localhost${base}`))).text()
      expect(shown).toContain("3155")
      expect((await s.renewal(1)).biz_status).toBe("success")
      expect(fake.violations).toEqual([])
    })

    it("an unpaid subscription's failed invoice paid with a new card that asks for 3-D Secure: challenged, back on the invoice's page, reopened and paid", async () => {
      const s = await subscriber("Invoice challenge", "18.00")
      fake.declineOffSession(10)
      await s.advance("2026-02-20T00:00:00Z")
      fake.declineOffSession(0)
      expect((await s.subscription()).status).toBe("unpaid")
      const failed = await s.renewal(1)
      expect(failed.biz_status).toBe("failed")
      const page = new URL(failed.hosted_invoice_url).pathname
      const pay = await api.handler(
        new Request(`http://localhost${page}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "payment_method=pm_card_authenticationRequiredOnSetup"
        })
      )
      expect(pay.status, await pay.clone().text()).toBe(303)
      const challenge = pay.headers.get("location")!
      expect(challenge).toContain(`${fake.base}/3ds/seti_`)
      expect((await s.subscription()).status).toBe("unpaid")
      const back = new URL((await fetch(challenge, { redirect: "manual" })).headers.get("location")!)
      expect(back.pathname).toBe(page)
      expect(back.searchParams.get("setup_intent")).toMatch(/^seti_/)
      expect((await api.handler(new Request(`http://localhost${page}${back.search}`))).status).toBe(200)
      expect((await s.renewal(1)).biz_status).toBe("success")
      expect((await s.subscription()).status).toBe("active")
      expect(fake.violations).toEqual([])
    })

    it("authentication_required off session: the invoice waits for the customer (no off-session retry), the event names its page; 3-D Secure there pays it and the subscription is active", async () => {
      const s = await subscriber("Wants its cardholder", "20.00", "pm_card_authenticationRequired")
      await s.advance("2026-02-01T01:00:00Z")
      const feb = await s.renewal(1)
      expect(feb.biz_status).toBe("retrying")
      expect((await s.subscription()).status).toBe("past_due")
      expect((await s.trade(feb.trade_id)).last_payment_error.code).toBe("authentication_required")
      const sent = s.intentsOf(feb.trade_id).length
      expect(sent).toBe(1)
      const invoiceEvents = await s.ok("GET", `/api/v2/webhook/events?business_ids=${feb.invoice_id}&limit=100`)
      const required = (invoiceEvents.list as Array<any>).find(
        (e) => e.event_type === "v2.invoice.payment_action_required"
      )
      expect(required).toBeDefined()
      expect(JSON.stringify(required)).toContain(feb.hosted_invoice_url)
      // the dunning schedule runs (1 and 3 days later) without asking Stripe off session again
      await s.advance("2026-02-04T02:00:00Z")
      expect(s.intentsOf(feb.trade_id).length).toBe(sent)
      expect((await s.subscription()).status).toBe("past_due")
      expect((await s.renewal(1)).biz_status).toBe("retrying")
      // the customer opens the hosted invoice page and authenticates
      const page = new URL(feb.hosted_invoice_url).pathname
      const pay = await api.handler(
        new Request(`http://localhost${page}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "payment_method=pm_card_authenticationRequired"
        })
      )
      expect(pay.status).toBe(303)
      const challenge = pay.headers.get("location")!
      expect(challenge).toContain(`${fake.base}/3ds/pi_`)
      const back = new URL((await fetch(challenge, { redirect: "manual" })).headers.get("location")!)
      expect(back.pathname).toBe(page)
      expect((await api.handler(new Request(`http://localhost${page}${back.search}`))).status).toBe(200)
      expect((await s.renewal(1)).biz_status).toBe("success")
      expect((await s.subscription()).status).toBe("active")
      expect(fake.violations).toEqual([])
    })
  })
}

describe("an outage is not a decline, through the facade (createBilling with Stripe)", { timeout: 120_000 }, () => {
  it("a checkout during a rate limit answers status unavailable (no error, nothing charged); the next pay is charged", async () => {
    const fake = await Fake.start()
    const billing = await createBilling({
      storage: "memory",
      payments: StripeGateway.layer({ secretKey: "sk_test_recur", apiBase: fake.base, timeoutMs: 5_000 })
    })
    try {
      const { merchant_id: m } = await billing.merchants.create({ name: "Facade", currency: "USD" })
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
      fake.down("rate_limit")
      const down = await billing.checkout.pay(m, session.session_id, { payment_method: "pm_card_visa" })
      fake.down(undefined)
      expect([down.status, down.error?.code, down.trade.trade_status]).toEqual([
        "unavailable",
        "processor_unavailable",
        "requires_payment_method"
      ])
      expect(down.subscription?.status).toBe("init")
      // nothing retries a checkout: the trade's error says what happened, and promises no retry
      expect(down.trade.last_payment_error).toEqual({
        code: "rate_limit",
        message: "Stripe is busy (rate limit or lock timeout): nothing was charged."
      })
      expect(fake.intents.size).toBe(0)
      const paid = await billing.checkout.pay(m, session.session_id, { payment_method: "pm_card_visa" })
      expect([paid.status, paid.subscription?.status]).toEqual(["succeeded", "active"])
      expect(fake.violations).toEqual([])
    } finally {
      await billing.close()
      await fake.close()
    }
  })
})
