import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

// Issue 35 through the facade, in memory: metric-based items beside the base plan and the seed's
// usage_count item; current usage and the renewal agree, decimal values rated once.
describe("pricing billable metrics through the facade (issue 35)", () => {
  it("a weighted sum in decimals and a count per region beside a usage_count item: currentUsage is what the renewal bills", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      await billing.billableMetrics.create(m, {
        code: "api_calls",
        name: "API calls",
        aggregation: "count",
        group_by: ["region"]
      })
      await billing.billableMetrics.create(m, {
        code: "storage_gb",
        name: "Storage",
        aggregation: "weighted_sum",
        property: "gb"
      })
      const priceOf = async (name: string, fields: Record<string, unknown>) => {
        const product = await billing.catalog.createProduct(m, { product_name: name })
        return (
          await billing.catalog.createPrice(m, {
            name,
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "5.00" },
            ...fields
          } as never)
        ).price_id
      }
      const usage = (fields: Record<string, unknown>) => ({
        price_type: "based_on_usage",
        model_type: "per_unit",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        billing_threshold: "1",
        price_plan: { billing_cycle_unit: "month", base_price_val: "0" },
        ...fields
      })
      const plan = await priceOf("Plan", {})
      // the seed's metered item (usage_count), still one per subscription
      const seats = await priceOf("Seat usage", usage({ usage_unit: "seats", usage_unit_price: "1.00" }))
      const eu = await priceOf(
        "Calls EU",
        usage({
          usage_unit: "calls",
          usage_unit_price: "0.10",
          billable_metric_id: "api_calls",
          metric_group: { region: "eu" }
        })
      )
      // volume tiers over GB-hours: up to 100 at 0.02, above at 0.01 (every unit)
      const gb = await priceOf(
        "Storage",
        usage({
          model_type: "tiers_price",
          usage_unit: "GB-hours",
          price_tier_type: "volume",
          usage_tiers: [
            { usage_min: "0", usage_max: "100", unit_price: "0.02", flat_amount: "" },
            { usage_min: "101", usage_max: "", unit_price: "0.01", flat_amount: "" }
          ],
          billable_metric_id: "storage_gb"
        })
      )
      const session = await billing.checkout.createSession(m, {
        payer_id: "p-1",
        line_items: [{ price_id: plan }, { price_id: seats }, { price_id: eu }, { price_id: gb }]
      })
      const paid = await billing.checkout.pay(m, session.session_id, card)
      const sub = paid.subscription!.id
      const { customer_id } = await billing.subscriptions.get(m, sub)
      await billing.subscriptions.recordUsage(m, sub, { usage_count: 3, event_id: "seats" })
      await billing.advanceClock(m, new Date("2026-01-02T00:00:00Z"))
      await billing.meterEvents.sendBatch(m, [
        { transaction_id: "e1", customer_id, code: "api_calls", properties: { region: "eu" } },
        { transaction_id: "e2", customer_id, code: "api_calls", properties: { region: "us" } },
        // 0.125 GB from Jan 1, 0.1 GB from Jan 2: 0.125 × 24 + 0.1 × 720 = 75 GB-hours
        {
          transaction_id: "g1",
          customer_id,
          code: "storage_gb",
          timestamp: "2026-01-01T00:00:00Z",
          properties: { gb: 0.125 }
        },
        { transaction_id: "g2", customer_id, code: "storage_gb", properties: { gb: "0.1" } }
      ])
      const current = await billing.subscriptions.currentUsage(m, sub)
      expect(current.items.map((i) => [i.metric_code, i.metric_group, i.value, i.amount])).toEqual([
        ["api_calls", { region: "eu" }, "1", "0.10"],
        // 75 × 0.02 (volume: every unit at the first tier)
        ["storage_gb", null, "75", "1.50"]
      ])
      expect(current.amount).toBe("1.60")
      // 5.00 plan + 3 seats + 1.60
      expect((await billing.subscriptions.upcomingInvoice(m, sub))?.amount).toBe("9.60")
      await billing.advanceClock(m, new Date("2026-02-01T00:00:00Z"))
      const [renewal] = (await billing.invoices.list(m, { subscription_id: sub })).list.filter(
        (i) => i.invoice_type === "renewal"
      )
      expect(renewal!.lines.map((l) => [l.kind, l.description, l.amount])).toEqual([
        ["subscription", "Plan × 1", "5.00"],
        ["usage", "Seat usage usage (3 seats)", "3.00"],
        ["usage", "Calls EU: 1 calls (api_calls, region eu)", "0.10"],
        ["usage", "Storage: 75 GB-hours (storage_gb)", "1.50"]
      ])
      expect(renewal!.amount).toBe("9.60")
    } finally {
      await billing.close()
    }
  }, 60_000)
})
