import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Store } from "@recur/core"
import { backends, serve } from "./client.js"

// Meter events over REST (issue 35): one event, a batch, re-sent transaction ids reported as
// duplicates, all-or-nothing batches naming the refused event, the list — and the stored events
// aggregated by the store — on PGlite, and on PostgreSQL when RECUR_TEST_DATABASE_URL is set.

const NOW = Date.parse("2026-01-01T00:00:00Z")

for (const [name, storage] of backends()) {
  describe(`meter events (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const customerOf = async (key: string) => {
      const c = await api.call("POST", "/api/v1/front/customer/create", key, { payer_id: `p-${Math.random()}` })
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      return c.body.data.customer_id as string
    }

    /** The merchant's metrics the events name (an event's code must be an active metric's). */
    const metrics = async (key: string) => {
      for (const m of [
        { code: "api_calls", name: "API calls", aggregation: "count" },
        { code: "storage", name: "Storage", aggregation: "weighted_sum", property: "gb" }
      ]) {
        const r = await api.call("POST", "/api/v1/billable_metrics", key, m)
        expect(r.status, JSON.stringify(r.body)).toBe(200)
      }
    }

    it("one event, a re-send, a batch with duplicates, the list; the store aggregates them", async () => {
      const { api_key: key, merchant } = await api.merchant()
      await metrics(key)
      const merchant_id = merchant.merchant_id
      const customer = await customerOf(key)
      const one = await api.call("POST", "/api/v1/meter_events", key, {
        transaction_id: "t1",
        customer_id: customer,
        code: "api_calls",
        timestamp: "2025-12-31T23:00:00Z",
        properties: { region: "eu", tokens: 10.5, cached: false }
      })
      expect(one.status, JSON.stringify(one.body)).toBe(200)
      expect(one.body.data).toMatchObject({
        duplicate: false,
        event: {
          transaction_id: "t1",
          customer_id: customer,
          subscription_id: null,
          code: "api_calls",
          timestamp: "2025-12-31T23:00:00Z",
          properties: { region: "eu", tokens: "10.5", cached: false },
          voided_at: null
        }
      })
      const again = await api.call("POST", "/api/v1/meter_events", key, {
        transaction_id: "t1",
        customer_id: customer,
        code: "api_calls",
        properties: { tokens: 99 }
      })
      expect(again.body.data).toMatchObject({ duplicate: true, event: { id: one.body.data.event.id } })
      const batch = await api.call("POST", "/api/v1/meter_events/batch", key, {
        events: [
          { transaction_id: "t1", customer_id: customer, code: "api_calls" },
          {
            transaction_id: "t2",
            customer_id: customer,
            code: "api_calls",
            timestamp: NOW - 1000,
            properties: { region: "us", tokens: "2" }
          },
          { transaction_id: "t3", customer_id: customer, code: "api_calls", properties: { region: "eu", tokens: 7 } }
        ]
      })
      expect(batch.status, JSON.stringify(batch.body)).toBe(200)
      expect(batch.body.data).toEqual({ accepted: 2, duplicates: ["t1"] })
      const list = await api.call("GET", `/api/v1/meter_events?customer_id=${customer}&code=api_calls&limit=2`, key)
      expect(list.body.data.has_more).toBe(true)
      expect(list.body.data.list.map((e: any) => e.transaction_id)).toEqual(["t3", "t2"])
      const sum = await api.runtime.runPromise(
        Store.Storage.use((s) =>
          s.meter.aggregate({
            merchant_id,
            customer_id: customer,
            code: "api_calls",
            from: NOW - 24 * 3_600_000,
            to: NOW + 1,
            spec: { aggregation: "sum", property: "tokens", filters: [], group_by: ["region"] }
          })
        )
      )
      expect([...sum].sort((a, b) => String(a.group[0]).localeCompare(String(b.group[0])))).toEqual([
        { group: ["eu"], value: "17.5", events: 2 },
        { group: ["us"], value: "2", events: 1 }
      ])
    })

    it("refuses with the documented codes, naming the event, and stores nothing of a refused batch", async () => {
      const { api_key: key } = await api.merchant()
      await metrics(key)
      const customer = await customerOf(key)
      const other = await customerOf(key)
      const ok = { transaction_id: "ok", customer_id: customer, code: "api_calls" }
      const cases: ReadonlyArray<readonly [Record<string, unknown>, number, string, string]> = [
        [{ ...ok, code: "API-calls" }, 400, "InvalidParameter", "events[1].code"],
        // the code must name an active metric; a numeric aggregation's property, when given, a number
        [{ ...ok, code: "unknown_metric" }, 400, "InvalidParameter", "events[1].code"],
        [{ ...ok, code: "storage", properties: { gb: "lots" } }, 400, "InvalidParameter", "events[1].properties.gb"],
        [{ ...ok, code: "storage", properties: { gb: true } }, 400, "InvalidParameter", "events[1].properties.gb"],
        [{ ...ok, transaction_id: "" }, 400, "InvalidParameter", "events[1].transaction_id"],
        [{ ...ok, transaction_id: "x".repeat(256) }, 400, "InvalidParameter", "events[1].transaction_id"],
        [{ ...ok, timestamp: NOW + 5 * 60_000 + 1 }, 400, "InvalidParameter", "events[1].timestamp"],
        [{ ...ok, timestamp: "yesterday" }, 400, "InvalidParameter", "events[1].timestamp"],
        [{ ...ok, properties: { gb: 0.1234567 } }, 400, "InvalidParameter", "events[1].properties.gb"],
        [{ ...ok, properties: { gb: 1e13 } }, 400, "InvalidParameter", "events[1].properties.gb"],
        [{ ...ok, properties: { s: "x".repeat(256) } }, 400, "InvalidParameter", "events[1].properties.s"],
        [
          { ...ok, properties: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) },
          400,
          "InvalidParameter",
          "events[1].properties"
        ],
        [{ ...ok, customer_id: "cus_nope" }, 404, "resource_not_found", "events[1].customer_id"]
      ]
      for (const [event, status, code, param] of cases) {
        const r = await api.call("POST", "/api/v1/meter_events/batch", key, {
          events: [{ transaction_id: "first", customer_id: other, code: "api_calls" }, event]
        })
        expect({ status: r.status, code: r.body.code, param: r.body.data.param }, JSON.stringify(r.body)).toEqual({
          status,
          code,
          param
        })
      }
      const tooMany = await api.call("POST", "/api/v1/meter_events/batch", key, {
        events: Array.from({ length: 1001 }, (_, i) => ({ ...ok, transaction_id: `t${i}` }))
      })
      expect([tooMany.status, tooMany.body.data.param]).toEqual([400, "events"])
      const single = await api.call("POST", "/api/v1/meter_events", key, { ...ok, properties: { n: Number.MAX_VALUE } })
      expect([single.status, single.body.data.param]).toEqual([400, "properties.n"])
      const list = await api.call("GET", "/api/v1/meter_events", key)
      expect(list.body.data.list).toEqual([])
    })
  })
}
