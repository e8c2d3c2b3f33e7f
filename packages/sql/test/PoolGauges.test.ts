/**
 * The database pool gauges read at a scrape: PGlite's one session and its message queue (a
 * burst of concurrent queries queues behind the one running), PostgreSQL's sessions of this
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
    "PGlite: one session, idle between queries; a burst of queries waits in its queue",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const idle = yield* scrape
        expect(sample(idle, "recur_db_pool_max", 'storage="pglite"')).toBe(1)
        expect(sample(idle, "recur_db_pool_connections", 'storage="pglite",state="idle"')).toBe(1)
        expect(sample(idle, "recur_db_pool_connections", 'storage="pglite",state="active"')).toBe(0)
        expect(sample(idle, "recur_db_pool_waiting", 'storage="pglite"')).toBe(0)
        // twenty slow queries at once: while the first runs, the others' messages queue
        let busiest = 0
        const seen = Effect.gen(function* () {
          const text = yield* scrape
          busiest = Math.max(busiest, sample(text, "recur_db_pool_waiting", 'storage="pglite"') ?? 0)
          return sample(text, "recur_db_pool_connections", 'storage="pglite",state="active"')
        })
        const burst = Effect.forEach(Array.from({ length: 20 }), () => sql`select pg_sleep(0.02)`, {
          concurrency: "unbounded",
          discard: true
        })
        const fiber = yield* Effect.forkChild(burst)
        yield* Effect.sleep("5 millis")
        const active = yield* seen
        yield* Fiber.join(fiber)
        expect(active).toBe(1)
        expect(busiest).toBeGreaterThan(0)
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
