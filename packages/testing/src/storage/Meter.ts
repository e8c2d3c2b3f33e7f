/**
 * The storage contract's meter events: de-duplication by transaction id (across and within
 * batches), rollback, tenant isolation, voiding, the newest-first list, and one worked vector
 * per aggregation (the vectors of docs/usage.md). Registered by `StorageContract.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import { type Aggregation, Ids, Store } from "@recur/core"
import { Effect, Option, Result } from "effect"
import * as Fixtures from "../Fixtures.js"

const Storage = Store.Storage

/** The period of the vectors: 10 hours from 2026-01-01. */
const T0 = Date.UTC(2026, 0, 1)
const H = 3_600_000
const T1 = T0 + 10 * H

/**
 * A stored meter event of `merchant_id`, with a fresh id and transaction id.
 *
 * @since 0.1.0
 */
export const meterEvent = (merchant_id: string, overrides: Partial<Store.MeterEvent> = {}) =>
  Effect.map(
    Ids.make(Ids.prefixes.meterEvent),
    (id): Store.MeterEvent => ({
      id,
      merchant_id,
      transaction_id: `tx_${id}`,
      customer_id: "cus_meter",
      subscription_id: null,
      code: "api_calls",
      timestamp: T0,
      properties: {},
      created_at: T0,
      voided_at: null,
      ...overrides
    })
  )

const spec = (
  aggregation: Aggregation.AggregationType,
  property: string | null,
  more: Partial<Aggregation.AggregationSpec> = {}
): Aggregation.AggregationSpec => ({ aggregation, property, filters: [], group_by: [], ...more })

const sorted = (values: ReadonlyArray<Aggregation.AggregatedValue>) =>
  [...values].sort((a, b) => (JSON.stringify(a.group) < JSON.stringify(b.group) ? -1 : 1))

/**
 * Registers the meter event tests of the storage contract.
 *
 * @since 0.1.0
 */
export const meter = (it: Vitest.MethodsNonLive<Store.Storage>) => {
  it.effect("meter events: a re-sent transaction id is skipped, across and within batches", () =>
    Effect.gen(function* () {
      const { meter } = yield* Storage
      const m = yield* Fixtures.merchantId
      const a = yield* meterEvent(m, { transaction_id: "t1", properties: { n: "1" } })
      const b = yield* meterEvent(m, { transaction_id: "t2" })
      const again = yield* meterEvent(m, { transaction_id: "t1", properties: { n: "2" } })
      expect(yield* meter.insertMany([a, b, { ...b, id: `${b.id}x` }])).toEqual([a, b])
      expect(yield* meter.insertMany([again])).toEqual([])
      expect(Option.getOrThrow(yield* meter.get(m, "t1"))).toEqual(a)
      // another merchant's same transaction id is its own event, invisible to the first
      const other = yield* Fixtures.merchantId
      const theirs = yield* meterEvent(other, { transaction_id: "t1" })
      expect(yield* meter.insertMany([theirs])).toEqual([theirs])
      expect(Option.getOrThrow(yield* meter.get(m, "t1")).id).toBe(a.id)
      expect(Option.isNone(yield* meter.get(m, "t3"))).toBe(true)
    })
  )

  it.effect("meter events: written in the caller's transaction, gone on rollback", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const m = yield* Fixtures.merchantId
      const e = yield* meterEvent(m, { transaction_id: "rolled" })
      const failed = yield* Effect.result(
        storage.withTransaction(Effect.andThen(storage.meter.insertMany([e]), Effect.fail("injected" as const)))
      )
      expect(Result.isFailure(failed)).toBe(true)
      expect(Option.isNone(yield* storage.meter.get(m, "rolled"))).toBe(true)
      expect(yield* storage.meter.insertMany([e])).toEqual([e])
    })
  )

  it.effect("meter events: the list is newest first, by customer and code, paged", () =>
    Effect.gen(function* () {
      const { meter } = yield* Storage
      const m = yield* Fixtures.merchantId
      const events = yield* Effect.forEach([0, 1, 2, 3], (i) =>
        meterEvent(m, { code: i === 3 ? "storage" : "api_calls", timestamp: T0 + i })
      )
      yield* meter.insertMany(events)
      const first = yield* meter.list(m, { customer_id: "cus_meter", code: "api_calls", limit: 2 })
      expect(first.list.map((e) => e.id)).toEqual([events[2]!.id, events[1]!.id])
      expect(first.has_more).toBe(true)
      const next = yield* meter.list(m, { code: "api_calls", limit: 2, starting_after: events[1]!.id })
      expect(next).toEqual({ list: [events[0]], has_more: false })
      expect((yield* meter.list(m, { customer_id: "cus_other", limit: 10 })).list).toEqual([])
      // a cursor of another merchant, or of nothing, reads nothing
      const other = yield* Fixtures.merchantId
      expect(yield* meter.list(other, { limit: 10, starting_after: events[1]!.id })).toEqual({
        list: [],
        has_more: false
      })
      expect(yield* meter.list(m, { limit: 10, starting_after: "mev_nope" })).toEqual({ list: [], has_more: false })
    })
  )

  it.effect("meter events: the API calls vector (count, sum, max, latest, unique_count; filters, groups, void)", () =>
    Effect.gen(function* () {
      const { meter } = yield* Storage
      const m = yield* Fixtures.merchantId
      const at = (h: number) => T0 + h * H
      const events = [
        yield* meterEvent(m, {
          transaction_id: "e1",
          timestamp: at(1),
          properties: { region: "eu", user: "u1", tokens: "10" }
        }),
        yield* meterEvent(m, {
          transaction_id: "e2",
          timestamp: at(2),
          properties: { region: "us", user: "u2", tokens: "2.5" }
        }),
        yield* meterEvent(m, {
          transaction_id: "e3",
          timestamp: at(3),
          properties: { region: "eu", user: "u1", tokens: "7" }
        }),
        yield* meterEvent(m, { transaction_id: "e4", timestamp: at(3), properties: { region: "ap", user: "u3" } }),
        // before the period, in another metric, at the period's end, voided, re-sent: none counts
        yield* meterEvent(m, { transaction_id: "e5", timestamp: T0 - 1, properties: { region: "eu", tokens: "100" } }),
        yield* meterEvent(m, { transaction_id: "e6", code: "storage", timestamp: at(1), properties: { tokens: "1" } }),
        yield* meterEvent(m, { transaction_id: "e7", timestamp: T1, properties: { tokens: "1" } }),
        yield* meterEvent(m, { transaction_id: "e8", timestamp: at(4), properties: { region: "eu", tokens: "1000" } }),
        yield* meterEvent(m, { transaction_id: "e1", timestamp: at(5), properties: { region: "eu", tokens: "500" } })
      ]
      expect((yield* meter.insertMany(events)).length).toBe(8)
      expect(yield* meter.void(m, "e8", at(6))).toBe(true)
      expect(yield* meter.void(m, "e8", at(7))).toBe(false)
      expect(yield* meter.void(m, "nope", at(7))).toBe(false)
      expect(Option.getOrThrow(yield* meter.get(m, "e8")).voided_at).toBe(at(6))
      const agg = (s: Aggregation.AggregationSpec) =>
        Effect.map(
          meter.aggregate({ merchant_id: m, customer_id: "cus_meter", code: "api_calls", from: T0, to: T1, spec: s }),
          sorted
        )
      expect(yield* agg(spec("count", null))).toEqual([{ group: [], value: "4", events: 4 }])
      expect(yield* agg(spec("count", null, { filters: [{ property: "region", values: ["eu", "us"] }] }))).toEqual([
        { group: [], value: "3", events: 3 }
      ])
      expect(yield* agg(spec("count", null, { group_by: ["region"] }))).toEqual([
        { group: ["ap"], value: "1", events: 1 },
        { group: ["eu"], value: "2", events: 2 },
        { group: ["us"], value: "1", events: 1 }
      ])
      expect(yield* agg(spec("sum", "tokens"))).toEqual([{ group: [], value: "19.5", events: 3 }])
      expect(yield* agg(spec("max", "tokens"))).toEqual([{ group: [], value: "10", events: 3 }])
      expect(yield* agg(spec("latest", "tokens"))).toEqual([{ group: [], value: "7", events: 3 }])
      expect(yield* agg(spec("unique_count", "user"))).toEqual([{ group: [], value: "3", events: 4 }])
      expect(yield* agg(spec("unique_count", "user", { group_by: ["region"] }))).toEqual([
        { group: ["ap"], value: "1", events: 1 },
        { group: ["eu"], value: "1", events: 2 },
        { group: ["us"], value: "1", events: 1 }
      ])
      expect(yield* agg(spec("sum", "tokens", { group_by: ["user", "plan"] }))).toEqual([
        { group: ["u1", null], value: "17", events: 2 },
        { group: ["u2", null], value: "2.5", events: 1 }
      ])
      expect(yield* agg(spec("max", "tokens", { filters: [{ property: "region", values: ["jp"] }] }))).toEqual([
        { group: [], value: "0", events: 0 }
      ])
      // another customer, another subscription: nothing
      expect(
        yield* meter.aggregate({
          merchant_id: m,
          customer_id: "cus_meter",
          subscription_id: "sub_x",
          code: "api_calls",
          from: T0,
          to: T1,
          spec: spec("count", null)
        })
      ).toEqual([{ group: [], value: "0", events: 0 }])
    })
  )

  it.effect("meter events: the storage vector (weighted_sum from the last reading before the period, half-even)", () =>
    Effect.gen(function* () {
      const { meter } = yield* Storage
      const m = yield* Fixtures.merchantId
      const at = (h: number) => T0 + h * H
      const gb = (timestamp: number, value: string, region = "eu") =>
        meterEvent(m, { code: "storage", timestamp, properties: { gb: value, region } })
      yield* meter.insertMany([
        yield* gb(T0 - 2 * H, "9"),
        yield* gb(at(-1), "2"),
        yield* gb(at(2), "5"),
        yield* gb(at(5), "1.5"),
        yield* gb(T1, "100"),
        yield* gb(at(-3), "4", "us")
      ])
      const agg = (s: Aggregation.AggregationSpec, from = T0, to = T1) =>
        Effect.map(
          meter.aggregate({ merchant_id: m, customer_id: "cus_meter", code: "storage", from, to, spec: s }),
          sorted
        )
      // eu: 2 GB × 2 h + 5 GB × 3 h + 1.5 GB × 5 h = 26.5; us: 4 GB held all 10 h, no reading in the period
      expect(yield* agg(spec("weighted_sum", "gb", { filters: [{ property: "region", values: ["eu"] }] }))).toEqual([
        { group: [], value: "26.5", events: 2 }
      ])
      expect(yield* agg(spec("weighted_sum", "gb", { group_by: ["region"] }))).toEqual([
        { group: ["eu"], value: "26.5", events: 2 },
        { group: ["us"], value: "40", events: 0 }
      ])
      // one rounding step, half to even: 1.8 GB and 5.4 GB for 1 ms are 0.5 and 1.5 millionths of a GB-hour
      const later = T1 + 100 * H
      yield* meter.insertMany([yield* gb(later, "1.8", "x"), yield* gb(later + 1, "0", "x")])
      const x = spec("weighted_sum", "gb", { filters: [{ property: "region", values: ["x"] }] })
      expect(yield* agg(x, later, later + 1)).toEqual([{ group: [], value: "0", events: 1 }])
      yield* meter.insertMany([yield* gb(later + 2 * H, "5.4", "x"), yield* gb(later + 2 * H + 1, "0", "x")])
      expect(yield* agg(x, later + 2 * H, later + 2 * H + 1)).toEqual([{ group: [], value: "0.000002", events: 1 }])
      // no reading at all
      expect(yield* agg(spec("weighted_sum", "gb"), T0 - 100 * H, T0 - 50 * H)).toEqual([
        { group: [], value: "0", events: 0 }
      ])
    })
  )

  it.effect("meter events: latest breaks a timestamp tie by ingestion order; non-numeric values are skipped", () =>
    Effect.gen(function* () {
      const { meter } = yield* Storage
      const m = yield* Fixtures.merchantId
      const v = (value: string | boolean) =>
        meterEvent(m, { code: "seats", timestamp: T0 + H, properties: { n: value } })
      yield* meter.insertMany([yield* v("3"), yield* v("8"), yield* v("abc"), yield* v(true), yield* v("1e3")])
      yield* meter.insertMany([yield* v("5.000000"), yield* v("0.0000001"), yield* v("1000000000001")])
      const agg = (s: Aggregation.AggregationSpec) =>
        meter.aggregate({ merchant_id: m, customer_id: "cus_meter", code: "seats", from: T0, to: T1, spec: s })
      expect(yield* agg(spec("latest", "n"))).toEqual([{ group: [], value: "5", events: 3 }])
      expect(yield* agg(spec("sum", "n"))).toEqual([{ group: [], value: "16", events: 3 }])
      expect(yield* agg(spec("unique_count", "n"))).toEqual([{ group: [], value: "8", events: 8 }])
      expect(yield* agg(spec("count", null, { filters: [{ property: "n", values: ["true", "3"] }] }))).toEqual([
        { group: [], value: "2", events: 2 }
      ])
    })
  )
}
