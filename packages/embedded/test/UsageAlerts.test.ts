import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

// Issue 35 (5) through the facade, in memory: an alert on a metric streamed in process (the
// ingestion only schedules the coalesced check), progressive billing, and the renewal's deduction.
describe("usage alerts and progressive billing through the facade (issue 35)", () => {
  it("a stream of calls crosses an amount alert once and invoices early twice; the renewal deducts what was invoiced early", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      await billing.billableMetrics.create(m, { code: "tokens", name: "Tokens", aggregation: "sum", property: "n" })
      const priceOf = async (name: string, fields: Record<string, unknown>) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "0" },
            ...fields
          } as never)
        ).price_id
      }
      const plan = await priceOf("Plan", {})
      // 0.001 per token
      const tokens = await priceOf("Tokens", {
        price_type: "based_on_usage",
        model_type: "per_unit",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        billing_threshold: "1",
        usage_unit: "tokens",
        usage_unit_price: "0.001",
        billable_metric_id: "tokens"
      })
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-1",
        line_items: [{ price_id: plan }, { price_id: tokens }]
      })
      const sub = (await billing.checkout.pay(m, session.session_id, card)).subscription!.id
      const { customer_id } = await billing.subscriptions.get(m, sub)

      const alert = await billing.usageAlerts.create(m, {
        subscription_id: sub,
        billable_metric_id: "tokens",
        thresholds: [{ type: "amount", value: "8.00" }]
      })
      expect(alert.thresholds).toEqual([{ type: "amount", value: "8.00", recurring: false }])
      expect((await billing.usageAlerts.list(m, { subscription_id: sub })).list.map((a) => a.usage_alert_id)).toEqual([
        alert.usage_alert_id
      ])
      const set = await billing.usageAlerts.setProgressiveBilling(m, sub, { progressive_billing_threshold: "5.00" })
      expect([set.progressive_billing_threshold, set.alerts]).toEqual(["5.00", 1])

      // 2,500 events of 4 tokens (10.00 in all), streamed in transactions of 1,000
      let n = 0
      const calls = (count: number) =>
        Array.from({ length: count }, () => ({
          transaction_id: `t${++n}`,
          customer_id,
          code: "tokens",
          properties: { n: 4 }
        }))
      await billing.meterEvents.stream(m, calls(1500))
      await billing.advanceClock(m, new Date("2026-01-01T00:00:10Z"))
      await billing.meterEvents.stream(m, calls(1000))
      await billing.advanceClock(m, new Date("2026-01-01T00:00:20Z"))
      const triggered = (await billing.webhooks.listEvents(m, { event_types: ["v2.usage_alert.triggered"] })).list
      expect(triggered.length).toBe(1)
      expect(JSON.parse(triggered[0]!.content).data).toMatchObject({ level: "8.00", amount: "10.00", value: "10000" })
      const early = async () =>
        (await billing.invoices.list(m, { limit: 100 })).list
          .filter((i) => i.invoice_type === "progressive")
          .map((i) => [i.amount, i.biz_status])
      // 6.00 invoiced at 1,500 events; at 2,500 the 4.00 not invoiced is under the threshold
      expect(await early()).toEqual([["6.00", "success"]])
      await billing.meterEvents.stream(m, calls(500))
      await billing.advanceClock(m, new Date("2026-01-01T00:00:30Z"))
      expect(await early()).toEqual([
        ["6.00", "success"],
        ["6.00", "success"]
      ])
      const state = await billing.usageAlerts.progressiveBilling(m, sub)
      expect(state.billed.map((b) => b.amount)).toEqual(["12.00"])
      expect((await billing.webhooks.listEvents(m, { event_types: ["v2.usage_alert.triggered"] })).list.length).toBe(1)

      await billing.advanceClock(m, new Date("2026-02-01T00:00:00Z"))
      const renewal = (await billing.invoices.list(m, { subscription_id: sub })).list.find(
        (i) => i.invoice_type === "renewal"
      )!
      expect(renewal.lines.map((l) => [l.description, l.amount])).toEqual([
        ["Plan × 1", "0.00"],
        ["Tokens: 12000 tokens (tokens)", "12.00"],
        ["Tokens: already invoiced in this period (progressive billing)", "-12.00"]
      ])
      expect(renewal.amount).toBe("0.00")
      expect((await billing.webhooks.listEvents(m, { event_types: ["v2.usage_alert.resolved"] })).list.length).toBe(1)
      await billing.usageAlerts.delete(m, alert.usage_alert_id)
      expect((await billing.usageAlerts.progressiveBilling(m, sub)).alerts).toBe(0)
    } finally {
      await billing.close()
    }
  }, 60_000)
})
