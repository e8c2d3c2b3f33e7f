import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Merchants, type Store } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import type { Layer } from "effect"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30, webhooks and disputes, over REST with the Stripe adapter on the local fake (PGlite,
// and PostgreSQL when RECUR_TEST_DATABASE_URL is set): an event whose object cannot be read is
// answered 503 and not recorded, so Stripe's retry is acted on; a dispute goes through its
// statuses to an end with its amount and evidence deadline in the events; a refund made in
// Stripe's dashboard becomes a Recur refund once; the single-account gateway reads webhooks.

const SECRET = "whsec_issue30hookssecret"

/** The engine with each merchant's own Stripe account (the fake). */
const routedOn = Harness.perMerchant

/** The engine on one Stripe account, its webhooks signed with `SECRET`. */
const singleOn = (storage: Layer.Layer<Store.Storage, unknown>, fake: Fake.StripeFake) =>
  TestClient.make(
    engineOn(storage, {
      publicUrl: "http://localhost:4000",
      payments: StripeGateway.layer({
        secretKey: "sk_test_singleaccount",
        webhookSecret: SECRET,
        apiBase: fake.base,
        timeoutMs: 5_000
      })
    })
  )

type Api = ReturnType<typeof routedOn>

/** A merchant on the sandbox clock of 2026-01-01, with the fake as its Stripe account when `keys`. */
const merchantOn = async (api: Api, name: string, keys?: string) => {
  const created = await api.runtime.runPromise(
    Merchants.Merchants.use((m) => m.create({ name, currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") }))
  )
  if (keys !== undefined) {
    const set = await api.call("POST", "/api/v1/payment_settings", created.api_key, {
      provider: "stripe",
      secret_key: `sk_test_${keys}`,
      publishable_key: `pk_test_${keys}`,
      webhook_secret: SECRET
    })
    expect(set.status, JSON.stringify(set.body)).toBe(200)
  }
  return { key: created.api_key, id: created.merchant.merchant_id as string }
}

/** A paid checkout of a monthly price of `amount`: its trade, subscription and Stripe intent. */
const paidCheckout = async (api: Api, fake: Fake.StripeFake, key: string, amount: string) => {
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
  const paid = await api.call(
    "POST",
    `/checkout/${session.session_id}/pay`,
    null,
    { payment_method: "pm_card_visa" },
    { accept: "application/json" }
  )
  expect(paid.status, JSON.stringify(paid.body)).toBe(200)
  const tradeId = paid.body.data.trade_id as string
  const s = (await api.call("GET", `/api/v1/session/${session.session_id}`, key)).body.data.session
  const intent = [...fake.intents.values()].find((i: any) => i.metadata.recur_trade_id === tradeId) as any
  return { tradeId, subscriptionId: s.subscription_id as string, intent }
}

/** Stripe's webhook for a merchant, as Stripe posts it. */
const post = (api: Api, merchantId: string, event: { readonly payload: string; readonly header: string }) =>
  api.handler(
    new Request(`http://localhost/webhooks/stripe/${merchantId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": event.header },
      body: event.payload
    })
  )

/** The Recur events of one object, oldest first: their type and data. */
const eventsOf = async (api: Api, key: string, businessId: string) =>
  (
    (await api.call("GET", `/api/v2/webhook/events?business_ids=${businessId}&limit=100`, key)).body.data
      .list as Array<any>
  )
    .map((e) => ({ type: e.event_type as string, data: JSON.parse(e.content).data }))
    .reverse()

for (const [name, storage] of Harness.storages) {
  describe(`Stripe webhooks and disputes (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: Api
    beforeAll(async () => {
      fake = await Fake.start()
      // the Stripe accounts of the merchants below (the fake refuses keys it does not know)
      fake.account({ secret_key: "sk_test_singleaccount", publishable_key: "pk_test_singleaccount" })
      for (const keys of [
        "transientmerchant1",
        "intrudermerchant01",
        "transientmerchant2",
        "disputemerchant01",
        "dashboardmerchant1",
        "concurrentmerchan1",
        "holdmerchant000001",
        "holdmerchant000002",
        "holdmerchant000003"
      ])
        fake.account({ secret_key: `sk_test_${keys}`, publishable_key: `pk_test_${keys}` })
      api = routedOn(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    const tradeOf = async (key: string, tradeId: string) =>
      (await api.call("GET", `/api/v1/trade/${tradeId}`, key)).body.data.trade

    it("a dispute whose payment intent Stripe fails to answer once: 503, not recorded, and Stripe's retry is applied", async () => {
      const m = await merchantOn(api, "Transient", "transientmerchant1")
      const { tradeId, intent } = await paidCheckout(api, fake, m.key, "20.00")
      const dueBy = 1_768_000_000
      const created = fake.event(
        "charge.dispute.created",
        fake.dispute(intent.id, "needs_response", "dp_transient", { dueBy }),
        SECRET
      )
      // Stripe answers 500 while the dispute's intent is read: the event is not acknowledged
      fake.fault(/^GET \/v1\/payment_intents\/pi_/, "500_after", 3)
      const first = await post(api, m.id, created)
      expect(first.status).toBe(503)
      expect(first.headers.get("retry-after")).toBe("60")
      expect(await first.json()).toMatchObject({ code: "processor_unavailable" })
      expect((await tradeOf(m.key, tradeId)).dispute_status).toBe("none")
      // Stripe sends it again: acted on now (it was not recorded as seen)
      const again = await post(api, m.id, created)
      expect([again.status, await again.json()]).toEqual([
        200,
        { received: true, event_id: created.id, duplicate: false, handled: "dispute" }
      ])
      expect(await tradeOf(m.key, tradeId)).toMatchObject({
        dispute_status: "open",
        dispute: {
          dispute_id: "dp_transient",
          amount: "20.00",
          processor_status: "needs_response",
          evidence_due_by: new Date(dueBy * 1000).toISOString().replace(".000Z", "Z")
        }
      })
      // and once more: seen, nothing twice
      expect(((await (await post(api, m.id, created)).json()) as any).duplicate).toBe(true)
      // another merchant's own account reporting this merchant's trade: nothing is done to it
      const intruder = await merchantOn(api, "Intruder", "intrudermerchant01")
      const closing = fake.event("charge.dispute.closed", fake.dispute(intent.id, "lost", "dp_transient"), SECRET)
      const ignored = await post(api, intruder.id, closing)
      expect([ignored.status, ((await ignored.json()) as any).handled]).toEqual([200, "ignored"])
      expect((await tradeOf(m.key, tradeId)).dispute_status).toBe("open")
      const disputed = (await eventsOf(api, m.key, tradeId)).filter((e) => e.type === "v2.trades.disputed")
      expect(disputed.length).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("a payment event whose intent Stripe fails to answer: 503 until the payment can be read, then applied", async () => {
      const m = await merchantOn(api, "Transient payment", "transientmerchant2")
      const product = (await api.call("POST", "/api/v1/products", m.key, { product_name: "P" })).body.data
      const price = (
        await api.call("POST", "/api/v1/prices", m.key, {
          name: "Monthly",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "15.00" }
        })
      ).body.data
      const session = (
        await api.call("POST", "/api/v1/session", m.key, { payer_id: "p", line_items: [{ price_id: price.price_id }] })
      ).body.data
      // Stripe charged, its answer was lost: the trade waits
      fake.fault(/^POST \/v1\/payment_intents$/, "500_after", 3)
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      const tradeId = (paid.body.data?.trade_id ?? paid.body.trade_id) as string
      expect((await tradeOf(m.key, tradeId)).trade_status).toBe("processing")
      const intent = [...fake.intents.values()].find((i: any) => i.metadata.recur_trade_id === tradeId) as any
      const succeeded = fake.event("payment_intent.succeeded", intent, SECRET)
      // a refund in the dashboard of that payment, reported while Stripe cannot tell the payment:
      // not recorded against a trade Recur does not know as paid, retried
      const { charge } = fake.dashboardRefund(intent.id, 500)
      const refunded = fake.event("charge.refunded", charge, SECRET)
      fake.fault(/^GET \/v1\/payment_intents$/, "500_after", 3)
      expect((await post(api, m.id, refunded)).status).toBe(503)
      // the engine asks Stripe about the trade (the list of its kept customer's intents); Stripe
      // fails: still processing, so retried
      fake.fault(/^GET \/v1\/payment_intents$/, "500_after", 3)
      expect((await post(api, m.id, succeeded)).status).toBe(503)
      expect((await tradeOf(m.key, tradeId)).trade_status).toBe("processing")
      const retried = await post(api, m.id, succeeded)
      expect([retried.status, ((await retried.json()) as any).handled]).toEqual([200, "payment"])
      expect((await tradeOf(m.key, tradeId)).trade_status).toBe("succeeded")
      // Stripe's retry of the refund's event: recorded now
      expect((await post(api, m.id, refunded)).status).toBe(200)
      expect(await tradeOf(m.key, tradeId)).toMatchObject({
        total_refunded_amount: "5.00",
        refund_status: "partially_refunded"
      })
      expect(fake.violations).toEqual([])
    })

    it("a dispute through Stripe's statuses: each ends (warning_closed, won, lost, prevented) with its amount and deadline in the events", async () => {
      const m = await merchantOn(api, "Disputes", "disputemerchant01")
      const hook = (type: string, intent: any, status: string, id: string, options = {}) =>
        post(api, m.id, fake.event(type, fake.dispute(intent.id, status, id, options), SECRET))
      const cases = [
        { path: ["warning_needs_response", "warning_under_review", "warning_closed"], end: "warning_closed" },
        { path: ["needs_response", "under_review", "won"], end: "won" },
        { path: ["needs_response", "lost"], end: "lost" },
        { path: ["warning_needs_response", "prevented"], end: "prevented" },
        // the disputed charge refunded: the payer has the money back
        { path: ["needs_response", "charge_refunded"], end: "lost" }
      ] as const
      for (const [n, c] of cases.entries()) {
        const { tradeId, intent } = await paidCheckout(api, fake, m.key, "30.00")
        const dueBy = 1_768_000_000 + n
        for (const [i, status] of c.path.entries()) {
          const type =
            i === 0
              ? "charge.dispute.created"
              : i === c.path.length - 1
                ? "charge.dispute.closed"
                : "charge.dispute.updated"
          const answered = await hook(type, intent, status, `dp_case${n}`, {
            dueBy,
            amount: 2500,
            reason: "fraudulent"
          })
          expect(answered.status).toBe(200)
        }
        const trade = await tradeOf(m.key, tradeId)
        expect(trade).toMatchObject({
          dispute_status: c.end,
          dispute: {
            dispute_id: `dp_case${n}`,
            amount: "25.00",
            currency: "USD",
            reason: "fraudulent",
            processor_status: c.path.at(-1),
            evidence_due_by: new Date(dueBy * 1000).toISOString().replace(".000Z", "Z")
          }
        })
        expect(trade.dispute.closed_at).not.toBeNull()
        // the invoice the charge paid is marked with it
        const invoice = (await api.call("GET", `/api/v1/invoices?trade_id=${tradeId}`, m.key)).body.data.list.find(
          (i: any) => i.trade_id === tradeId && i.invoice_type === "initial"
        )
        expect(invoice.dispute_status).toBe(c.end)
        // the events: opened (with the amount and the deadline), each change of status, closed
        const events = (await eventsOf(api, m.key, tradeId)).filter((e) => e.type.startsWith("v2.trades.dispute"))
        expect(events.map((e) => [e.type, e.data.dispute_status, e.data.dispute.processor_status])).toEqual([
          ["v2.trades.disputed", "open", c.path[0]],
          ...c.path.slice(1, -1).map((s) => ["v2.trades.dispute_updated", "open", s]),
          ["v2.trades.dispute_closed", c.end, c.path.at(-1)]
        ])
        expect(events[0]!.data.dispute).toMatchObject({
          amount: "25.00",
          evidence_due_by: new Date(dueBy * 1000).toISOString().replace(".000Z", "Z")
        })
        // a late report of an open status changes nothing once it ended
        expect((await hook("charge.dispute.updated", intent, "under_review", `dp_case${n}`)).status).toBe(200)
        expect((await tradeOf(m.key, tradeId)).dispute_status).toBe(c.end)
      }
      expect(fake.violations).toEqual([])
    })

    it("a refund made in Stripe's dashboard becomes one Recur refund with its credit note, delivered twice or as two events", async () => {
      const m = await merchantOn(api, "Dashboard", "dashboardmerchant1")
      const { tradeId, intent } = await paidCheckout(api, fake, m.key, "40.00")
      const { refund, charge } = fake.dashboardRefund(intent.id, 1500)
      const refunded = fake.event("charge.refunded", charge, SECRET)
      // Stripe fails the list of the charge's refunds: 503, nothing recorded, then Stripe's retry
      fake.fault(/^GET \/v1\/refunds$/, "500_after", 3)
      expect((await post(api, m.id, refunded)).status).toBe(503)
      expect((await api.call("GET", `/api/v1/refunds?trade_id=${tradeId}`, m.key)).body.data.list).toEqual([])
      const first = await post(api, m.id, refunded)
      expect([first.status, ((await first.json()) as any).handled]).toEqual([200, "refund"])
      // delivered again, and Stripe's other event about the same refund
      expect(((await (await post(api, m.id, refunded)).json()) as any).duplicate).toBe(true)
      const updated = fake.event("charge.refund.updated", refund, SECRET)
      expect((await post(api, m.id, updated)).status).toBe(200)
      const refunds = (await api.call("GET", `/api/v1/refunds?trade_id=${tradeId}`, m.key)).body.data.list as Array<any>
      expect(refunds.map((r) => [r.trade_id, r.refund_amount, r.refund_status])).toEqual([
        [tradeId, "15.00", "succeeded"]
      ])
      expect(await tradeOf(m.key, tradeId)).toMatchObject({
        total_refunded_amount: "15.00",
        refund_status: "partially_refunded"
      })
      const notes = (await api.call("GET", `/api/v1/invoices?trade_id=${tradeId}&limit=100`, m.key)).body.data
        .list as Array<any>
      expect(notes.filter((i) => i.invoice_type === "refund").map((i) => i.amount)).toEqual(["15.00"])
      const events = (await eventsOf(api, m.key, refunds[0].refund_id)).map((e) => e.type)
      expect(events).toEqual(["v2.refunds.succeeded"])
      // no refund was asked of Stripe: the dashboard's is the only one
      expect([...fake.refunds.values()].filter((r: any) => r.payment_intent === intent.id).length).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("a dashboard refund delivered concurrently is recorded once", async () => {
      const m = await merchantOn(api, "Concurrent", "concurrentmerchan1")
      const { tradeId, intent } = await paidCheckout(api, fake, m.key, "40.00")
      const { refund, charge } = fake.dashboardRefund(intent.id, 4000)
      const answers = await Promise.all([
        post(api, m.id, fake.event("charge.refunded", charge, SECRET)),
        post(api, m.id, fake.event("charge.refunded", charge, SECRET)),
        post(api, m.id, fake.event("charge.refund.updated", refund, SECRET)),
        post(api, m.id, fake.event("refund.updated", refund, SECRET))
      ])
      // a lost race is answered 409 at worst, and Stripe sends that event again
      for (const a of answers) expect([200, 409]).toContain(a.status)
      const refunds = (await api.call("GET", `/api/v1/refunds?trade_id=${tradeId}`, m.key)).body.data.list as Array<any>
      expect(refunds.map((r) => [r.refund_amount, r.refund_status])).toEqual([["40.00", "succeeded"]])
      expect(await tradeOf(m.key, tradeId)).toMatchObject({ total_refunded_amount: "40.00", refund_status: "refunded" })
      expect(fake.violations).toEqual([])
    })

    it("a renewal under an open fraud dispute is not charged by default, and is with the merchant's policy", async () => {
      const renewalUnderDispute = async (m: { key: string; id: string }, reason: string) => {
        const { subscriptionId, intent } = await paidCheckout(api, fake, m.key, "20.00")
        const opened = fake.event(
          "charge.dispute.created",
          fake.dispute(intent.id, "needs_response", undefined, { reason }),
          SECRET
        )
        expect((await post(api, m.id, opened)).status).toBe(200)
        const before = fake.intents.size
        const advanced = await api.call("POST", "/api/v1/test_helpers/advance_clock", m.key, {
          frozen_time: "2026-02-01T01:00:00Z"
        })
        expect(advanced.status, JSON.stringify(advanced.body)).toBe(200)
        const renewal = (
          await api.call("GET", `/api/v1/invoices?subscription_id=${subscriptionId}&limit=100`, m.key)
        ).body.data.list.find((i: any) => i.cycle_index === 1)
        const trade = (await api.call("GET", `/api/v1/trade/${renewal.trade_id}`, m.key)).body.data.trade
        const subscription = (await api.call("GET", `/api/v1/subscription/${subscriptionId}`, m.key)).body.data
          .subscription
        return { renewal, trade, subscription, sent: fake.intents.size - before }
      }
      // the default: held — nothing sent to Stripe, the invoice follows dunning with the hold's code
      const held = await merchantOn(api, "Holds", "holdmerchant000001")
      expect((await api.call("GET", "/api/v1/dispute_settings", held.key)).body.data).toEqual({
        fraud_dispute_renewals: "hold"
      })
      const h = await renewalUnderDispute(held, "fraudulent")
      expect(h.sent).toBe(0)
      expect([h.trade.trade_status, h.trade.last_payment_error?.code]).toEqual(["payment_failed", "dispute_hold"])
      expect(h.renewal.biz_status).not.toBe("success")
      expect(h.subscription.status).toBe("past_due")
      // the customer gives another card: it is not the disputed one, and the open invoice is paid
      const before = fake.intents.size
      const updated = await api.call("POST", `/api/v1/subscription/${h.subscription.id}/payment_method`, held.key, {
        payment_method: "pm_card_mastercard"
      })
      expect([updated.status, updated.body.data?.status]).toEqual([200, "active"])
      expect(fake.intents.size).toBe(before + 1)
      // a dispute of another reason holds nothing
      const other = await merchantOn(api, "Other reason", "holdmerchant000002")
      const o = await renewalUnderDispute(other, "product_not_received")
      expect([o.sent, o.renewal.biz_status, o.subscription.status]).toEqual([1, "success", "active"])
      // the merchant's policy says charge: charged as usual
      const charging = await merchantOn(api, "Charges", "holdmerchant000003")
      const bad = await api.call("POST", "/api/v1/dispute_settings", charging.key, { fraud_dispute_renewals: "maybe" })
      expect(bad.status).toBe(400)
      const set = await api.call("POST", "/api/v1/dispute_settings", charging.key, { fraud_dispute_renewals: "charge" })
      expect([set.status, set.body.data]).toEqual([200, { fraud_dispute_renewals: "charge" }])
      const c = await renewalUnderDispute(charging, "fraudulent")
      expect([c.sent, c.renewal.biz_status, c.subscription.status]).toEqual([1, "success", "active"])
      expect(fake.violations).toEqual([])
    })

    it("StripeGateway.layer({ secretKey, webhookSecret }) reads Stripe's webhooks too", async () => {
      const single = singleOn(storage(), fake)
      try {
        const m = await merchantOn(single, "Single")
        const { tradeId, intent } = await paidCheckout(single, fake, m.key, "12.00")
        const opened = fake.event("charge.dispute.created", fake.dispute(intent.id, "needs_response"), SECRET)
        const answered = await post(single, m.id, opened)
        expect([answered.status, ((await answered.json()) as any).handled]).toEqual([200, "dispute"])
        expect((await single.call("GET", `/api/v1/trade/${tradeId}`, m.key)).body.data.trade.dispute_status).toBe(
          "open"
        )
        const forged = fake.event("charge.dispute.created", fake.dispute(intent.id, "needs_response"), "whsec_wrong0")
        expect((await post(single, m.id, forged)).status).toBe(400)
        // the account serves another merchant too: Stripe posts to the one endpoint it was given,
        // and the event is acted on for the merchant its intent names
        const other = await merchantOn(single, "Single, second merchant")
        const second = await paidCheckout(single, fake, other.key, "14.00")
        const theirs = fake.event("charge.dispute.created", fake.dispute(second.intent.id, "needs_response"), SECRET)
        const routed = await post(single, m.id, theirs)
        expect([routed.status, ((await routed.json()) as any).handled]).toEqual([200, "dispute"])
        expect(
          (await single.call("GET", `/api/v1/trade/${second.tradeId}`, other.key)).body.data.trade.dispute_status
        ).toBe("open")
        expect(fake.violations).toEqual([])
      } finally {
        await single.dispose()
      }
    })
  })
}
