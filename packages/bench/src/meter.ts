// Benchmark 4b: meter events (issue 35) on PostgreSQL — ingestion with properties through the
// facade (`meterEvents.stream`, batches of 1,000 per transaction, BENCH_METER_PARTITIONS streams
// at once like a partitioned queue's consumers) and over REST (`POST /api/v1/meter_events/batch`,
// in-process handler), each beside hand-written batched INSERTs of the same rows (1,000 per
// statement, ON CONFLICT DO NOTHING); and the aggregation of one customer's cycle of 1,000,000
// events (`Storage.meter.aggregate`) beside the plain SELECT computing the same value.
import { Merchants, Store } from "@recur/core"
import { createBilling, engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { Pg } from "@recur/sql"
import pg from "pg"
import { record } from "./report.js"
import { databaseUrl, masterKey, postgresAnswers } from "./servers.js"

const total = Number(process.env.BENCH_METER_EVENTS ?? 200_000)
const restTotal = Number(process.env.BENCH_METER_REST_EVENTS ?? 50_000)
const cycleEvents = Number(process.env.BENCH_METER_CYCLE_EVENTS ?? 1_000_000)
const partitions = Number(process.env.BENCH_METER_PARTITIONS ?? 4)
const customersPerPartition = 5
const NOW = Date.parse("2026-01-01T00:00:00Z")
const regions = ["eu", "us", "ap"]

/** `n` events of `customers`, with properties; every tenth one re-sends an earlier transaction id. */
const events = (n: number, customers: ReadonlyArray<string>, tag: string) =>
  Array.from({ length: n }, (_, i) => {
    const original = i % 10 === 9 ? i - 5 : i
    return {
      transaction_id: `${tag}-${original}`,
      customer_id: customers[original % customers.length]!,
      code: "api_calls",
      timestamp: NOW - 86_400_000 + (original % 86_400_000),
      properties: { region: regions[original % 3]!, tokens: (original % 1000) / 100, user: `u${original % 977}` }
    }
  })

const rate = (n: number, since: number) => n / ((performance.now() - since) / 1000)

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export const run = async () => {
  if (!(await postgresAnswers())) {
    console.log(`| meter | skipped: no PostgreSQL at ${databaseUrl} | | | | |`)
    return
  }
  const database = `recur_bench_meter_${Date.now()}`
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  await admin.query(`create database ${database}`)
  const url = new URL(databaseUrl)
  url.pathname = `/${database}`
  const dbUrl = url.toString()
  const billing = await createBilling({ storage: { postgres: dbUrl }, masterKey, logLevel: "none" })
  const app = TestClient.make(
    engineOn(Pg.layerPgUrl({ url: dbUrl }), { masterKey, publicUrl: "http://localhost:4000" })
  )
  const client = new pg.Client({ connectionString: dbUrl })
  try {
    await client.connect()
    // through the facade
    const { merchant_id: m } = await billing.merchants.create({ name: "Meter", currency: "USD", frozen_time: NOW })
    // an event's code names an active metric of the merchant
    await billing.billableMetrics.create(m, { code: "api_calls", name: "API calls", aggregation: "count" })
    const parts: Array<Array<string>> = []
    for (let p = 0; p < partitions; p++) {
      const part: Array<string> = []
      for (let c = 0; c < customersPerPartition; c++)
        part.push((await billing.customers.create(m, { payer_id: `p-${p}-${c}` })).customer_id)
      parts.push(part)
    }
    const perPart = Math.ceil(total / partitions)
    const planned = parts.map((customers, p) => events(perPart, customers, `f${p}`))
    const t0 = performance.now()
    const sent = await Promise.all(planned.map((list) => billing.meterEvents.stream(m, list)))
    const facade = rate(perPart * partitions, t0)
    const accepted = sent.reduce((a, s) => a + s.accepted, 0)
    const expected = planned.reduce((a, list) => a + new Set(list.map((e) => e.transaction_id)).size, 0)
    if (accepted !== expected) throw new Error(`meter: ${accepted} events accepted, ${expected} expected`)

    // over REST
    const { api_key: key } = await app.runtime.runPromise(
      Merchants.Merchants.use((ms) => ms.create({ name: "Meter REST", currency: "USD", frozen_time: NOW }))
    )
    await app.call("POST", "/api/v1/billable_metrics", key, {
      code: "api_calls",
      name: "API calls",
      aggregation: "count"
    })
    const restParts: Array<Array<string>> = []
    for (let p = 0; p < partitions; p++) {
      const part: Array<string> = []
      for (let c = 0; c < customersPerPartition; c++)
        part.push(
          (await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: `r-${p}-${c}` })).body.data
            .customer_id
        )
      restParts.push(part)
    }
    const restPer = Math.ceil(restTotal / partitions)
    const t1 = performance.now()
    await Promise.all(
      restParts.map(async (customers, p) => {
        const list = events(restPer, customers, `r${p}`)
        for (let i = 0; i < list.length; i += 1000) {
          const a = await app.call("POST", "/api/v1/meter_events/batch", key, { events: list.slice(i, i + 1000) })
          if (a.status !== 200) throw new Error(JSON.stringify(a.body))
        }
      })
    )
    const rest = rate(restPer * partitions, t1)

    // baseline: the same rows by hand, 1,000 per statement, as many connections as streams
    const raw = parts.map((customers, p) => events(perPart, customers, `raw${p}`))
    const clients = await Promise.all(
      raw.map(async () => {
        const c = new pg.Client({ connectionString: dbUrl })
        await c.connect()
        return c
      })
    )
    const t2 = performance.now()
    await Promise.all(
      raw.map(async (list, p) => {
        const c = clients[p]!
        for (let i = 0; i < list.length; i += 1000) {
          const chunk = list.slice(i, i + 1000)
          await c.query(
            `insert into recur_meter_events (id, merchant_id, transaction_id, customer_id, subscription_id, code, timestamp, properties, numbers, created_at, voided_at)
             select 'mev_raw_' || t, $1, t, cu, null, 'api_calls', ts, jsonb_build_object('region', r, 'tokens', tk, 'user', u), jsonb_build_object('tokens', tk), $2, null
             from unnest($3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[]) as x(t, cu, ts, r, tk, u)
             on conflict do nothing`,
            [
              m,
              NOW,
              chunk.map((e) => e.transaction_id),
              chunk.map((e) => e.customer_id),
              chunk.map((e) => e.timestamp),
              chunk.map((e) => e.properties.region),
              chunk.map((e) => String(e.properties.tokens)),
              chunk.map((e) => e.properties.user)
            ]
          )
        }
      })
    )
    const baseline = rate(perPart * partitions, t2)
    await Promise.all(clients.map((c) => c.end()))

    // one customer's cycle of 1,000,000 events (written by SQL: this measures the aggregation)
    const big = (await billing.customers.create(m, { payer_id: "big" })).customer_id
    const from = NOW - 30 * 86_400_000
    await client.query(
      `insert into recur_meter_events (id, merchant_id, transaction_id, customer_id, subscription_id, code, timestamp, properties, numbers, created_at, voided_at)
       select 'mev_big_' || i, $1, 'big-' || i, $2, null, 'storage', $3::bigint + (i::bigint * 2592) % 2592000000,
         jsonb_build_object('region', (array['eu','us','ap'])[1 + i % 3], 'gb', trim_scale((i % 100000) / 100.0)::text, 'user', 'u' || (i % 5000)),
         jsonb_build_object('gb', trim_scale((i % 100000) / 100.0)::text),
         $3, null
       from generate_series(1, $4::int) as i`,
      [m, big, from, cycleEvents]
    )
    await client.query("vacuum analyze recur_meter_events")
    const query = (
      aggregation: "sum" | "count" | "max" | "unique_count" | "latest" | "weighted_sum",
      property: string | null,
      group_by: ReadonlyArray<string> = []
    ) =>
      app.runtime.runPromise(
        Store.Storage.use((s) =>
          s.meter.aggregate({
            merchant_id: m,
            customer_id: big,
            code: "storage",
            from,
            to: NOW,
            spec: { aggregation, property, filters: [], group_by }
          })
        )
      )
    const timed = async (f: () => Promise<unknown>, runs = 3) => {
      await f() // warm
      const times: Array<number> = []
      for (let i = 0; i < runs; i++) {
        const t = performance.now()
        await f()
        times.push(performance.now() - t)
      }
      return median(times)
    }
    const cases = [
      [
        "sum",
        "gb",
        [],
        `select sum((properties->>'gb')::numeric) from recur_meter_events where merchant_id = $1 and customer_id = $2 and code = 'storage' and timestamp >= $3 and timestamp < $4 and voided_at is null`
      ],
      [
        "count",
        null,
        ["region"],
        `select properties->>'region', count(*) from recur_meter_events where merchant_id = $1 and customer_id = $2 and code = 'storage' and timestamp >= $3 and timestamp < $4 and voided_at is null group by 1`
      ],
      [
        "unique_count",
        "user",
        [],
        `select count(distinct properties->>'user') from recur_meter_events where merchant_id = $1 and customer_id = $2 and code = 'storage' and timestamp >= $3 and timestamp < $4 and voided_at is null`
      ],
      [
        "weighted_sum",
        "gb",
        [],
        `select sum(g * (lead(timestamp, 1, $4::bigint) over (order by timestamp, seq) - timestamp)) from (select (properties->>'gb')::numeric as g, timestamp, seq from recur_meter_events where merchant_id = $1 and customer_id = $2 and code = 'storage' and timestamp >= $3 and timestamp < $4 and voided_at is null) e`
      ]
    ] as const
    for (const [aggregation, property, group_by, sql] of cases) {
      const recurMs = await timed(() => query(aggregation, property, group_by))
      const baseMs = await timed(() =>
        client.query(
          aggregation === "weighted_sum"
            ? `select sum(x) from (select g * (lead(timestamp, 1, $4::bigint) over (order by timestamp, seq) - timestamp) as x from (select (properties->>'gb')::numeric as g, timestamp, seq from recur_meter_events where merchant_id = $1 and customer_id = $2 and code = 'storage' and timestamp >= $3 and timestamp < $4 and voided_at is null) e) w`
            : sql,
          [m, big, from, NOW]
        )
      )
      record({
        bench: `4b. meter aggregation of one customer's cycle of ${cycleEvents.toLocaleString("en-US")} events: ${aggregation}${group_by.length > 0 ? ` by ${group_by.join(", ")}` : ""} (median of 3)`,
        recur: recurMs,
        baseline: baseMs,
        unit: "ms",
        goal: "< 1,000 ms"
      })
    }
    record({
      bench: `4b. meter events through the facade (meterEvents.stream, ${(perPart * partitions).toLocaleString("en-US")} events with 3 properties, 10 % re-sent, ${partitions} streams)`,
      recur: facade,
      baseline,
      unit: "events/s",
      goal: "≥ 20,000 events/s"
    })
    record({
      bench: `4b. meter events over REST (POST /api/v1/meter_events/batch ×1,000, ${(restPer * partitions).toLocaleString("en-US")} events, in-process handler)`,
      recur: rest,
      baseline,
      unit: "events/s",
      goal: "≥ 10,000 events/s"
    })
  } finally {
    await billing.close()
    await app.dispose()
    await client.end().catch(() => undefined)
    await admin.query(`drop database if exists ${database} with (force)`).catch(() => undefined)
    await admin.end()
  }
}
