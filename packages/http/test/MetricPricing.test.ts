import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

// Issue 35's "done when", end to end over REST: API calls (count, per region), storage (GB-hours,
// weighted_sum) and active users (unique_count) priced on one subscription beside its base plan;
// events over January; current_usage; the renewal's invoice — on PGlite, and on PostgreSQL when
// RECUR_TEST_DATABASE_URL is set. The numbers are docs/usage.md's "Pricing a metric".

const usagePrice = (fields: Record<string, unknown>) => ({
  price_type: "based_on_usage",
  payment_timing: "postpaid",
  billing_dimension: "usage",
  usage_amount: "1",
  price_plan: { billing_cycle_unit: "month", base_price_val: "0" },
  ...fields
})
const perUnit = (unitPrice: string, unit: string, metric: string, group?: Record<string, string>) =>
  usagePrice({
    model_type: "per_unit",
    usage_unit_price: unitPrice,
    billing_threshold: "1",
    usage_unit: unit,
    billable_metric_id: metric,
    ...(group ? { metric_group: group } : {})
  })

const JAN = "2026-01-01T00:00:00Z"
const FEB = "2026-02-01T00:00:00Z"
const MAR = "2026-03-01T00:00:00Z"

for (const [name, storage] of backends()) {
  describe(`pricing billable metrics over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())
    const pay = (sessionId: string) =>
      app.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const lines = (inv: any) =>
      inv.lines.map((l: any) => [l.kind, l.description, l.quantity, l.amount, l.period_start, l.period_end])

    it("API calls per region, storage GB-hours and active users on one subscription: current usage, then the renewal bills exactly that", async () => {
      const { ok, advance, invoicesOf, upcoming } = changeHelpers(app)
      const { api_key: key } = await app.merchant({ frozen: JAN })
      for (const metric of [
        { code: "api_calls", name: "API calls", aggregation: "count", group_by: ["region"] },
        { code: "storage_gb", name: "Storage", aggregation: "weighted_sum", property: "gb" },
        { code: "active_users", name: "Active users", aggregation: "unique_count", property: "user_id" }
      ])
        ok(await app.call("POST", "/api/v1/billable_metrics", key, metric))
      const base = (
        await app.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" } },
          { product: "Platform", price: "Platform" }
        )
      ).priceId
      const eu = (
        await app.priceOf(key, perUnit("0.50", "calls", "api_calls", { region: "eu" }), {
          product: "API",
          price: "API calls EU"
        })
      ).priceId
      const us = (
        await app.priceOf(key, perUnit("0.75", "calls", "api_calls", { region: "us" }), {
          product: "API US",
          price: "API calls US"
        })
      ).priceId
      const gb = (
        await app.priceOf(key, perUnit("0.0015", "GB-hours", "storage_gb"), {
          product: "Storage",
          price: "Storage"
        })
      ).priceId
      // the first 2 active users free, 5.00 each after
      const users = (
        await app.priceOf(
          key,
          usagePrice({
            model_type: "tiers_price",
            usage_unit: "users",
            price_tier_type: "graduated",
            usage_tiers: [
              { usage_min: "0", usage_max: "2", unit_price: "0", flat_amount: "" },
              { usage_min: "3", usage_max: "", unit_price: "5.00", flat_amount: "" }
            ],
            billable_metric_id: "active_users"
          }),
          { product: "Users", price: "Active users" }
        )
      ).priceId

      // a price billed by a metric is an item beside a base price, never the first item
      expect(
        refusal(await app.call("POST", "/api/v1/session", key, { payer_id: "m-1", line_items: [{ price_id: gb }] }))
      ).toEqual([400, "InvalidParameter", "line_items[0].price_id"])
      // several metric items on one subscription (the seed's one-metered-item rule is for usage_count prices)
      const session = ok(
        await app.call("POST", "/api/v1/session", key, {
          payer_id: "m-1",
          line_items: [base, eu, us, gb, users].map((price_id) => ({ price_id }))
        })
      )
      expect(ok(await app.call("GET", `/api/v1/session/${session.session_id}`, key)).session.amount).toBe("10.00")
      ok(await pay(session.session_id))
      const { subscription_id: subId, customer_id: customer } = ok(
        await app.call("GET", `/api/v1/session/${session.session_id}`, key)
      ).session
      const [initial] = await invoicesOf(key, subId)
      expect(lines(initial)).toEqual([["subscription", "Platform × 1", "1", "10.00", JAN, FEB]])

      // January's events: sent without subscription_id (the customer's one subscription pricing
      // the metric takes them) or with it
      const send = async (events: ReadonlyArray<Record<string, unknown>>) =>
        ok(
          await app.call("POST", "/api/v1/meter_events/batch", key, {
            events: events.map((e) => ({ customer_id: customer, ...e }))
          })
        )
      ok(await advance(key, "2026-01-11T00:00:00Z"))
      await send([
        { transaction_id: "c1", code: "api_calls", timestamp: "2026-01-02T10:00:00Z", properties: { region: "eu" } },
        { transaction_id: "c2", code: "api_calls", timestamp: "2026-01-03T10:00:00Z", properties: { region: "eu" } },
        { transaction_id: "c3", code: "api_calls", timestamp: "2026-01-05T10:00:00Z", properties: { region: "us" } },
        { transaction_id: "c4", code: "api_calls", timestamp: "2026-01-06T10:00:00Z", properties: { region: "us" } },
        {
          transaction_id: "c5",
          code: "api_calls",
          timestamp: "2026-01-07T10:00:00Z",
          subscription_id: subId,
          properties: { region: "eu" }
        },
        // no price for Asia: counted in its own group, billed by none
        { transaction_id: "c6", code: "api_calls", timestamp: "2026-01-07T11:00:00Z", properties: { region: "ap" } },
        { transaction_id: "g1", code: "storage_gb", timestamp: JAN, properties: { gb: 2.5 } },
        { transaction_id: "g2", code: "storage_gb", timestamp: "2026-01-11T00:00:00Z", properties: { gb: "20.25" } },
        {
          transaction_id: "u1",
          code: "active_users",
          timestamp: "2026-01-02T00:00:00Z",
          properties: { user_id: "ana" }
        },
        {
          transaction_id: "u2",
          code: "active_users",
          timestamp: "2026-01-03T00:00:00Z",
          properties: { user_id: "bo" }
        },
        {
          transaction_id: "u3",
          code: "active_users",
          timestamp: "2026-01-04T00:00:00Z",
          properties: { user_id: "ana" }
        },
        { transaction_id: "u4", code: "active_users", timestamp: "2026-01-09T00:00:00Z", properties: { user_id: "cy" } }
      ])
      // events stored with the subscription they were attached to
      const listed = ok(await app.call("GET", `/api/v1/meter_events?customer_id=${customer}&limit=100`, key)).list
      expect(new Set(listed.map((e: any) => e.subscription_id))).toEqual(new Set([subId]))

      // current usage: eu 3 × 0.50; us 2 × 0.75; storage 2.5 GB × 240 h + 20.25 GB × 504 h (held to
      // the period's end) = 10,806 GB-hours × 0.0015 = 16.209 → 16.21; 3 users, 2 free: 5.00
      const expected = [
        ["api_calls", { region: "eu" }, "3", 3, "1.50"],
        ["api_calls", { region: "us" }, "2", 2, "1.50"],
        ["storage_gb", null, "10806", 2, "16.21"],
        ["active_users", null, "3", 4, "5.00"]
      ]
      const current = ok(await app.call("GET", `/api/v1/subscription/${subId}/current_usage`, key)).current_usage
      expect(current.items.map((i: any) => [i.metric_code, i.metric_group, i.value, i.events, i.amount])).toEqual(
        expected
      )
      expect([current.amount, current.currency, current.period_start, current.period_end]).toEqual([
        "24.21",
        "USD",
        JAN,
        FEB
      ])
      expect(current.items.map((i: any) => i.price_id)).toEqual([eu, us, gb, users])

      // the upcoming invoice bills the same, beside February's plan
      const next = await upcoming(key, subId)
      const metricLines = [
        ["usage", "API calls EU: 3 calls (api_calls, region eu)", "1", "1.50", JAN, FEB],
        ["usage", "API calls US: 2 calls (api_calls, region us)", "1", "1.50", JAN, FEB],
        ["usage", "Storage: 10806 GB-hours (storage_gb)", "1", "16.21", JAN, FEB],
        ["usage", "Active users: 3 users (active_users)", "1", "5.00", JAN, FEB]
      ]
      expect(lines(next)).toEqual([["subscription", "Platform × 1", "1", "10.00", FEB, MAR], ...metricLines])
      expect([next.subtotal, next.amount]).toEqual(["34.21", "34.21"])

      // the renewal bills exactly what current_usage showed
      ok(await advance(key, "2026-02-01T00:00:00Z"))
      const [, renewal] = await invoicesOf(key, subId)
      expect([renewal.invoice_type, renewal.cycle_index, renewal.amount, renewal.biz_status]).toEqual([
        "renewal",
        1,
        "34.21",
        "success"
      ])
      expect(lines(renewal)).toEqual(lines(next))

      // February starts from the storage level held (20.25 GB × 672 h = 13,608 GB-hours), no call, no user
      const feb = ok(await app.call("GET", `/api/v1/subscription/${subId}/current_usage`, key)).current_usage
      expect(feb.items.map((i: any) => [i.value, i.amount])).toEqual([
        ["0", "0.00"],
        ["0", "0.00"],
        ["13608", "20.41"],
        ["0", "0.00"]
      ])

      // a second subscription pricing api_calls: an event without subscription_id is ambiguous
      const other = ok(
        await app.call("POST", "/api/v1/session", key, {
          payer_id: "m-1",
          line_items: [{ price_id: base }, { price_id: eu }]
        })
      )
      ok(await pay(other.session_id))
      expect(
        refusal(
          await app.call("POST", "/api/v1/meter_events", key, {
            transaction_id: "amb",
            customer_id: customer,
            code: "api_calls",
            properties: { region: "eu" }
          })
        )
      ).toEqual([400, "InvalidParameter", "subscription_id"])
      // storage is priced by one of them only: still attached
      const attached = ok(
        await app.call("POST", "/api/v1/meter_events", key, {
          transaction_id: "g3",
          customer_id: customer,
          code: "storage_gb",
          properties: { gb: 1 }
        })
      )
      expect(attached.event.subscription_id).toBe(subId)

      // canceled now: the final invoice bills February's usage so far (storage to now)
      ok(await advance(key, "2026-02-02T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${subId}/cancel`, key, { cancel_type: "immediate" }))
      const final = (await invoicesOf(key, subId)).filter((i: any) => i.invoice_type === "upgrade")
      // from February 1: the 1 GB reading sent then, for 24 h = 24 GB-hours × 0.0015 = 0.036 → 0.04;
      // the items with nothing used have no line
      expect(final.map((i: any) => [i.amount, i.lines.map((l: any) => [l.description, l.amount])])).toEqual([
        ["0.04", [["Storage: 24 GB-hours (storage_gb)", "0.04"]]]
      ])
    }, 120_000)
  })
}
