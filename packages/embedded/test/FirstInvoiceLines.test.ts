import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

describe("one-time line items and an anchor over several items through the facade (issue 33)", () => {
  it("a setup fee beside two anchored items: each item its share, the fee whole on the first invoice and never again", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        proration_policy: "per_day",
        frozen_time: Date.parse("2026-01-15T00:00:00Z")
      })
      const priceOf = async (name: string, fields: Record<string, unknown>) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            price_type: "flat_price",
            ...fields
          } as Parameters<typeof billing.catalog.createPrice>[1])
        ).price_id
      }
      const monthly = (amount: string) => ({
        billing_type: "recurring",
        price_plan: { billing_cycle_unit: "month", base_price_val: amount }
      })
      const pro = await priceOf("Pro", monthly("30.00"))
      const addon = await priceOf("Add-on", monthly("10.00"))
      const setup = await priceOf("Setup fee", { billing_type: "one_time", price_val: "199.00" })
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-1",
        line_items: [{ price_id: setup }, { price_id: pro }, { price_id: addon }],
        billing_cycle_anchor: "2026-02-01T00:00:00Z"
      })
      // 17/31 of 30.00 (16.45) and of 10.00 (5.48), and the fee
      expect(session.amount).toBe("220.93")
      const paid = await billing.checkout.pay(m, session.session_id, card)
      const sub = await billing.subscriptions.get(m, paid.subscription!.id)
      expect(sub.items?.map((i) => i.price_id)).toEqual([pro, addon])
      await billing.advanceClock(m, new Date("2026-02-01T00:00:00Z"))
      const invoices = (await billing.invoices.list(m, { subscription_id: sub.id })).list.sort(
        (a, b) => a.cycle_index - b.cycle_index
      )
      expect(invoices.map((i) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "220.93"],
        ["renewal", "40.00"]
      ])
      expect(invoices[0]!.lines?.map((l) => [l.kind, l.amount])).toEqual([
        ["subscription", "16.45"],
        ["subscription", "5.48"],
        ["one_time", "199.00"]
      ])
      expect(invoices[1]!.lines?.map((l) => l.kind)).toEqual(["subscription", "subscription"])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
