import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Merchants, Money } from "@recur/core"
import { Effect } from "effect"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30, the payments review: engine scenarios over REST with the Stripe adapter on the local
// fake (PGlite, and PostgreSQL when RECUR_TEST_DATABASE_URL is set), each a way the change could
// still lose a merchant money or charge a payer wrongly.

const SECRET = "whsec_issue30reviewsecret"

/** The engine with each merchant's own Stripe account (the fake). */
const routedOn = Harness.perMerchant

type Api = ReturnType<typeof routedOn>

/** A merchant on the sandbox clock of 2026-01-01, the fake as its Stripe account. */
const merchantOn = async (api: Api, name: string, keys: string) => {
  const created = await api.runtime.runPromise(
    Merchants.Merchants.use((m) => m.create({ name, currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") }))
  )
  const set = await api.call("POST", "/api/v1/payment_settings", created.api_key, {
    provider: "stripe",
    secret_key: `sk_test_${keys}`,
    publishable_key: `pk_test_${keys}`,
    webhook_secret: SECRET
  })
  expect(set.status, JSON.stringify(set.body)).toBe(200)
  return { key: created.api_key, id: created.merchant.merchant_id as string }
}

/** A paid checkout of a monthly price of `amount`: its trade and Stripe intent. */
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
  const intent = [...fake.intents.values()].find((i: any) => i.metadata.recur_trade_id === tradeId) as any
  return { tradeId, intent }
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

for (const [name, storage] of Harness.storages) {
  describe(`issue 30 review (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: Api
    beforeAll(async () => {
      fake = await Fake.start()
      for (const keys of ["extrarefundmerch01", "extradashboardmer1", "refundratelimit001"])
        fake.account({ secret_key: `sk_test_${keys}`, publishable_key: `pk_test_${keys}` })
      api = routedOn(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    it("the refund of an extra payment (a trade paid twice at Stripe) is not recorded as a refund of the trade's payment", async () => {
      const m = await merchantOn(api, "Extra", "extrarefundmerch01")
      const { tradeId, intent } = await paidCheckout(api, fake, m.key, "40.00")
      // a second intent of the same trade that succeeded too (a race between the payer's page and
      // the worker), and the adapter's reading of both: the extra one is refunded in full at Stripe
      const gateway = StripeGateway.make({ secretKey: "sk_test_extrarefundmerch01", apiBase: fake.base })
      const extra = await Effect.runPromise(
        gateway.charge({
          trade_id: tradeId,
          attempt: 2,
          merchant_id: m.id,
          amount: Money.make(4000n, "USD"),
          source: { _tag: "PaymentMethod", id: "pm_card_visa" },
          off_session: false
        })
      )
      expect(extra._tag).toBe("Succeeded")
      const second = extra._tag === "Succeeded" ? extra.reference! : ""
      const kept = await Effect.runPromise(
        gateway.retrieve(tradeId, {
          attempt: 2,
          references: [
            { attempt: 1, reference: intent.id },
            { attempt: 2, reference: second }
          ]
        })
      )
      expect(kept).toMatchObject({ _tag: "Succeeded", reference: intent.id })
      const made = [...fake.refunds.values()].filter((r: any) => r.payment_intent === second) as Array<any>
      expect(made.map((r) => [r.amount, r.status])).toEqual([[4000, "succeeded"]])
      // Stripe reports the extra charge refunded
      const b = fake.intents.get(second) as any
      const charge = {
        id: b.latest_charge,
        object: "charge",
        amount: b.amount_received,
        amount_captured: b.amount_received,
        amount_refunded: b.amount_received,
        billing_details: { address: null, email: null, name: null, phone: null },
        captured: true,
        created: b.created,
        currency: b.currency,
        customer: b.customer,
        disputed: false,
        livemode: false,
        metadata: b.metadata,
        paid: true,
        payment_intent: b.id,
        payment_method: b.payment_method,
        refunded: true,
        status: "succeeded"
      }
      const answered = await post(api, m.id, fake.event("charge.refunded", charge, SECRET))
      expect(answered.status).toBe(200)
      const updated = await post(api, m.id, fake.event("charge.refund.updated", made[0], SECRET))
      expect(updated.status).toBe(200)
      // the payer's one payment stands: Recur refunded nothing of it, and no credit note says so
      const refunds = (await api.call("GET", `/api/v1/refunds?trade_id=${tradeId}`, m.key)).body.data.list
      expect(refunds).toEqual([])
      const trade = (await api.call("GET", `/api/v1/trade/${tradeId}`, m.key)).body.data.trade
      expect([trade.trade_status, trade.total_refunded_amount]).toEqual(["succeeded", "0.00"])
      expect(fake.violations).toEqual([])
    })

    it("a refund in Stripe's dashboard of a trade's extra payment is not recorded as a refund of the payment that paid it", async () => {
      const m = await merchantOn(api, "Extra, dashboard", "extradashboardmer1")
      const { tradeId, intent } = await paidCheckout(api, fake, m.key, "40.00")
      // a second intent of the trade that succeeded too; the merchant sees two charges in Stripe's
      // dashboard and refunds the second there, before Recur's reading of the trade did
      const gateway = StripeGateway.make({ secretKey: "sk_test_extradashboardmer1", apiBase: fake.base })
      const extra = await Effect.runPromise(
        gateway.charge({
          trade_id: tradeId,
          attempt: 2,
          merchant_id: m.id,
          amount: Money.make(4000n, "USD"),
          source: { _tag: "PaymentMethod", id: "pm_card_visa" },
          off_session: false
        })
      )
      const second = extra._tag === "Succeeded" ? extra.reference! : ""
      expect(second).not.toBe(intent.id)
      const { refund, charge } = fake.dashboardRefund(second, 4000)
      expect((await post(api, m.id, fake.event("charge.refunded", charge, SECRET))).status).toBe(200)
      expect((await post(api, m.id, fake.event("refund.updated", refund, SECRET))).status).toBe(200)
      // the payment that paid the trade stands, and Recur can still refund it
      expect((await api.call("GET", `/api/v1/refunds?trade_id=${tradeId}`, m.key)).body.data.list).toEqual([])
      const trade = (await api.call("GET", `/api/v1/trade/${tradeId}`, m.key)).body.data.trade
      expect([trade.trade_status, trade.total_refunded_amount]).toEqual(["succeeded", "0.00"])
      // a dashboard refund of the payment that paid it is still recorded
      const own = fake.dashboardRefund(intent.id, 1000)
      expect((await post(api, m.id, fake.event("charge.refunded", own.charge, SECRET))).status).toBe(200)
      const refunds = (await api.call("GET", `/api/v1/refunds?trade_id=${tradeId}`, m.key)).body.data.list as Array<any>
      expect(refunds.map((r) => [r.refund_amount, r.refund_status])).toEqual([["10.00", "succeeded"]])
      expect(fake.violations).toEqual([])
    })

    it("a refund met by Stripe's rate limit is not a failed refund: it stays pending, reserved, and is made once when Stripe takes it", async () => {
      const m = await merchantOn(api, "Refund rate limit", "refundratelimit001")
      const { tradeId, intent } = await paidCheckout(api, fake, m.key, "40.00")
      // Stripe answers 429 (past the SDK's own re-sends): nothing was refunded, and nothing refused
      fake.fault(/^POST \/v1\/refunds$/, "rate_limit", 3)
      const r = await api.call("POST", "/api/v1/refund", m.key, { trade_id: tradeId })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const refund = r.body.data
      expect(refund.refund_status).toBe("pending")
      const refundsAt = () => [...fake.refunds.values()].filter((x: any) => x.payment_intent === intent.id) as any[]
      expect(refundsAt()).toEqual([])
      // the worker asks again once Stripe takes requests: refunded once
      const advanced = await api.call("POST", "/api/v1/test_helpers/advance_clock", m.key, {
        frozen_time: "2026-01-01T00:05:00Z"
      })
      expect(advanced.status, JSON.stringify(advanced.body)).toBe(200)
      const after = (await api.call("GET", `/api/v1/refund/${refund.refund_id}`, m.key)).body.data.refund
      expect(after.refund_status).toBe("succeeded")
      expect(refundsAt().map((x) => x.amount)).toEqual([4000])
      expect(fake.violations).toEqual([])
    })
  })
}
