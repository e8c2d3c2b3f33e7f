import { expect, layer } from "@effect/vitest"
import type { Aggregation, Store } from "@recur/core"
import { Pg } from "@recur/sql"
import { Fixtures, MemoryStorage } from "@recur/testing"
import { Store as S } from "@recur/core"
import { Effect, type Layer } from "effect"
import fc from "fast-check"
import { freshPostgres } from "./postgres.js"

// Random event streams aggregated by the store (memory, PGlite, PostgreSQL) and by the reference
// below — plain, slow and independent of both adapters — for every aggregation, with and without
// filters, groups and a subscription, over a period whose bounds the timestamps crowd around.

const SEED = 20_261_127
const H = 3_600_000
const FROM = Date.UTC(2026, 0, 1)
const TO = FROM + 10 * H

interface Generated {
  readonly transaction: number
  readonly customer: string
  readonly subscription: string | null
  readonly code: string
  readonly timestamp: number
  readonly properties: Record<string, string | boolean>
}

const maybe = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined, freq: 4 })
const numeric = fc.oneof(
  fc.constantFrom("0", "1", "2.5", "-3", "1.50", "0.000001", "999999999999.999999", "-0.5", "7", "abc", "1e3", "+4"),
  fc.integer({ min: -100_000, max: 100_000 }).map((n) => (n / 1000).toString()),
  fc.constant(true as string | boolean)
)
const instant = fc.oneof(
  fc.constantFrom(FROM - H, FROM - 1, FROM, FROM + 1, TO - 1, TO, TO + 1, FROM + 5 * H),
  fc.integer({ min: FROM - 2 * H, max: TO + H })
)
const event: fc.Arbitrary<Generated> = fc
  .record({
    transaction: fc.integer({ min: 0, max: 40 }),
    customer: fc.constantFrom("cus_1", "cus_1", "cus_2"),
    subscription: fc.constantFrom(null, "sub_1", "sub_2"),
    code: fc.constantFrom("a", "a", "b"),
    timestamp: instant,
    region: maybe(fc.constantFrom("eu", "us", "ap")),
    user: maybe(fc.constantFrom("u1", "u2", "u3", "u4")),
    v: maybe(numeric)
  })
  .map(({ region, user, v, ...rest }) => ({
    ...rest,
    properties: {
      ...(region === undefined ? {} : { region }),
      ...(user === undefined ? {} : { user }),
      ...(v === undefined ? {} : { v })
    }
  }))
const stream = fc.record({
  events: fc.array(event, { minLength: 0, maxLength: 40 }),
  batches: fc.integer({ min: 1, max: 3 }),
  voided: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 6 }),
  subscription: fc.constantFrom(undefined, null, "sub_1"),
  filters: fc.constantFrom<ReadonlyArray<Aggregation.MetricFilter>>(
    [],
    [{ property: "region", values: ["eu", "us"] }],
    [
      { property: "region", values: ["eu"] },
      { property: "user", values: ["u1", "u2", "true"] }
    ]
  ),
  group_by: fc.constantFrom<ReadonlyArray<string>>([], ["region"], ["region", "user"], ["v"])
})

// ---- the reference ----

/** The exact value of a numeric text in millionths, or undefined. */
const refNumber = (v: string | boolean | undefined): bigint | undefined => {
  if (typeof v !== "string" || !/^[+-]?\d+(\.\d+)?$/.test(v)) return undefined
  const negative = v.startsWith("-")
  const [whole, fraction = ""] = v.replace(/^[+-]/, "").split(".")
  const trimmed = fraction.replace(/0+$/, "")
  if (trimmed.length > 6) return undefined
  const micros = BigInt(whole!) * 1_000_000n + BigInt(trimmed.padEnd(6, "0"))
  if (micros > 1_000_000_000_000_000_000n) return undefined
  return negative ? -micros : micros
}
const refText = (micros: bigint): string => {
  const sign = micros < 0n ? "-" : ""
  const abs = micros < 0n ? -micros : micros
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "")
  return `${sign}${abs / 1_000_000n}${fraction === "" ? "" : `.${fraction}`}`
}
const asText = (v: string | boolean | undefined) => (v === undefined ? null : String(v))

interface Ingested {
  readonly order: number
  readonly e: Store.MeterEvent
}

const reference = (
  ingested: ReadonlyArray<Ingested>,
  q: Omit<Store.MeterAggregateQuery, "merchant_id">
): Array<Aggregation.AggregatedValue> => {
  const { spec } = q
  const prop = spec.property ?? ""
  const isNumeric = !["count", "unique_count"].includes(spec.aggregation)
  const mine = ingested.filter(
    ({ e }) =>
      e.customer_id === q.customer_id &&
      e.code === q.code &&
      e.voided_at === null &&
      (q.subscription_id === undefined || e.subscription_id === q.subscription_id) &&
      spec.filters.every((f) => f.values.some((v) => v === asText(e.properties[f.property]))) &&
      (spec.property === null || e.properties[prop] !== undefined) &&
      (!isNumeric || refNumber(e.properties[prop]) !== undefined)
  )
  const keyOf = (e: Store.MeterEvent) => JSON.stringify(spec.group_by.map((g) => asText(e.properties[g])))
  const inPeriod = (e: Store.MeterEvent) => e.timestamp >= q.from && e.timestamp < q.to
  const keys = new Set(
    mine
      .filter(({ e }) => inPeriod(e) || (spec.aggregation === "weighted_sum" && e.timestamp < q.from))
      .map(({ e }) => keyOf(e))
  )
  const out: Array<Aggregation.AggregatedValue> = []
  for (const key of keys) {
    const group = mine.filter(({ e }) => keyOf(e) === key)
    const period = group.filter(({ e }) => inPeriod(e))
    const values = period.map(({ e }) => refNumber(e.properties[prop])!)
    let value: string
    switch (spec.aggregation) {
      case "count":
        value = String(period.length)
        break
      case "unique_count":
        value = String(new Set(period.map(({ e }) => asText(e.properties[prop]))).size)
        break
      case "sum":
        value = refText(values.reduce((a, b) => a + b, 0n))
        break
      case "max":
        value = refText(values.reduce((a, b) => (b > a ? b : a)))
        break
      case "latest": {
        const last = [...period].sort((a, b) => a.e.timestamp - b.e.timestamp || a.order - b.order).at(-1)!
        value = refText(refNumber(last.e.properties[prop])!)
        break
      }
      case "weighted_sum": {
        // walk every millisecond boundary: the level is the latest reading at or before it
        const readings = [...group].sort((a, b) => a.e.timestamp - b.e.timestamp || a.order - b.order)
        const levelAt = (t: number) => {
          const before = readings.filter(({ e }) => e.timestamp <= t && e.timestamp < q.to)
          return before.length === 0 ? 0n : refNumber(before.at(-1)!.e.properties[prop])!
        }
        const cuts = [...new Set([q.from, ...period.map(({ e }) => e.timestamp)])].sort((a, b) => a - b)
        let total = 0n
        cuts.forEach((t, i) => {
          total += levelAt(t) * BigInt((cuts[i + 1] ?? q.to) - t)
        })
        // half-even, once
        const d = 3_600_000n
        const abs = total < 0n ? -total : total
        let quotient = abs / d
        const rest = abs % d
        if (rest * 2n > d || (rest * 2n === d && quotient % 2n === 1n)) quotient += 1n
        value = refText(total < 0n ? -quotient : quotient)
        break
      }
    }
    out.push({ group: JSON.parse(key), value, events: period.length })
  }
  return out.length === 0 && spec.group_by.length === 0 ? [{ group: [], value: "0", events: 0 }] : out
}

const sorted = (values: ReadonlyArray<Aggregation.AggregatedValue>) =>
  [...values].sort((a, b) => (JSON.stringify(a.group) < JSON.stringify(b.group) ? -1 : 1))

const specs = (filters: ReadonlyArray<Aggregation.MetricFilter>, group_by: ReadonlyArray<string>) =>
  (
    [
      ["count", null],
      ["sum", "v"],
      ["max", "v"],
      ["latest", "v"],
      ["unique_count", "user"],
      ["unique_count", "v"],
      ["weighted_sum", "v"]
    ] as const
  ).flatMap(([aggregation, property]) => [
    { aggregation, property, filters: [], group_by: [] },
    { aggregation, property, filters, group_by }
  ])

const suite = <E>(name: string, storage: Layer.Layer<S.Storage, E>, runs: number) =>
  layer(storage, { timeout: "120 seconds" })(`Meter aggregation against the reference: ${name}`, (it) => {
    it.effect(
      "every aggregation, with and without filters, groups and a subscription, equals the reference",
      () =>
        Effect.gen(function* () {
          const { meter } = yield* S.Storage
          for (const sample of fc.sample(stream, { seed: SEED, numRuns: runs })) {
            const m = yield* Fixtures.merchantId
            const all = sample.events.map(
              (g, i): Store.MeterEvent => ({
                id: `mev_${m}_${i}`,
                merchant_id: m,
                transaction_id: `t${g.transaction}`,
                customer_id: g.customer,
                subscription_id: g.subscription,
                code: g.code,
                timestamp: g.timestamp,
                properties: g.properties,
                created_at: FROM,
                voided_at: null
              })
            )
            const size = Math.ceil(all.length / sample.batches) || 1
            for (let i = 0; i < all.length; i += size) yield* meter.insertMany(all.slice(i, i + size))
            // the reference de-duplicates on its own: the first event of a transaction id wins
            const seen = new Map<string, Ingested>()
            all.forEach((e, order) => {
              if (!seen.has(e.transaction_id)) seen.set(e.transaction_id, { order, e })
            })
            for (const v of sample.voided) {
              const hit = seen.get(`t${v}`)
              const voided = yield* meter.void(m, `t${v}`, TO)
              expect(voided).toBe(hit !== undefined && hit.e.voided_at === null)
              if (hit !== undefined) seen.set(`t${v}`, { ...hit, e: { ...hit.e, voided_at: TO } })
            }
            for (const spec of specs(sample.filters, sample.group_by)) {
              const q = {
                customer_id: "cus_1",
                code: "a",
                subscription_id: sample.subscription,
                from: FROM,
                to: TO,
                spec
              }
              const got = yield* meter.aggregate({ merchant_id: m, ...q })
              expect({ spec, got: sorted(got) }).toEqual({ spec, got: sorted(reference([...seen.values()], q)) })
            }
          }
        }),
      180_000
    )
  })

suite("memory", MemoryStorage.layer, 150)
suite("PGlite", Pg.layerPglite(), 40)
const url = process.env.RECUR_TEST_DATABASE_URL
if (url) suite("PostgreSQL", freshPostgres(url), 40)
