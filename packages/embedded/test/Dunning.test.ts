import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "../src/index.js"

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

describe("createBilling({ dunning })", () => {
  it("the facade's default dunning policy: one retry after 2 days, then canceled", async () => {
    const billing = await createBilling({ storage: "memory", dunning: { retryDays: [2], finalState: "canceled" } })
    try {
      const { merchant_id } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
      })
      const product = await billing.catalog.createProduct(merchant_id, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(merchant_id, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const session = await billing.checkout.createSession(merchant_id, {
        payer_id: "p1",
        line_items: [{ price_id: price.id }]
      })
      const paid = await billing.checkout.pay(merchant_id, session.session_id, card("4000000000000341"))
      const id = paid.subscription!.id
      await billing.advanceClock(merchant_id, new Date("2024-02-02T23:00:00Z"))
      expect((await billing.subscriptions.get(merchant_id, id)).status).toBe("past_due")
      await billing.advanceClock(merchant_id, new Date("2024-02-03T00:00:00Z"))
      const after = await billing.subscriptions.get(merchant_id, id)
      expect([after.status, after.cancel_reason]).toEqual(["canceled", "payment_failed"])
    } finally {
      await billing.close()
    }
  })

  it("refuses a malformed policy at once", async () => {
    await expect(createBilling({ storage: "memory", dunning: { retryDays: [5, 2] } })).rejects.toThrow(/retryDays/)
  })
})
