import { describe, expect, it } from "vitest"
import { ConflictError, createBilling } from "../src/index.js"

// Issue 30, item 8 on the default engine (the sandbox as the only gateway): a live merchant's
// payments are never taken by the sandbox, where a test card "pays".
describe("the default engine (sandbox only) and a live merchant", { timeout: 120_000 }, () => {
  it("createBilling(): a live merchant opens no checkout session (ConflictError, PaymentsUnavailable); a sandbox merchant pays as before", async () => {
    const billing = await createBilling()
    try {
      const priced = async (merchantId: string) => {
        const product = await billing.catalog.createProduct(merchantId, { product_name: "Pro" })
        return billing.catalog.createPrice(merchantId, {
          name: "Pro monthly",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
      }
      const live = await billing.merchants.create({ name: "Live", currency: "USD", mode: "live" })
      const livePrice = await priced(live.merchant_id)
      const refused = await billing.checkout
        .createSession(live.merchant_id, { payer_id: "ada", line_items: [{ price_id: livePrice.id }] })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(refused).toBeInstanceOf(ConflictError)
      expect(refused).toMatchObject({ status: 409, code: "state_conflict", error: { _tag: "PaymentsUnavailable" } })
      const shop = await billing.merchants.create({ name: "Sandbox", currency: "USD" })
      const price = await priced(shop.merchant_id)
      const session = (await billing.checkout.createSession(shop.merchant_id, {
        payer_id: "ada",
        line_items: [{ price_id: price.id }]
      })) as { session_id: string }
      const paid = await billing.checkout.pay(shop.merchant_id, session.session_id, {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2030,
        cvc: "123"
      } as never)
      expect(paid.status).toBe("succeeded")
    } finally {
      await billing.close()
    }
  })
})
