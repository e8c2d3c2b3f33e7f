import { describe, expect, it } from "@effect/vitest"
import { createBilling, InvalidParameterError, type RecurError } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

describe("several items per subscription through the facade (issue 33)", () => {
  it("a session of 2 line items makes one subscription with 2 items; a mismatch names its line", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
      })
      const priceOf = async (name: string, unit: "month" | "year", amount: string) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: unit, base_price_val: amount }
          })
        ).price_id
      }
      const team = await priceOf("Team plan", "month", "49.00")
      const seat = await priceOf("Seat", "month", "12.00")
      const yearly = await priceOf("Archive", "year", "500.00")
      let refused: unknown
      try {
        await billing.checkout.createSession(m, {
          payer_id: "p-1",
          line_items: [{ price_id: team }, { price_id: yearly }]
        })
      } catch (e) {
        refused = e
      }
      expect(refused).toBeInstanceOf(InvalidParameterError)
      expect((refused as RecurError).param).toBe("line_items[1].price_id")
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-1",
        line_items: [{ price_id: team }, { price_id: seat, quantity: "5" }]
      })
      expect((await billing.checkout.getSession(m, session.session_id)).amount).toBe("109.00")
      const paid = await billing.checkout.pay(m, session.session_id, card)
      const sub = await billing.subscriptions.get(m, paid.subscription!.id)
      expect(sub.items?.map((i) => [i.price_id, i.quantity, i.unit_amount])).toEqual([
        [team, "1", "49.00"],
        [seat, "5", "12.00"]
      ])
      expect((await billing.subscriptions.list(m, {})).list[0]!.items).toHaveLength(2)
    } finally {
      await billing.close()
    }
  }, 60_000)

  it("items.list, items.preview and items.commit: 5 → 8 seats charged as quoted, the base item's deletion refused", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const priceOf = async (name: string, amount: string) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: amount }
          })
        ).price_id
      }
      const team = await priceOf("Team plan", "49.00")
      const seat = await priceOf("Seat", "12.00")
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-2",
        line_items: [{ price_id: team }, { price_id: seat, quantity: "5" }]
      })
      const sub = (await billing.checkout.pay(m, session.session_id, card)).subscription!.id
      const [base, seats] = await billing.items.list(m, sub)
      expect([base!.price_id, seats!.quantity]).toEqual([team, "5"])
      await billing.advanceClock(m, new Date("2026-01-16T00:00:00Z"))
      const body = { items: [{ id: seats!.id, quantity: 8 }] }
      const quote = await billing.items.preview(m, sub, body)
      expect([quote.outcome, quote.credit, quote.charge, quote.total]).toEqual(["upgrade", "56.26", "74.84", "18.58"])
      const done = await billing.items.commit(m, sub, { ...body, quote_id: quote.quote_id })
      expect(done.quote).toEqual(quote)
      expect(done.items.map((i) => i.quantity)).toEqual(["1", "8"])
      let refused: unknown
      try {
        await billing.items.preview(m, sub, { items: [{ id: base!.id, deleted: true }] })
      } catch (e) {
        refused = e
      }
      expect(refused).toBeInstanceOf(InvalidParameterError)
      expect((refused as RecurError).param).toBe("items[0].deleted")
    } finally {
      await billing.close()
    }
  }, 60_000)
})
