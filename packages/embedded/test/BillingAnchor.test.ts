import { describe, expect, it } from "@effect/vitest"
import { createBilling, InvalidParameterError } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

describe("billing.checkout with a billing cycle anchor", () => {
  it("the facade takes billing_cycle_anchor, shows it on the session and the subscription, and refuses a past one naming it", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        proration_policy: "per_day",
        frozen_time: Date.parse("2026-01-15T00:00:00Z")
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
        payer_id: "u1",
        line_items: [{ price_id: price.id }],
        billing_cycle_anchor: "2026-02-01T00:00:00Z"
      })
      expect([session.amount, session.billing_cycle_anchor, session.proration_behavior]).toEqual([
        "16.45",
        "2026-02-01T00:00:00Z",
        "create_prorations"
      ])
      const sub = (await billing.checkout.pay(m, session.session_id, card)).subscription!
      const read = await billing.subscriptions.get(m, sub.id)
      expect([read.billing_cycle_anchor, read.current_period_end]).toEqual([
        "2026-02-01T00:00:00Z",
        "2026-02-01T00:00:00Z"
      ])
      const refused = await billing.checkout
        .createSession(m, {
          payer_id: "u2",
          line_items: [{ price_id: price.id }],
          billing_cycle_anchor: "2026-01-01T00:00:00Z"
        })
        .then(
          () => null,
          (e: unknown) => e
        )
      expect(refused).toBeInstanceOf(InvalidParameterError)
      expect((refused as InvalidParameterError).param).toBe("billing_cycle_anchor")
    } finally {
      await billing.close()
    }
  }, 60_000)
})
