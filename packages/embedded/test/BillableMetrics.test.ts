import { describe, expect, it } from "@effect/vitest"
import { createBilling, type RecurError } from "../src/index.js"

const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    const r = e as RecurError
    return [r.status, r.code, r.param]
  }
  throw new Error("not refused")
}

describe("billable metrics through the facade (issue 35)", () => {
  it("create, get by id or code, list, update, archive — refused as REST refuses; a usage price rates a metric's group", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const calls = await billing.billableMetrics.create(m, {
        code: "api_calls",
        name: "API calls",
        aggregation: "count",
        group_by: ["region"]
      })
      expect(calls).toMatchObject({
        code: "api_calls",
        aggregation: "count",
        property: null,
        group_by: ["region"],
        late_window_days: 35,
        status: "active",
        created_at: "2026-01-01T00:00:00Z"
      })
      const users = await billing.billableMetrics.create(m, {
        code: "active_users",
        name: "Active users",
        aggregation: "unique_count",
        property: "user_id"
      })
      expect((await billing.billableMetrics.get(m, "api_calls")).billable_metric_id).toBe(calls.billable_metric_id)
      expect((await billing.billableMetrics.get(m, users.billable_metric_id)).code).toBe("active_users")
      const updated = await billing.billableMetrics.update(m, "active_users", {
        description: "distinct users",
        filters: [{ property: "plan", values: ["pro"] }]
      })
      expect([updated.description, updated.filters]).toEqual([
        "distinct users",
        [{ property: "plan", values: ["pro"] }]
      ])

      expect(
        await refusal(billing.billableMetrics.create(m, { code: "api_calls", name: "X", aggregation: "count" }))
      ).toEqual([409, "duplicate_resource", "code"])
      expect(await refusal(billing.billableMetrics.create(m, { code: "x", name: "X", aggregation: "sum" }))).toEqual([
        400,
        "InvalidParameter",
        "property"
      ])
      expect(await refusal(billing.billableMetrics.update(m, "api_calls", { aggregation: "sum" } as never))).toEqual([
        400,
        "InvalidParameter",
        "aggregation"
      ])
      expect(await refusal(billing.billableMetrics.get(m, "nope"))).toEqual([404, "resource_not_found", undefined])
      expect(await refusal(billing.billableMetrics.list(m, { status: ["gone" as never] }))).toEqual([
        400,
        "InvalidParameter",
        "status"
      ])

      const { product_id } = await billing.catalog.createProduct(m, { product_name: "API" })
      const priced = await billing.catalog.createPrice(m, {
        name: "Calls EU",
        product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "based_on_usage",
        model_type: "per_unit",
        usage_unit_price: "0.01",
        billing_threshold: "1",
        usage_amount: "1",
        usage_unit: "calls",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        price_plan: { billing_cycle_unit: "month", base_price_val: "0" },
        billable_metric_id: "api_calls",
        metric_group: { region: "eu" }
      })
      const version = await billing.catalog.getPriceVersion(m, priced.price_version_id)
      expect([version.billable_metric_id, version.metric_group]).toEqual([calls.billable_metric_id, { region: "eu" }])

      const archived = await billing.billableMetrics.archive(m, "api_calls")
      expect(archived.status).toBe("archived")
      const page = await billing.billableMetrics.list(m, { status: ["active"] })
      expect(page.list.map((x) => x.code)).toEqual(["active_users"])
      expect((await billing.billableMetrics.list(m, { codes: ["api_calls"] })).list.map((x) => x.status)).toEqual([
        "archived"
      ])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
