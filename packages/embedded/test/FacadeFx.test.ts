// createBilling({ fx }) end to end: a checkout's target_currency without a merchant_rate takes
// the ECB's rate of the day (a fake feed, offline), a pair the ECB lacks comes from `fxRates`, and
// a pair neither has is a 400 naming target_currency.
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { createBilling, EcbRates, InvalidParameterError, type RecurError } from "../src/index.js"

const FEED = readFileSync(new URL("./fixtures/eurofxref-daily.xml", import.meta.url), "utf8")

describe("createBilling({ fx: ecb })", () => {
  it("prices a checkout in the target currency at the ECB's rate; falls back to fxRates; refuses with neither", async () => {
    let calls = 0
    // the recorded feed, dated the publishing day due now (the engine's clock is the real one here)
    const fetch: EcbRates.Fetch = async () => {
      calls += 1
      const day = EcbRates.expectedDay(Date.now())
      return { status: 200, body: new TextEncoder().encode(FEED.replace("2026-11-26", day)) }
    }
    const billing = await createBilling({ storage: "memory", fx: { fetch }, fxRates: { "USD:XAF": "605.5" } })
    try {
      const { merchant_id: m } = await billing.merchants.create({ name: "Acme", currency: "USD" })
      const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(m, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const inYen = await billing.checkout.createSession(m, {
        payer_id: "p1",
        line_items: [{ price_id: price.id }],
        target_currency: "JPY"
      })
      // 30.00 USD × (162.45 / 1.0832 = 149.9723043) = 4499.169129 → 4499 JPY
      expect([inYen.currency, inYen.amount, inYen.merchant_rate]).toEqual(["JPY", "4499", "149.9723043"])
      const inXaf = await billing.checkout.createSession(m, {
        payer_id: "p2",
        line_items: [{ price_id: price.id }],
        target_currency: "XAF"
      })
      expect([inXaf.currency, inXaf.merchant_rate]).toEqual(["XAF", "605.5"])
      expect(calls).toBe(1)
      const refused = (await billing.checkout
        .createSession(m, { payer_id: "p3", line_items: [{ price_id: price.id }], target_currency: "XOF" })
        .then(
          () => undefined,
          (e: RecurError) => e
        ))!
      expect(refused).toBeInstanceOf(InvalidParameterError)
      expect([refused.status, refused.param]).toEqual([400, "target_currency"])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
