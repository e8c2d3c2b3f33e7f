/**
 * The database pool gauges read at a scrape: PGlite's one session (active while a query runs)
 * and its message queue, PostgreSQL's sessions of this
 * process found in `pg_stat_activity` by the pool's `application_name`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { Pg, PoolGauges } from "../src/index.js"

const url = process.env.RECUR_TEST_DATABASE_URL

/** The value of the sample `name{labels}` in Prometheus text, undefined when absent. */
const sample = (text: string, name: string, labels: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`))
  return line === undefined ? undefined : Number(line.split(" ").pop())
}

const scrape = Effect.gen(function* () {
  yield* PoolGauges.update(yield* SqlClient.SqlClient)
  return yield* PrometheusMetrics.format()
})

describe("pool gauges", () => {
  it.live(
    "PGlite: one session, idle between queries and active while one runs; its queue empty after",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const idle = yield* scrape
        expect(sample(idle, "recur_db_pool_max", 'storage="pglite"')).toBe(1)
        expect(sample(idle, "recur_db_pool_connections", 'storage="pglite",state="idle"')).toBe(1)
        expect(sample(idle, "recur_db_pool_connections", 'storage="pglite",state="active"')).toBe(0)
        expect(sample(idle, "recur_db_pool_waiting", 'storage="pglite"')).toBe(0)
        // a slow query holds the session: a scrape while it runs sees it active (polled, bounded)
        const fiber = yield* Effect.forkChild(sql`select pg_sleep(1)`)
        let active = 0
        for (let i = 0; i < 200 && active === 0; i++) {
          active = sample(yield* scrape, "recur_db_pool_connections", 'storage="pglite",state="active"') ?? Number.NaN
          if (active === 0) yield* Effect.sleep("10 millis")
        }
        yield* Fiber.join(fiber)
        expect(active).toBe(1)
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
