import { describe, expect, it, layer } from "@effect/vitest"
import { Maintenance, Pg } from "@recur/sql"
import { Effect, type Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { freshPostgres } from "./postgres.js"

/** The probe table's statistics, read after this session's counts are flushed. */
const statsOf = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`select pg_stat_force_next_flush()`
    const [row] = yield* sql<{ dead: unknown; analyzed: boolean; vacuumed: boolean }>`
      select n_dead_tup as dead, last_analyze is not null as analyzed, last_vacuum is not null as vacuumed
      from pg_stat_user_tables where schemaname = current_schema() and relname = ${table}`
    return { dead: Number(row!.dead), analyzed: row!.analyzed, vacuumed: row!.vacuumed }
  })

/** A table with 500 rows, each updated twice: 1,000 dead row versions (a server's autovacuum kept off it). */
const churn = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`create table ${sql(table)} (id int primary key, v int not null) with (autovacuum_enabled = false)`
    yield* sql`insert into ${sql(table)} select g, 0 from generate_series(1, 500) g`
    yield* sql`update ${sql(table)} set v = v + 1`
    yield* sql`update ${sql(table)} set v = v + 1`
  })

const suite = (name: string, storage: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(storage, { timeout: 120_000 })(`Maintenance (${name})`, (it) => {
    it.effect(
      "vacuums and analyzes a table past autovacuum's thresholds, then leaves it alone",
      () =>
        Effect.gen(function* () {
          yield* churn("maint_probe")
          const before = yield* statsOf("maint_probe")
          expect(before.dead).toBeGreaterThanOrEqual(1000)

          const done = yield* Maintenance.run
          expect(done).toContainEqual({ table: "maint_probe", vacuumed: true, analyzed: true })
          let after = yield* statsOf("maint_probe")
          // on a shared PostgreSQL another session's open transaction (a test file running beside
          // this one) keeps the dead rows visible until it ends: the next pass removes them then
          for (let i = 0; i < 60 && after.dead > 0; i++) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
            yield* Maintenance.run
            after = yield* statsOf("maint_probe")
          }
          expect(after).toEqual({ dead: 0, analyzed: true, vacuumed: true })

          const again = yield* Maintenance.run
          expect(again.map((t) => t.table)).not.toContain("maint_probe")
        }),
      { timeout: 60_000 }
    )
  })

suite("PGlite", Pg.layerPglite({ maintenance: false }))
const url = process.env.RECUR_TEST_DATABASE_URL
if (url) suite("PostgreSQL", freshPostgres(url))

describe("Maintenance.layer", () => {
  it.effect(
    "runs in the background on real time, under a test clock too",
    () =>
      Effect.gen(function* () {
        yield* churn("maint_background")
        // wait (real time, bounded) for a pass to reach the table
        let stats = yield* statsOf("maint_background")
        for (let i = 0; i < 600 && !(stats.vacuumed && stats.analyzed); i++) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
          stats = yield* statsOf("maint_background")
        }
        expect(stats).toEqual({ dead: 0, analyzed: true, vacuumed: true })
      }).pipe(Effect.provide(Pg.layerPglite({ maintenance: { every: "100 millis" } }))),
    { timeout: 60_000 }
  )
})
