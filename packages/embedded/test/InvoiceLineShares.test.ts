import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

describe("invoice lines' discount and tax shares through the facade (issue 33)", () => {
  it("the Team example's invoice states each line's share of the 10 % discount and the 20 % VAT", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const monthly = async (name: string, amount: string) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            price_type: "flat_price",
            billing_type: "recurring",
            price_plan: { billing_cycle_unit: "month", base_price_val: amount }
          } as Parameters<typeof billing.catalog.createPrice>[1])
        ).price_id
      }
      const team = await monthly("Team plan", "49.00")
      const seat = await monthly("Seat", "12.00")
      const sso = await monthly("SSO add-on", "99.00")
      await billing.taxRates.create(m, { name: "VAT", percentage: "20", country: "GB" })
      await billing.discounts.create(m, {
        name: "Ten",
        code: "TEN",
        discount_type: "percentage",
        percent_off: 10,
        duration: "forever"
      })
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-1",
        line_items: [{ price_id: team }, { price_id: seat, quantity: "5" }, { price_id: sso }],
        discount_code: "TEN",
        billing_address: { country_code: "GB", city: "London" }
      })
      expect(session.amount).toBe("224.64")
      const paid = await billing.checkout.pay(m, session.session_id, card)
      const [invoice] = (await billing.invoices.list(m, { subscription_id: paid.subscription!.id })).list
      expect(invoice!.tax_amount).toBe("37.44")
      expect(invoice!.lines?.map((l) => [l.kind, l.discount_amount, l.tax_amount])).toEqual([
        ["subscription", "4.90", "8.82"],
        ["subscription", "6.00", "10.80"],
        ["subscription", "9.90", "17.82"],
        ["discount", null, null]
      ])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
