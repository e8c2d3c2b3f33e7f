import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// A canceled subscription's final invoice under Stripe's minimum charge: never charged (Stripe
// would refuse it, and no later invoice can collect it), paid from the balance and left there as
// the customer's debt, as Stripe leaves it on the customer's balance — never retried (docs/decisions.md,
// "A final invoice under the processor's minimum charge"); and a debt carried on the balance by
// an earlier invoice under the minimum, collected by the final invoice. Through REST, with the Stripe adapter on
// the local fake (which refuses what Stripe refuses), on PGlite and PostgreSQL.

const SECRET = "whsec_unitslocalfakesecret"

/** The engine with each merchant's own Stripe account (the fake). */
const serve = Harness.perMerchant

for (const [name, storage] of Harness.storages) {
  describe(`a final usage invoice under Stripe's minimum charge (${name})`, { timeout: 180_000 }, () => {
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

    /** A merchant of `currency` on the sandbox clock of 2026-01-01, and calls with its key. */
    const merchant = (currency: string) => Harness.stripeMerchant(api, fake, currency, SECRET)
    it("a cancel now whose final usage invoice is under Stripe's minimum: paid from the balance, the amount left as the customer's debt, never charged nor retried", async () => {
      const m = await merchant("USD")
      const flat = await m.price("10.00")
      const calls = (
        await m.ok("POST", "/api/v1/prices", {
          name: "API calls",
          product_id: (await m.ok("POST", "/api/v1/products", { product_name: "API" })).product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "based_on_usage",
          model_type: "tiers_price",
          payment_timing: "postpaid",
          billing_dimension: "usage",
          usage_amount: "1",
          usage_unit: "calls",
          price_tier_type: "graduated",
          usage_tiers: [{ usage_min: "0", usage_max: "", unit_price: "0.002", flat_amount: "" }],
          price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
        })
      ).price_id as string
      const session = await m.ok("POST", "/api/v1/session", {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: flat }, { price_id: calls }]
      })
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const sub = (await m.ok("GET", `/api/v1/session/${session.session_id}`)).session.subscription_id as string
      // 100 calls × 0.002 = 0.20 USD, under Stripe's 0.50 USD
      await m.ok("POST", `/api/v1/subscription/${sub}/usage`, { usage_count: 100, event_id: "e1" })
      await m.advance("2026-01-20T00:00:00Z")
      const posts = () => fake.requests.filter((r) => r.method === "post" && r.path === "/v1/payment_intents").length
      const before = posts()
      await m.ok("POST", `/api/v1/subscription/${sub}/cancel`, { cancel_type: "immediate" })
      const final = (await m.invoices(sub)).find((i) => i.invoice_type === "upgrade")
      // billed, paid from the balance: nothing to charge
      expect([final.subtotal, final.amount, final.biz_status, final.trade_id ?? null]).toEqual([
        "0.20",
        "0.00",
        "success",
        null
      ])
      expect(final.lines.at(-1)).toMatchObject({ kind: "balance", amount: "-0.20" })
      await m.advance("2026-01-21T03:00:00Z")
      await m.advance("2026-01-23T03:00:00Z")
      // no attempt at a charge Stripe will always refuse, now or later; the 0.20 is the customer's debt
      const after = (await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription
      expect([posts() - before, after.status, after.credit_balance]).toEqual([0, "canceled", "-0.20"])
      expect((await m.invoices(sub)).filter((i) => i.invoice_type === "upgrade").length).toBe(1)
      expect(fake.violations).toEqual([])
    })

    it("a final invoice Stripe refuses as under the settlement currency's minimum (amount_too_small): settled the same way, never retried", async () => {
      const m = await merchant("USD")
      const flat = await m.price("10.00")
      const calls = (
        await m.ok("POST", "/api/v1/prices", {
          name: "API calls",
          product_id: (await m.ok("POST", "/api/v1/products", { product_name: "API" })).product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "based_on_usage",
          model_type: "tiers_price",
          payment_timing: "postpaid",
          billing_dimension: "usage",
          usage_amount: "1",
          usage_unit: "calls",
          price_tier_type: "graduated",
          usage_tiers: [{ usage_min: "0", usage_max: "", unit_price: "0.002", flat_amount: "" }],
          price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
        })
      ).price_id as string
      const session = await m.ok("POST", "/api/v1/session", {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: flat }, { price_id: calls }]
      })
      const paid = await api.call(
        "POST",
        `/checkout/${session.session_id}/pay`,
        null,
        { payment_method: "pm_card_visa" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const sub = (await m.ok("GET", `/api/v1/session/${session.session_id}`)).session.subscription_id as string
      // 260 calls: 0.52 USD, over Stripe's 0.50 USD but, as the account now settles in EUR, about 0.47 EUR
      await m.ok("POST", `/api/v1/subscription/${sub}/usage`, { usage_count: 260, event_id: "e1" })
      fake.settle(m.account, { currency: "eur", rates: { usd: 0.9 } })
      await m.advance("2026-01-20T00:00:00Z")
      await m.ok("POST", `/api/v1/subscription/${sub}/cancel`, { cancel_type: "immediate" })
      const final = (await m.invoices(sub)).find((i) => i.invoice_type === "upgrade")
      const trade = (await m.ok("GET", `/api/v1/trade/${final.trade_id}`)).trade
      expect([
        final.amount,
        final.biz_status,
        trade.trade_status,
        trade.closed_reason,
        trade.last_payment_error?.code
      ]).toEqual(["0.52", "success", "closed", "below_minimum", "amount_too_small"])
      const posts = () => fake.requests.filter((r) => r.method === "post" && r.path === "/v1/payment_intents").length
      const before = posts()
      await m.advance("2026-01-21T03:00:00Z")
      await m.advance("2026-01-23T03:00:00Z")
      const after = (await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription
      expect([posts() - before, after.status, after.credit_balance]).toEqual([0, "canceled", "-0.52"])
      expect(fake.violations).toEqual([])
    })

    it("a debt carried from a renewal under the minimum is collected by the final invoice, as a renewal would", async () => {
      const m = await merchant("USD")
      const calls = (
        await m.ok("POST", "/api/v1/prices", {
          name: "API calls",
          product_id: (await m.ok("POST", "/api/v1/products", { product_name: "API" })).product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "based_on_usage",
          model_type: "tiers_price",
          payment_timing: "postpaid",
          billing_dimension: "usage",
          usage_amount: "1",
          usage_unit: "calls",
          price_tier_type: "graduated",
          usage_tiers: [{ usage_min: "0", usage_max: "", unit_price: "0.002", flat_amount: "" }],
          price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
        })
      ).price_id as string
      const { sub } = await m.checkout(calls)
      // January: 100 calls, 0.20 billed in arrears on Feb 1 — under the minimum, carried
      await m.ok("POST", `/api/v1/subscription/${sub}/usage`, { usage_count: 100, event_id: "jan" })
      await m.advance("2026-02-01T03:00:00Z")
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.credit_balance).toBe("-0.20")
      // February: 300 calls (0.60), then a cancel now: the final invoice collects the 0.20 too
      await m.ok("POST", `/api/v1/subscription/${sub}/usage`, { usage_count: 300, event_id: "feb" })
      await m.advance("2026-02-20T00:00:00Z")
      await m.ok("POST", `/api/v1/subscription/${sub}/cancel`, { cancel_type: "immediate" })
      const final = (await m.invoices(sub)).find((i) => i.invoice_type === "upgrade")
      expect([final.subtotal, final.amount, final.biz_status]).toEqual(["0.60", "0.80", "success"])
      const after = (await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription
      expect([after.status, after.credit_balance]).toEqual(["canceled", "0.00"])
      expect(fake.violations).toEqual([])
    })
  })
}
