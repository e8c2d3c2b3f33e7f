import { describe, expect, it } from "@effect/vitest"
import { createBilling, InvalidParameterError, type RecurError } from "../src/index.js"

// Meter events through the facade (issue 35): send, sendBatch and stream (an async iterable fed
// through batches of up to 1,000, a refused event named by its position in the whole stream).

const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e as RecurError
  }
  throw new Error("not refused")
}

describe("meter events through the facade (issue 35)", () => {
  it("send, sendBatch, stream of 2,500 from an async iterable, duplicates reported, list", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      // an event's code names an active metric of the merchant
      await billing.billableMetrics.create(m, { code: "api_calls", name: "API calls", aggregation: "count" })
      await billing.billableMetrics.create(m, {
        code: "storage",
        name: "Storage",
        aggregation: "weighted_sum",
        property: "gb"
      })
      const { customer_id } = await billing.customers.create(m, { payer_id: "p-1" })
      const sent = await billing.meterEvents.send(m, {
        transaction_id: "t-1",
        customer_id,
        code: "storage",
        properties: { gb: 1.25 }
      })
      expect([sent.duplicate, sent.event.properties, sent.event.timestamp]).toEqual([
        false,
        { gb: "1.25" },
        "2026-01-01T00:00:00Z"
      ])
      expect(
        (await billing.meterEvents.send(m, { transaction_id: "t-1", customer_id, code: "storage" })).duplicate
      ).toBe(true)
      expect(
        await billing.meterEvents.sendBatch(m, [
          { transaction_id: "t-1", customer_id, code: "storage" },
          { transaction_id: "t-2", customer_id, code: "storage", timestamp: "2025-12-31T00:00:00Z" }
        ])
      ).toEqual({ accepted: 1, duplicates: ["t-1"] })
      async function* events(n: number, prefix: string) {
        for (let i = 0; i < n; i++)
          yield { transaction_id: `${prefix}${i}`, customer_id, code: "api_calls", properties: { region: "eu", i } }
      }
      expect(await billing.meterEvents.stream(m, events(2500, "s"))).toEqual({ accepted: 2500, duplicates: [] })
      const replay = await billing.meterEvents.stream(
        m,
        [0, 1, 2].map((i) => ({ transaction_id: `s${i}`, customer_id, code: "api_calls" }))
      )
      expect(replay).toEqual({ accepted: 0, duplicates: ["s0", "s1", "s2"] })
      async function* bad() {
        yield* events(1500, "b")
        yield { transaction_id: "b-bad", customer_id, code: "Bad Code" }
      }
      const refused = await refusal(billing.meterEvents.stream(m, bad()))
      expect([refused instanceof InvalidParameterError, refused.param]).toEqual([true, "events[1500].code"])
      const page = await billing.meterEvents.list(m, { customer_id, code: "api_calls", limit: 2 })
      expect(page.list.map((e) => e.transaction_id)).toEqual(["b999", "b998"])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
