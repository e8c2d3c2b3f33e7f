/**
 * The database pool gauges read at a scrape: PGlite's one session, its message queue and the time
 * it spent running queries, PostgreSQL's sessions of this
 * process found in `pg_stat_activity` by the pool's `application_name`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { Pg, PoolGauges } from "../src/index.js"

const url = process.env.RECUR_TEST_DATABASE_URL

/** The value of the sample `name{labels}` in Prometheus text, undefined when absent. */
const sample = (text: string, name: string, labels: string) => {
  const line = text.split("\n").find((l) => l.startsWith(labels === "" ? `${name} ` : `${name}{${labels}}`))
  return line === undefined ? undefined : Number(line.split(" ").pop())
}

const scrape = Effect.gen(function* () {
  yield* PoolGauges.update(yield* SqlClient.SqlClient)
  return yield* PrometheusMetrics.format()
})

describe("pool gauges", () => {
  it.live(
    "PGlite: one session, idle between queries; the time it spent running them adds up; its queue empty",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const idle = yield* scrape
        expect(sample(idle, "recur_db_pool_max", 'storage="pglite"')).toBe(1)
        expect(sample(idle, "recur_db_pool_connections", 'storage="pglite",state="idle"')).toBe(1)
        expect(sample(idle, "recur_db_pool_connections", 'storage="pglite",state="active"')).toBe(0)
        expect(sample(idle, "recur_db_pool_waiting", 'storage="pglite"')).toBe(0)
        // PGlite runs a query on the event loop (no scrape sees it active): its time adds up instead
        const before = sample(idle, "recur_db_pglite_busy_seconds", "") ?? Number.NaN
        yield* sql`select pg_sleep(0.3)`
        const busy = yield* scrape
        expect(sample(busy, "recur_db_pglite_busy_seconds", "")! - before).toBeGreaterThanOrEqual(0.3)
        expect(sample(busy, "recur_db_pool_connections", 'storage="pglite",state="idle"')).toBe(1)
        const after = yield* scrape
        expect(sample(after, "recur_db_pool_waiting", 'storage="pglite"')).toBe(0)
      }).pipe(Effect.provide(Layer.fresh(Pg.layerPglite()))),
    180_000
  )

  it.live.skipIf(url === undefined)(
    "PostgreSQL: this process's sessions by state, the scrape's own query active",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* Effect.forEach(Array.from({ length: 4 }), () => sql`select pg_sleep(0.05)`, {
          concurrency: "unbounded",
          discard: true
        })
        const text = yield* scrape
        expect(sample(text, "recur_db_pool_max", 'storage="postgres"')).toBe(10)
        expect(sample(text, "recur_db_pool_connections", 'storage="postgres",state="active"')).toBeGreaterThanOrEqual(1)
        const open =
          (sample(text, "recur_db_pool_connections", 'storage="postgres",state="active"') ?? 0) +
          (sample(text, "recur_db_pool_connections", 'storage="postgres",state="idle"') ?? 0)
        expect(open).toBeGreaterThanOrEqual(2)
        expect(open).toBeLessThanOrEqual(10)
      }).pipe(Effect.provide(Layer.fresh(Pg.layerPgScratch({ url: url! })))),
    180_000
  )
})
