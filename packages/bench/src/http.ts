// Benchmarks 1, 2, 6 and 7 (RSS): Recur's server and the node:http + pg baseline, each in its
// own process on the same PostgreSQL schema, loaded in turn by autocannon (50 connections).
import { Merchants } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { Pg } from "@recur/sql"
import { record } from "./report.js"
import {
  databaseUrl,
  dropSchema,
  type Load,
  load,
  masterKey,
  postgresAnswers,
  type Running,
  startBaseline,
  startRecur
} from "./servers.js"

const seconds = Number(process.env.BENCH_HTTP_SECONDS ?? 20)
const subscriptions = Number(process.env.BENCH_HTTP_SUBSCRIPTIONS ?? 300)

/** A merchant with `n` paid monthly subscriptions, renewed twice: 3 invoices each. */
export const seedFor = async (schema: string, n: number) => {
  const app = TestClient.make(
    engineOn(Pg.layerPgUrl({ url: databaseUrl, schema }), { masterKey, publicUrl: "http://localhost:4000" })
  )
  try {
    const { api_key } = await app.runtime.runPromise(
      Merchants.Merchants.use((m) =>
        m.create({ name: "Bench", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
      )
    )
    const ok = (r: { status: number; body: any }) => {
      if (r.status !== 200) throw new Error(`seed failed: ${JSON.stringify(r.body)}`)
      return r.body.data
    }
    const product = ok(await app.call("POST", "/api/v1/products", api_key, { product_name: "Pro" })).product_id
    const price = ok(
      await app.call("POST", "/api/v1/prices", api_key, {
        name: "Pro",
        product_id: product,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
    ).price_id
    let next = 0
    const worker = async () => {
      while (next < n) {
        const i = next++
        const session = ok(
          await app.call("POST", "/api/v1/session", api_key, {
            payer_id: `payer-${i}`,
            line_items: [{ price_id: price }]
          })
        ).session_id
        ok(
          await app.call(
            "POST",
            `/checkout/${session}/pay`,
            null,
            { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
            { accept: "application/json" }
          )
        )
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker))
    for (const at of ["2026-02-01T00:00:05Z", "2026-03-01T00:00:05Z"]) {
      ok(await app.call("POST", "/api/v1/test_helpers/advance_clock", api_key, { frozen_time: at }))
    }
    const invoices = ok(await app.call("GET", "/api/v1/invoices?limit=100", api_key))
    if (invoices.list.length === 0) throw new Error("seed made no invoices")
    return api_key as string
  } finally {
    await app.dispose()
  }
}

const row = (bench: string, r: Load, b: Load, goal: string, unit = "req/s") =>
  record({
    bench,
    recur: r.rps,
    baseline: b.rps,
    unit,
    goal,
    p99: { recur: r.p99, baseline: b.p99 },
    note: `(p50 ${r.p50} vs ${b.p50} ms; non-2xx ${r.non2xx}/${b.non2xx}; errors ${r.errors}/${b.errors}; ${r.total.toLocaleString("en-US")} vs ${b.total.toLocaleString("en-US")} requests)`
  })

const both = async (recur: Running, baseline: Running, run: (s: Running, secs: number) => Promise<Load>) => {
  // warm both (JIT, pools), then measure each in turn on a quiet machine
  await run(recur, 3)
  await run(baseline, 3)
  const r = await run(recur, seconds)
  const b = await run(baseline, seconds)
  return { r, b }
}

export const run = async () => {
  if (!(await postgresAnswers())) {
    console.log(`| http | skipped: no PostgreSQL at ${databaseUrl} (set RECUR_BENCH_DATABASE_URL) | | | | |`)
    return
  }
  const schema = Pg.freshSchemaName("recur_bench_http")
  const key = await seedFor(schema, subscriptions)
  const recur = (await startRecur(schema)).running
  const baseline = (await startBaseline(schema)).running
  const auth = { authorization: `Bearer ${key}` }
  try {
    const health = await both(recur, baseline, (s, secs) => load(s, { path: "/healthz", seconds: secs }))
    row("6. HTTP overhead: GET /healthz (no database)", health.r, health.b, "≥ 60 %, p99 ≤ 2×")

    const readPath = "/api/v1/invoices?limit=10&biz_status=success,open&invoice_types=initial,renewal"
    const reads = await both(recur, baseline, (s, secs) => load(s, { path: readPath, headers: auth, seconds: secs }))
    row("1. REST reads: GET /api/v1/invoices?limit=10 + filters", reads.r, reads.b, "≥ 80 %, p99 ≤ 2×")
    record({
      bench: "7. footprint: server RSS under the read load (peak)",
      recur: reads.r.peakRssMiB,
      baseline: reads.b.peakRssMiB,
      unit: "MiB"
    })

    let payer = 0
    const body = () => JSON.stringify({ payer_id: `load-${process.pid}-${++payer}`, name: "Load" })
    const writes = await both(recur, baseline, (s, secs) =>
      load(s, {
        path: "/api/v1/front/customer/create",
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body,
        seconds: secs
      })
    )
    row(
      "2. REST writes: POST /api/v1/front/customer/create (fresh Request-Ids)",
      writes.r,
      writes.b,
      "≥ 70 %, p99 ≤ 2×"
    )
  } finally {
    await recur.stop()
    await baseline.stop()
    await dropSchema(schema)
  }
}
