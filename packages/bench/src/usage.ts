// Benchmark 4: usage ingestion on PostgreSQL with de-duplication by event_id (10 % of the
// records are re-sent duplicates). Recur in process (Subscriptions.recordUsageBatch: 1,000
// records per transaction, the subscriptions split over BENCH_USAGE_PARTITIONS ingesters like
// a partitioned queue's consumers), over REST (POST /api/v1/usage/batch) and, for reference,
// one record per call (Subscriptions.recordUsage), against batched raw SQL writing the same
// rows (1,000 per statement, ON CONFLICT DO NOTHING, one running-total update per subscription).
import { Metering, Subscriptions } from "@recur/core"
import { Merchants } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { Pg } from "@recur/sql"
import { Effect } from "effect"
import pg from "pg"
import * as Meter from "./meter.js"
import { record } from "./report.js"
import { databaseUrl, dropSchema, masterKey, postgresAnswers } from "./servers.js"

const total = Number(process.env.BENCH_USAGE_RECORDS ?? 200_000)
const restTotal = Number(process.env.BENCH_USAGE_REST_RECORDS ?? 50_000)
const singleTotal = Number(process.env.BENCH_USAGE_SINGLE_RECORDS ?? 2_000)
const partitions = Number(process.env.BENCH_USAGE_PARTITIONS ?? 4)
const batchSize = 1000
const subscriptionCount = Number(process.env.BENCH_USAGE_SUBSCRIPTIONS ?? 50)
const card = { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" }

/** `n` records over the subscriptions, every tenth one a re-sent duplicate of an earlier event. */
const plan = (n: number, subs: ReadonlyArray<string>, tag: string) =>
  Array.from({ length: n }, (_, i) => {
    const original = i % 10 === 9 ? i - 5 : i
    return {
      subscription_id: subs[original % subs.length]!,
      event_id: `${tag}-${original}`,
      usage_count: 1 + (original % 7)
    }
  })

export const run = async () => {
  if (!(await postgresAnswers())) {
    console.log(`| usage | skipped: no PostgreSQL at ${databaseUrl} | | | | |`)
    return
  }
  const schema = Pg.freshSchemaName("recur_bench_usage")
  const app = TestClient.make(
    engineOn(Pg.layerPgUrl({ url: databaseUrl, schema }), { masterKey, publicUrl: "http://localhost:4000" })
  )
  const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path="${schema}"` })
  try {
    const { api_key: key, merchant } = await app.runtime.runPromise(
      Merchants.Merchants.use((m) =>
        m.create({ name: "Usage", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
      )
    )
    const product = (await app.call("POST", "/api/v1/products", key, { product_name: "API" })).body.data.product_id
    const price = (
      await app.call("POST", "/api/v1/prices", key, {
        name: "Calls",
        product_id: product,
        currency: "USD",
        billing_type: "recurring",
        price_type: "based_on_usage",
        model_type: "per_unit",
        billing_threshold: "1",
        usage_unit_price: "0.10",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call",
        price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
      })
    ).body.data.price_id
    const subs: Array<string> = []
    for (let i = 0; i < subscriptionCount; i++) {
      const session = (
        await app.call("POST", "/api/v1/session", key, { payer_id: `u-${i}`, line_items: [{ price_id: price }] })
      ).body.data.session_id
      const paid = await app.call("POST", `/checkout/${session}/pay`, null, card, { accept: "application/json" })
      subs.push(
        (
          await app.call(
            "GET",
            `/api/v1/subscription?search_type=trade_id&search_value=${paid.body.data.trade_id}`,
            key
          )
        ).body.data.list[0].id
      )
    }
    const merchantId = merchant.merchant_id

    /** The records split by subscription over the partitions, each partition cut into batches. */
    const partitioned = (
      records: ReadonlyArray<{ subscription_id: string; event_id: string; usage_count: number }>
    ) => {
      const parts = Array.from({ length: partitions }, () => [] as Array<(typeof records)[number]>)
      for (const r of records) parts[subs.indexOf(r.subscription_id) % partitions]!.push(r)
      return parts.map((part) =>
        Array.from({ length: Math.ceil(part.length / batchSize) }, (_, i) =>
          part.slice(i * batchSize, (i + 1) * batchSize)
        )
      )
    }

    // Recur in process, batched
    const records = plan(total, subs, "in")
    const t0 = performance.now()
    const duplicates = await app.runtime.runPromise(
      Effect.gen(function* () {
        const metering = yield* Metering.Metering
        let dup = 0
        yield* Effect.forEach(
          partitioned(records),
          (batches) =>
            Effect.forEach(
              batches,
              (batch) =>
                Effect.map(
                  metering.recordUsageBatch(
                    merchantId,
                    batch.map((r) => Subscriptions.usageOf(r.subscription_id, r.usage_count, { eventId: r.event_id }))
                  ),
                  (r) => (dup += r.duplicates)
                ),
              { discard: true }
            ),
          { concurrency: partitions, discard: true }
        )
        return dup
      })
    )
    const inProcess = total / ((performance.now() - t0) / 1000)

    // over REST (in process: the HTTP stack without sockets), batched
    const t1 = performance.now()
    await Promise.all(
      partitioned(plan(restTotal, subs, "rest")).map(async (batches) => {
        for (const batch of batches) {
          const a = await app.call("POST", "/api/v1/usage/batch", key, { records: batch })
          if (a.status !== 200) throw new Error(JSON.stringify(a.body))
        }
      })
    )
    const rest = restTotal / ((performance.now() - t1) / 1000)

    // one record per call, for reference (one transaction each)
    const single = plan(singleTotal, subs, "one")
    const t3 = performance.now()
    await app.runtime.runPromise(
      Effect.gen(function* () {
        const metering = yield* Metering.Metering
        const bySub = new Map<string, Array<(typeof single)[number]>>()
        for (const r of single) bySub.set(r.subscription_id, [...(bySub.get(r.subscription_id) ?? []), r])
        yield* Effect.forEach(
          bySub.values(),
          (list) =>
            Effect.forEach(
              list,
              (r) =>
                metering.recordUsage(
                  merchantId,
                  Subscriptions.usageOf(r.subscription_id, r.usage_count, { eventId: r.event_id })
                ),
              { discard: true }
            ),
          { concurrency: 16, discard: true }
        )
      })
    )
    const oneByOne = singleTotal / ((performance.now() - t3) / 1000)

    // baseline: the same rows, batched
    await client.connect()
    const raw = plan(total, subs, "raw")
    const t2 = performance.now()
    for (let i = 0; i < raw.length; i += 1000) {
      const chunk = raw.slice(i, i + 1000)
      await client.query("begin")
      const now = new Date()
      const inserted = await client.query(
        `insert into recur_usage_records (id, merchant_id, created_at, data, subscription_id, event_id, cycle_index)
         select 'usg_' || md5(s || e), $1, $2, jsonb_build_object('merchant_id', $1::text, 'trial', false, 'usage', jsonb_build_object('id', 'usg_' || md5(s || e), 'subscription_id', s, 'event_id', e, 'usage_count', c, 'cycle_index', 0, 'timestamp', $2::timestamptz, 'created_at', $2::timestamptz)), s, e, 0
         from unnest($3::text[], $4::text[], $5::int[]) as u(s, e, c)
         on conflict do nothing returning subscription_id, (data->'usage'->>'usage_count')::int as c`,
        [
          merchantId,
          now,
          chunk.map((r) => r.subscription_id),
          chunk.map((r) => r.event_id),
          chunk.map((r) => r.usage_count)
        ]
      )
      const sums = new Map<string, number>()
      for (const row of inserted.rows) sums.set(row.subscription_id, (sums.get(row.subscription_id) ?? 0) + row.c)
      await client.query(
        `update recur_subscriptions s set version = version + 1, data = jsonb_set(s.data, '{accrued_usage}', to_jsonb(((coalesce(s.data->>'accrued_usage', '0'))::bigint + u.n)::text))
         from unnest($1::text[], $2::bigint[]) as u(id, n) where s.merchant_id = $3 and s.id = u.id`,
        [[...sums.keys()], [...sums.values()], merchantId]
      )
      await client.query("commit")
    }
    const baseline = total / ((performance.now() - t2) / 1000)
    const stored = Number(
      (await client.query("select count(*) as n from recur_usage_records where event_id like 'in-%'")).rows[0].n
    )
    const expected = new Set(records.map((r) => `${r.subscription_id} ${r.event_id}`)).size
    if (stored !== expected) throw new Error(`usage: ${stored} records stored, ${expected} expected`)
    const accrued = Number(
      (await client.query("select coalesce(sum((data->>'accrued_usage')::bigint), 0) as n from recur_subscriptions"))
        .rows[0].n
    )
    const counted = Number(
      (
        await client.query(
          "select coalesce(sum((data->'usage'->>'usage_count')::bigint), 0) as n from recur_usage_records"
        )
      ).rows[0].n
    )
    if (accrued !== counted) throw new Error(`usage: running totals ${accrued} ≠ Σ records ${counted}`)
    record({
      bench: `4. usage ingestion in process, batched (${total.toLocaleString("en-US")} records, ${duplicates.toLocaleString("en-US")} duplicates dropped, ${partitions} ingesters)`,
      recur: inProcess,
      baseline,
      unit: "records/s",
      goal: "≥ 20,000 records/s"
    })
    record({
      bench: `4. usage ingestion over REST, batched (${restTotal.toLocaleString("en-US")} records, in-process handler)`,
      recur: rest,
      baseline,
      unit: "records/s"
    })
    record({
      bench: `4. usage ingestion, one record per call (${singleTotal.toLocaleString("en-US")} records)`,
      recur: oneByOne,
      baseline,
      unit: "records/s"
    })
  } finally {
    await app.dispose()
    await client.end().catch(() => undefined)
    await dropSchema(schema)
  }
  // 4b: meter events (issue 35)
  if (process.env.BENCH_SKIP_METER === undefined) await Meter.run()
}
