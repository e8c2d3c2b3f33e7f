import { describe, expect, it } from "@effect/vitest"
import { createBilling, InvalidParameterError, type RecurError } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

// Schedules whose phases hold several items, through the facade: the same decoding and service
// as the REST endpoint (issue 33, item 4).
describe("schedules of several items through the facade", () => {
  it("a ramp deal on a subscription of two items bills each phase's items; a mismatched interval names the item", async () => {
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
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-1",
        line_items: [{ price_id: team }, { price_id: seat, quantity: "10" }]
      })
      const sub = (await billing.checkout.pay(m, session.session_id, card)).subscription!.id
      let refused: unknown
      try {
        await billing.schedules.create(m, sub, {
          start: "next_period",
          phases: [{ items: [{ price_id: team }, { price_id: yearly }], cycles: 1 }]
        })
      } catch (e) {
        refused = e
      }
      expect(refused).toBeInstanceOf(InvalidParameterError)
      expect((refused as RecurError).param).toBe("phases[0].items[1].price_id")
      const sc = await billing.schedules.create(m, sub, {
        phases: [
          { items: [{ price_id: team }, { price_id: seat, quantity: "10" }], cycles: 1 },
          { items: [{ price_id: team }, { price_id: seat, quantity: "20" }], cycles: 1 }
        ]
      })
      expect(sc.phases.map((p) => p.items.map((i) => i.quantity))).toEqual([
        ["1", "10"],
        ["1", "20"]
      ])
      const next = await billing.subscriptions.upcomingInvoice(m, sub)
      expect([next?.amount, next?.lines.map((l) => [l.quantity, l.amount])]).toEqual([
        "289.00",
        [
          ["1", "49.00"],
          ["20", "240.00"]
        ]
      ])
      await billing.advanceClock(m, new Date("2024-02-01T00:00:00Z"))
      const renewed = await billing.subscriptions.get(m, sub)
      expect(renewed.items?.map((i) => [i.price_id, i.quantity])).toEqual([
        [team, "1"],
        [seat, "20"]
      ])
      const amounts = (await billing.invoices.list(m, { subscription_id: sub })).list
        .map((i) => [i.cycle_index, i.amount])
        .sort()
      expect(amounts).toEqual([
        [0, "169.00"],
        [1, "289.00"]
      ])
      expect((await billing.schedules.get(m, sub)).current_phase).toBe(1)
    } finally {
      await billing.close()
    }
  }, 60_000)
})
