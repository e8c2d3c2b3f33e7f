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

  it("the Team example with a metered API-calls item: usage billed in arrears on the renewal, a second metered item refused", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
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
      // 0.50 per 100 calls, a started block counting whole
      const callsOf = async (name: string) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "based_on_usage",
            model_type: "per_unit",
            payment_timing: "postpaid",
            billing_dimension: "usage",
            usage_amount: "1",
            usage_unit: "calls",
            usage_unit_price: "0.50",
            billing_threshold: "100",
            price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
          })
        ).price_id
      }
      const team = await priceOf("Team plan", "49.00")
      const seat = await priceOf("Seat", "12.00")
      const sso = await priceOf("SSO add-on", "99.00")
      const calls = await callsOf("API calls")
      const lines = [{ price_id: team }, { price_id: seat, quantity: "5" }, { price_id: sso }, { price_id: calls }]
      let refused: unknown
      try {
        await billing.checkout.createSession(m, {
          payer_id: "p-1",
          line_items: [...lines, { price_id: await callsOf("More calls") }]
        })
      } catch (e) {
        refused = e
      }
      expect(refused).toBeInstanceOf(InvalidParameterError)
      expect((refused as RecurError).param).toBe("line_items[4].price_id")
      const session = await billing.checkout.createSession(m, { payer_id: "p-1", line_items: lines })
      expect((await billing.checkout.getSession(m, session.session_id)).amount).toBe("208.00")
      const sub = (await billing.checkout.pay(m, session.session_id, card)).subscription!.id
      await billing.subscriptions.recordUsage(m, sub, { usage_count: 1234, event_id: "jan" })
      // 13 blocks of 100 calls × 0.50
      expect((await billing.subscriptions.usage(m, sub)).billing_amount).toBe("6.50")
      expect((await billing.subscriptions.upcomingInvoice(m, sub))?.amount).toBe("214.50")
      await billing.advanceClock(m, new Date("2024-02-02T00:00:00Z"))
      const [renewal] = (await billing.invoices.list(m, { subscription_id: sub })).list.filter(
        (i) => i.invoice_type === "renewal"
      )
      expect(renewal!.amount).toBe("214.50")
      expect(renewal!.lines.map((l) => [l.kind, l.amount, l.period_start, l.period_end])).toEqual([
        ["subscription", "49.00", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"],
        ["subscription", "60.00", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"],
        ["subscription", "99.00", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"],
        ["usage", "6.50", "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"]
      ])
      // February: 250 calls, then the calls item deleted: the quote shows the usage kept for the
      // next renewal, and a cancel now bills it on a final invoice
      await billing.subscriptions.recordUsage(m, sub, { usage_count: 250, event_id: "feb" })
      const metered = (await billing.items.list(m, sub)).find((i) => i.price_id === calls)!
      const body = { items: [{ id: metered.id, deleted: true }] }
      const quote = await billing.items.preview(m, sub, body)
      expect(quote.kept_usage).toEqual([{ description: "API calls usage (250 calls)", amount: "1.50" }])
      expect((await billing.items.commit(m, sub, { ...body, quote_id: quote.quote_id })).quote).toEqual(quote)
      await billing.advanceClock(m, new Date("2024-02-10T00:00:00Z"))
      await billing.subscriptions.cancel(m, sub)
      const final = (await billing.invoices.list(m, { subscription_id: sub })).list.filter(
        (i) => i.invoice_type === "upgrade"
      )
      expect(final.map((i) => [i.cycle_index, i.amount, i.lines.map((l) => [l.kind, l.description])])).toEqual([
        [1, "1.50", [["usage", "API calls usage (250 calls)"]]]
      ])
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
      expect(done.items.map((i) => [i.pending_change, i.scheduled_price_version_id])).toEqual([
        [null, null],
        [null, null]
      ])
      // what waits for the next cycle shows on its item: the base item's quantity, then its price at the period's end
      await billing.subscriptions.change(m, sub, { quantity: "3" })
      const plus = await priceOf("Team plus", "79.00")
      await billing.subscriptions.change(m, sub, { price_id: plus, effective_type: "end_of_period" })
      const waiting = await billing.items.list(m, sub)
      const plusVersion = (await billing.subscriptions.get(m, sub)).items![0]!.scheduled_price_version_id
      expect(plusVersion).toMatch(/^prv_/)
      expect(waiting.map((i) => [i.pending_change?.quantity ?? null, i.scheduled_price_version_id])).toEqual([
        ["3", plusVersion],
        [null, null]
      ])
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
