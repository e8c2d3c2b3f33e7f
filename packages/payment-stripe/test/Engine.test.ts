import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Merchants } from "@recur/core"
import type { TestClient } from "@recur/http"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// The engine's payment scenarios with the Stripe adapter over the local fake of Stripe, through
// the REST adapter: checkout with a collected payment method, renewals off session, dunning and a
// recovery by a new payment method, an upgrade, a partial refund, and an unknown outcome
// reconciled — on PGlite, and on PostgreSQL when RECUR_TEST_DATABASE_URL is set.

/** The engine on one Stripe account (the fake). */
const serve = Harness.oneAccount

type Api = ReturnType<typeof serve>

/** A session for a monthly price of `amount` of the merchant with `key`: its id. */
const sessionFor = async (api: Api, key: string, amount: string) => {
  const product = (await api.call("POST", "/api/v1/products", key, { product_name: "P" })).body.data
  const price = (
    await api.call("POST", "/api/v1/prices", key, {
      name: "Monthly",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: amount }
    })
  ).body.data
  const session = (
    await api.call("POST", "/api/v1/session", key, { payer_id: "p", line_items: [{ price_id: price.price_id }] })
  ).body.data
  return session.session_id as string
}

/** The engine with each merchant's own Stripe account (the fake). */
const routedOn = Harness.perMerchant

/** Stripe's webhook for a merchant, as Stripe posts it. */
const webhook = (api: Api, merchantId: string, payload: string, signature: string) =>
  api.handler(
    new Request(`http://localhost/webhooks/stripe/${merchantId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body: payload
    })
  )

/** A merchant on the sandbox clock of 2026-01-01. */
const merchantOn = (api: Api, name: string) =>
  api.runtime.runPromise(
    Merchants.Merchants.use((m) => m.create({ name, currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") }))
  )

for (const [name, storage] of Harness.storages) {
  describe(`engine scenarios with Stripe (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: ReturnType<typeof serve>
    let key = ""
    beforeAll(async () => {
      fake = await Fake.start()
      // the Stripe accounts of the merchants below (the fake refuses a key it does not know)
      for (const name of [
        "routedmerchant01",
        "webhookmerchant1",
        "invoicemerchant1",
        "abandonmerchant1",
        "lookupmerchant1",
        "refundmerchant1"
      ])
        fake.account({ secret_key: `sk_test_${name}`, publishable_key: `pk_test_${name}` })
      api = serve(storage(), fake)
      key = (
        await api.runtime.runPromise(
          Merchants.Merchants.use((m) =>
            m.create({ name: "Acme", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
          )
        )
      ).api_key
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    const data = (r: TestClient.Answer) => (r.body as any).data
    const ok = async (method: string, path: string, body?: unknown) => {
      const r = await api.call(method, path, key, body)
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200)
      return data(r)
    }
    const advance = (to: string) => ok("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: to })
    const invoices = async (sub: string) =>
      (await ok("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`)).list as Array<any>
    const stripeIntents = () => [...fake.intents.values()] as Array<any>

    it("checkout, renewal, dunning and recovery, upgrade, refund and an unknown outcome, all through Stripe", async () => {
      const product = await ok("POST", "/api/v1/products", { product_name: "Team" })
      const price = (amount: string, name: string) =>
        ok("POST", "/api/v1/prices", {
          name,
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: amount }
        })
      const basic = (await price("30.00", "Basic")).price_id as string
      const pro = (await price("50.00", "Pro")).price_id as string
      const session = await ok("POST", "/api/v1/session", { payer_id: "ada", line_items: [{ price_id: basic }] })

      // checkout: the page posts the payment method Stripe.js collected; no card number reaches us
      const bad = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "not a pm" },
        { accept: "application/json" }
      )
      expect([bad.status, (bad.body as any).data?.param]).toEqual([400, "payment_method"])
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const s = (await ok("GET", `/api/v1/session/${session.session_id}`)).session
      const sub = s.subscription_id as string
      expect((await ok("GET", `/api/v1/subscription/${sub}`)).subscription.status).toBe("active")
      const first = stripeIntents()[0]
      expect([first.amount, first.currency, first.setup_future_usage, first.status]).toEqual([
        3000,
        "usd",
        "off_session",
        "succeeded"
      ])
      // one Stripe customer for our customer, named in its metadata
      const customer = fake.customers.get(first.customer)! as any
      expect(customer.metadata.recur_customer).toContain(s.customer_id)

      // the renewal: off session with the saved payment method
      await advance("2026-02-01T01:00:00Z")
      expect((await invoices(sub)).find((i) => i.cycle_index === 1)?.biz_status).toBe("success")
      const renewal = stripeIntents().at(-1)
      expect([renewal.amount, renewal.customer, renewal.status]).toEqual([3000, first.customer, "succeeded"])

      // the saved card stops working: dunning; then a new payment method recovers the subscription
      fake.declineOffSession(10)
      await advance("2026-03-01T01:00:00Z")
      expect((await ok("GET", `/api/v1/subscription/${sub}`)).subscription.status).toBe("past_due")
      fake.declineOffSession(0)
      const updated = await ok("POST", `/api/v1/subscription/${sub}/payment_method`, {
        payment_method: "pm_card_mastercard"
      })
      expect([updated.status, updated.payment_method.brand, updated.payment_method.last4]).toEqual([
        "active",
        "mastercard",
        "4444"
      ])
      expect((await invoices(sub)).find((i) => i.cycle_index === 2)?.biz_status).toBe("success")

      // an upgrade mid-cycle: charged off session now, the quoted amount
      await advance("2026-03-16T12:00:00Z")
      const quote = await ok("POST", `/api/v1/subscription/${sub}/preview-change`, { price_id: pro })
      await ok("POST", `/api/v1/subscription/${sub}`, { price_id: pro, quote_id: quote.quote_id })
      const upgrade = (await invoices(sub)).find((i) => i.invoice_type === "upgrade")
      expect([upgrade.amount, upgrade.biz_status]).toEqual([quote.total, "success"])
      const upgradeIntent = stripeIntents().at(-1)
      expect(upgradeIntent.amount).toBe(Math.round(Number(quote.total) * 100))

      // a partial refund of the upgrade: a Stripe refund, idempotent by our refund id
      const refund = await ok("POST", "/api/v1/refund", {
        trade_id: upgrade.trade_id,
        amount: "1.00",
        reason: "goodwill"
      })
      expect(refund.refund_status).toBe("succeeded")
      const refunds = [...fake.refunds.values()] as Array<any>
      expect(refunds.map((r) => [r.payment_intent, r.amount])).toEqual([[upgradeIntent.id, 100]])

      // the next renewal's answer is lost (Stripe charged, then a 500): the trade waits, the
      // worker asks Stripe and settles it — charged once
      fake.fault(/^POST \/v1\/payment_intents$/, "500_after", 3)
      await advance("2026-04-01T00:00:30Z")
      const april = (await invoices(sub)).find((i) => i.cycle_index === 3)
      const trade = (await ok("GET", `/api/v1/trade/${april.trade_id}`)).trade
      expect(trade.trade_status).toBe("processing")
      // the reconciliation is due a minute after the attempt
      await advance("2026-04-01T00:30:00Z")
      expect((await ok("GET", `/api/v1/trade/${april.trade_id}`)).trade.trade_status).toBe("succeeded")
      expect((await invoices(sub)).find((i) => i.cycle_index === 3)?.biz_status).toBe("success")
      expect(stripeIntents().filter((i) => i.metadata.recur_trade_id === april.trade_id).length).toBe(1)

      expect(fake.violations).toEqual([])
    })

    it("a stolen card through Stripe stops dunning at once (a hard decline); a new payment method recovers the invoice", async () => {
      const { api_key: k } = await merchantOn(api, "Hard declines")
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await api.call(method, path, k, body)
        expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200)
        return data(r)
      }
      const product = await call("POST", "/api/v1/products", { product_name: "Team" })
      const price = await call("POST", "/api/v1/prices", {
        name: "Team monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const session = await call("POST", "/api/v1/session", {
        payer_id: "grace",
        line_items: [{ price_id: price.price_id }]
      })
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const sub = (await call("GET", `/api/v1/session/${session.session_id}`)).session.subscription_id as string
      // the saved card is reported stolen: Stripe declines `card_declined` / `stolen_card`
      fake.declineOffSession(1, "4000000000009979")
      await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-01T01:00:00Z" })
      const renewal = (
        (await call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`)).list as Array<any>
      ).find((i) => i.cycle_index === 1)
      expect((await call("GET", `/api/v1/subscription/${sub}`)).subscription.status).toBe("unpaid")
      expect([renewal.biz_status, renewal.dunning]).toEqual([
        "failed",
        {
          decline_code: "stolen_card",
          decline_class: "hard",
          next_action: "new_payment_method",
          next_retry_at: null,
          ended_by: "decline"
        }
      ])
      const trade = (await call("GET", `/api/v1/trade/${renewal.trade_id}`)).trade
      expect(trade.last_payment_error).toMatchObject({ code: "stolen_card", decline_class: "hard" })
      // no retry is sent to Stripe
      const intentsOf = () => stripeIntents().filter((i) => i.metadata.recur_trade_id === renewal.trade_id).length
      await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-10T00:00:00Z" })
      expect(intentsOf()).toBe(1)
      const updated = await call("POST", `/api/v1/subscription/${sub}/payment_method`, {
        payment_method: "pm_card_mastercard"
      })
      expect(updated.status).toBe("active")
      const after = ((await call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`)).list as Array<any>).find(
        (i) => i.cycle_index === 1
      )
      expect(after.biz_status).toBe("success")
      expect(fake.violations).toEqual([])
    })

    it("per merchant: a merchant with its Stripe keys charges through Stripe, one without stays on the sandbox", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const withStripe = (await merchantOn(routed, "On Stripe")).api_key
        const onSandbox = (await merchantOn(routed, "On the sandbox")).api_key
        const set = await routed.call("POST", "/api/v1/payment_settings", withStripe, {
          provider: "stripe",
          secret_key: "sk_test_routedmerchant01",
          publishable_key: "pk_test_routedmerchant01"
        })
        expect(set.status, JSON.stringify(set.body)).toBe(200)
        const checkout = async (k: string, payment: Record<string, string>) =>
          routed.call("POST", `/checkout/${await sessionFor(routed, k, "12.00")}/pay`, null, payment, {
            accept: "application/json"
          })
        const before = fake.intents.size
        const viaStripe = await checkout(withStripe, { payment_method: "pm_card_visa" })
        expect(viaStripe.status, JSON.stringify(viaStripe.body)).toBe(200)
        expect(fake.intents.size).toBe(before + 1)
        // a card number is refused on the Stripe merchant's page: it never reaches Stripe
        const card = { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" }
        expect((await checkout(withStripe, card)).status).toBe(402)
        // the sandbox merchant's card is charged by the sandbox, not Stripe
        const viaSandbox = await checkout(onSandbox, card)
        expect(viaSandbox.status, JSON.stringify(viaSandbox.body)).toBe(200)
        expect(fake.intents.size).toBe(before + 1)
        // Stripe saw this merchant's secret key, which the API never shows
        expect(fake.requests.filter((r) => r.path === "/v1/payment_intents").at(-1)?.key).toBe(
          "sk_test_routedmerchant01"
        )
        const shown = (await routed.call("GET", "/api/v1/payment_settings", withStripe)).body.data
        expect(JSON.stringify(shown)).not.toContain("sk_test_routedmerchant01")
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })

    it("Stripe's webhooks: verified, acted on once, order-proof; a dispute is recorded on the trade with its events", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const created = await merchantOn(routed, "Hooks")
        const k = created.api_key
        const secret = "whsec_localfaketestsecret"
        const settings = await routed.call("POST", "/api/v1/payment_settings", k, {
          provider: "stripe",
          secret_key: "sk_test_webhookmerchant1",
          publishable_key: "pk_test_webhookmerchant1",
          webhook_secret: secret
        })
        expect(settings.body.data.webhook_url).toBe(
          `http://localhost:4000/webhooks/stripe/${created.merchant.merchant_id}`
        )
        const session = { session_id: await sessionFor(routed, k, "20.00") }
        // Stripe charged, but its answer was lost: the payment is processing — and Stripe's search
        // does not show the intent yet: the trade's intents are read from its customer's list
        fake.searchLag(true)
        fake.fault(/^POST \/v1\/payment_intents$/, "500_after", 3)
        const paid = await routed.call(
          "POST",
          `/checkout/${session.session_id}/pay`,
          null,
          { payment_method: "pm_card_visa" },
          { accept: "application/json" }
        )
        const tradeId = paid.body.data?.trade_id ?? paid.body.trade_id
        const trade = async () => (await routed.call("GET", `/api/v1/trade/${tradeId}`, k)).body.data.trade
        expect((await trade()).trade_status).toBe("processing")
        const intent = [...fake.intents.values()].find((i: any) => i.metadata.recur_trade_id === tradeId) as any
        const hook = (payload: string, header: string, merchantId = created.merchant.merchant_id) =>
          webhook(routed, merchantId, payload, header)
        const succeeded = fake.event("payment_intent.succeeded", intent, secret)
        // a wrong signature, another merchant's URL, a malformed merchant: refused, nothing done
        const forged = fake.event("payment_intent.succeeded", intent, "whsec_notthesecret00")
        expect((await hook(succeeded.payload, forged.header)).status).toBe(400)
        expect((await hook(`${succeeded.payload} `, succeeded.header)).status).toBe(400)
        const other = await merchantOn(routed, "Other")
        expect((await hook(succeeded.payload, succeeded.header, other.merchant.merchant_id)).status).toBe(400)
        expect((await hook(succeeded.payload, succeeded.header, "mch_nope")).status).toBe(404)
        expect((await trade()).trade_status).toBe("processing")
        // the event settles the payment at once (no waiting for the worker)
        const first = await hook(succeeded.payload, succeeded.header)
        expect([first.status, await first.json()]).toEqual([
          200,
          { received: true, event_id: succeeded.id, duplicate: false, handled: "payment" }
        ])
        expect((await trade()).trade_status).toBe("succeeded")
        fake.searchLag(false)
        const sub = (await routed.call("GET", `/api/v1/session/${session.session_id}`, k)).body.data.session
          .subscription_id
        expect((await routed.call("GET", `/api/v1/subscription/${sub}`, k)).body.data.subscription.status).toBe(
          "active"
        )
        const events = async () =>
          (await routed.call("GET", `/api/v2/webhook/events?business_ids=${tradeId}&limit=100`, k)).body.data.list.map(
            (e: any) => e.event_type
          )
        const settled = await events()
        // redelivered: seen before; an older failure arriving late: Stripe's state decides, nothing moves
        expect(((await (await hook(succeeded.payload, succeeded.header)).json()) as any).duplicate).toBe(true)
        const late = fake.event(
          "payment_intent.payment_failed",
          { ...intent, status: "requires_payment_method" },
          secret
        )
        expect((await hook(late.payload, late.header)).status).toBe(200)
        expect((await trade()).trade_status).toBe("succeeded")
        expect(await events()).toEqual(settled)
        // a dispute: opened, reported again, lost
        const opened = fake.event(
          "charge.dispute.created",
          fake.dispute(intent.id, "needs_response", "dp_test1"),
          secret
        )
        expect(((await (await hook(opened.payload, opened.header)).json()) as any).handled).toBe("dispute")
        expect(await trade()).toMatchObject({
          dispute_status: "open",
          dispute: { dispute_id: "dp_test1", amount: "20.00", currency: "USD", reason: "fraudulent", closed_at: null }
        })
        const again = fake.event("charge.dispute.updated", fake.dispute(intent.id, "under_review", "dp_test1"), secret)
        expect((await hook(again.payload, again.header)).status).toBe(200)
        const closed = fake.event("charge.dispute.closed", fake.dispute(intent.id, "lost", "dp_test1"), secret)
        expect((await hook(closed.payload, closed.header)).status).toBe(200)
        expect((await trade()).dispute_status).toBe("lost")
        const all = await events()
        expect(all.filter((e: string) => e === "v2.trades.disputed").length).toBe(1)
        expect(all.filter((e: string) => e === "v2.trades.dispute_closed").length).toBe(1)
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })

    it("3-D Secure when a customer pays a failed renewal's invoice page: Stripe's challenge, then back to the page, paid", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const k = (await merchantOn(routed, "Invoices")).api_key
        await routed.call("POST", "/api/v1/payment_settings", k, {
          provider: "stripe",
          secret_key: "sk_test_invoicemerchant1",
          publishable_key: "pk_test_invoicemerchant1"
        })
        const sessionId = await sessionFor(routed, k, "25.00")
        const paid = await routed.call(
          "POST",
          `/checkout/${sessionId}/pay`,
          null,
          { payment_method: "pm_card_visa" },
          {
            accept: "application/json"
          }
        )
        expect(paid.status, JSON.stringify(paid.body)).toBe(200)
        const sub = (await routed.call("GET", `/api/v1/session/${sessionId}`, k)).body.data.session.subscription_id
        fake.declineOffSession(1)
        await routed.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T06:00:00Z" })
        fake.declineOffSession(0)
        const invoice = (
          await routed.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=10`, k)
        ).body.data.list.find((i: any) => i.invoice_type === "renewal")
        expect(invoice.biz_status).toBe("retrying")
        const page = new URL(invoice.hosted_invoice_url).pathname
        const pay = await routed.handler(
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
        // the customer authenticates; Stripe sends them back to the invoice's page
        const back = await fetch(challenge, { redirect: "manual" })
        const returned = new URL(back.headers.get("location")!)
        expect(returned.pathname).toBe(page)
        expect(returned.searchParams.get("payment_intent")).toMatch(/^pi_/)
        const shown = await routed.handler(new Request(`http://localhost${page}${returned.search}`))
        expect(shown.status).toBe(200)
        const after = (await routed.call("GET", `/api/v1/invoice/${invoice.invoice_id}`, k)).body.data.invoice
        expect(after.biz_status).toBe("success")
        // paid: a hundred more anonymous visits of the link Stripe sent the payer back to ask Stripe nothing
        const asked = fake.requests.length
        for (let i = 0; i < 100; i++)
          expect((await routed.handler(new Request(`http://localhost${page}${returned.search}`))).status).toBe(200)
        expect(fake.requests.length).toBe(asked)
        expect((await routed.call("GET", `/api/v1/subscription/${sub}`, k)).body.data.subscription.status).toBe(
          "active"
        )
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })

    it("a checkout's 3-D Secure challenge left unanswered: at the session's expiry Stripe's intent is canceled, the checkout ends voided and unnumbered", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const k = (await merchantOn(routed, "Abandoned")).api_key
        await routed.call("POST", "/api/v1/payment_settings", k, {
          provider: "stripe",
          secret_key: "sk_test_abandonmerchant1",
          publishable_key: "pk_test_abandonmerchant1"
        })
        const sessionId = await sessionFor(routed, k, "25.00")
        const pay = await routed.call(
          "POST",
          `/checkout/${sessionId}/pay`,
          null,
          { payment_method: "pm_card_authenticationRequired" },
          { accept: "application/json" }
        )
        expect(pay.status, JSON.stringify(pay.body)).toBe(200)
        const session = (await routed.call("GET", `/api/v1/session/${sessionId}`, k)).body.data.session
        const trade = (await routed.call("GET", `/api/v1/trade/${session.trade_id}`, k)).body.data.trade
        const challenge = trade.next_action.redirect.url as string
        expect(challenge).toContain(`${fake.base}/3ds/pi_`)
        await routed.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-02T00:00:00Z" })
        const intent = fake.intents.get(challenge.split("/").pop()!) as any
        expect(intent.status).toBe("canceled")
        const closed = (await routed.call("GET", `/api/v1/trade/${session.trade_id}`, k)).body.data.trade
        expect([closed.trade_status, closed.closed_reason]).toEqual(["closed", "expired"])
        const sub = (await routed.call("GET", `/api/v1/subscription/${session.subscription_id}`, k)).body.data
          .subscription
        expect([sub.status, sub.cancel_reason]).toEqual(["canceled", "incomplete_expired"])
        const [invoice] = (await routed.call("GET", `/api/v1/invoices?subscription_id=${sub.id}`, k)).body.data.list
        expect([invoice.biz_status, invoice.number]).toEqual(["void", null])
        // the payer who comes back to the challenge now cannot pay it
        await fetch(challenge, { redirect: "manual" })
        expect((fake.intents.get(challenge.split("/").pop()!) as any).status).toBe("canceled")
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })

    it("a payer back from 3-D Secure: a paid checkout's /complete never asks Stripe again; an open one asks at most 5 times", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const k = (await merchantOn(routed, "Lookups")).api_key
        await routed.call("POST", "/api/v1/payment_settings", k, {
          provider: "stripe",
          secret_key: "sk_test_lookupmerchant1",
          publishable_key: "pk_test_lookupmerchant1"
        })
        const challenged = async () => {
          const sessionId = await sessionFor(routed, k, "25.00")
          const pay = await routed.call(
            "POST",
            `/checkout/${sessionId}/pay`,
            null,
            { payment_method: "pm_card_authenticationRequired" },
            { accept: "application/json" }
          )
          expect(pay.status, JSON.stringify(pay.body)).toBe(200)
          const challenge: string = pay.body.data.next_action.redirect.url
          expect(challenge).toContain(`${fake.base}/3ds/pi_`)
          return { sessionId, challenge, intent: challenge.split("/3ds/")[1]! }
        }
        const complete = (sessionId: string, intent: string) =>
          routed.handler(new Request(`http://localhost/checkout/${sessionId}/complete?payment_intent=${intent}`))
        /** Stripe API calls made while `visits` anonymous GETs run. */
        const callsDuring = async (visits: () => Promise<unknown>) => {
          const before = fake.requests.length
          await visits()
          return fake.requests.slice(before)
        }

        // paid: the payer authenticates, Stripe sends them to /complete, the checkout completes
        const paid = await challenged()
        const back = await fetch(paid.challenge, { redirect: "manual" })
        expect(new URL(back.headers.get("location")!).pathname).toBe(`/checkout/${paid.sessionId}/complete`)
        const first = await callsDuring(() => complete(paid.sessionId, paid.intent))
        expect(first.length).toBeGreaterThan(0)
        const session = (await routed.call("GET", `/api/v1/session/${paid.sessionId}`, k)).body.data.session
        expect(session.status).toBe("complete")
        // then 100 more GETs of that URL (a reload, a bot, an attacker): not one call to Stripe
        const again = await callsDuring(async () => {
          for (let i = 0; i < 100; i++) expect((await complete(paid.sessionId, paid.intent)).status).toBeLessThan(500)
        })
        expect(again).toEqual([])

        // open (the challenge is never answered): 30 GETs ask Stripe about the trade 5 times at most
        const open = await challenged()
        const one = (await callsDuring(() => complete(open.sessionId, open.intent))).length
        expect(one).toBeGreaterThan(0)
        const more = await callsDuring(async () => {
          for (let i = 0; i < 29; i++) expect((await complete(open.sessionId, open.intent)).status).toBeLessThan(500)
        })
        expect(more.length).toBeGreaterThan(0)
        expect(more.length).toBeLessThanOrEqual(one * 4)
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })

    it("a refund Stripe accepts pending settles by its webhook: succeeded, or failed with the money given back", async () => {
      const routed = routedOn(storage(), fake)
      try {
        const created = await merchantOn(routed, "Refunds")
        const k = created.api_key
        const secret = "whsec_refundmerchantsecret"
        await routed.call("POST", "/api/v1/payment_settings", k, {
          provider: "stripe",
          secret_key: "sk_test_refundmerchant1",
          publishable_key: "pk_test_refundmerchant1",
          webhook_secret: secret
        })
        const sessionId = await sessionFor(routed, k, "40.00")
        const paid = await routed.call(
          "POST",
          `/checkout/${sessionId}/pay`,
          null,
          { payment_method: "pm_card_visa" },
          {
            accept: "application/json"
          }
        )
        const tradeId = paid.body.data.trade_id as string
        const hook = (payload: string, header: string) => webhook(routed, created.merchant.merchant_id, payload, header)
        const refundOf = async (id: string) => (await routed.call("GET", `/api/v1/refund/${id}`, k)).body.data.refund
        const trade = async () => (await routed.call("GET", `/api/v1/trade/${tradeId}`, k)).body.data.trade
        fake.pendRefunds(true)
        const first = (await routed.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "5.00" })).body.data
        const second = (await routed.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "7.00" })).body.data
        fake.pendRefunds(false)
        expect([first.refund_status, second.refund_status]).toEqual(["pending", "pending"])
        expect((await trade()).total_refunded_amount).toBe("12.00")
        const stripeRefundOf = (ours: string) =>
          [...fake.refunds.values()].find((r: any) => r.metadata.recur_refund_id === ours) as any
        // the bank settles the first, refuses the second; Stripe says so by webhook
        const settled = fake.event(
          "charge.refund.updated",
          fake.settleRefund(stripeRefundOf(first.refund_id).id, "succeeded"),
          secret
        )
        expect(((await (await hook(settled.payload, settled.header)).json()) as any).handled).toBe("refund")
        expect((await refundOf(first.refund_id)).refund_status).toBe("succeeded")
        const refused = fake.event(
          "charge.refund.updated",
          fake.settleRefund(stripeRefundOf(second.refund_id).id, "failed"),
          secret
        )
        expect((await hook(refused.payload, refused.header)).status).toBe(200)
        expect((await refundOf(second.refund_id)).refund_status).toBe("failed")
        // the failed one's reservation is given back; the trade shows what was refunded
        expect(await trade()).toMatchObject({ total_refunded_amount: "5.00", refund_status: "partially_refunded" })
        // the same event again changes nothing
        expect(((await (await hook(settled.payload, settled.header)).json()) as any).duplicate).toBe(true)
        expect(fake.violations).toEqual([])
      } finally {
        await routed.dispose()
      }
    })
  })
}
