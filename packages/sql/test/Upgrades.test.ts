import { describe, expect, it } from "@effect/vitest"
import { Migrations, Pg } from "@recur/sql"
import { Effect, type Layer } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"

// docs/operations.md "Upgrades": migrations run forward only, in order, once each (recorded in
// recur_migrations), inside one transaction; a store at any earlier schema version reaches the
// same schema as a new one; data written under an earlier version is carried (0009 backfills
// redemptions from the subscriptions stored before it); running them again, or running a
// migration's statements twice, changes nothing; an older Recur opening a newer store runs
// nothing and is refused (SchemaNewerThanCode). On PGlite, and on PostgreSQL when RECUR_TEST_DATABASE_URL is set.

const url = process.env.RECUR_TEST_DATABASE_URL
const storages: ReadonlyArray<readonly [string, () => Layer.Layer<SqlClient.SqlClient, unknown>]> = [
  ["PGlite", () => Pg.layerPglite({ maintenance: false })],
  ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
]

const all = Object.entries(Migrations.migrations)
/** Each migration's number (`0016_…` → 16). */
const ids = all.map(([name]) => Number(name.slice(0, 4)))
const later = ids[ids.length - 1]! + 1

/** The migrations of an earlier Recur: the first `count`. */
const upTo = (count: number) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(all.slice(0, count))),
    table: "recur_migrations"
  })

/** Recur's tables, columns and indexes in the current schema: what a migration may change. */
const schemaOf = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>`
    select table_name, column_name, data_type, is_nullable from information_schema.columns
    where table_schema = current_schema() and table_name like 'recur_%'
    order by table_name, column_name`
  const indexes = yield* sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes
    where schemaname = current_schema() and tablename like 'recur_%' order by indexname`
  return { columns, indexes }
})

/** Every Recur table dropped: the store as before Recur's first start. */
const empty = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ tablename: string }>`
    select tablename from pg_tables where schemaname = current_schema() and tablename like 'recur_%'`
  for (const { tablename } of tables) yield* sql.unsafe(`drop table if exists "${tablename}" cascade`)
})

describe("upgrades between versions", () => {
  for (const [name, layer] of storages) {
    it.layer(layer(), { timeout: 180_000 })(name, (it) => {
      it.effect(
        "step by step from every earlier version: each runs only what is new, to the same schema as all at once",
        () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const latest = yield* schemaOf
            expect(latest.columns.length).toBeGreaterThan(0)
            yield* empty
            for (let count = 1; count <= all.length; count++) {
              const ran = yield* upTo(count)
              // an upgrade by one version runs exactly that version's migration
              expect(ran.map(([id, n]) => `${String(id).padStart(4, "0")}_${n}`)).toEqual([all[count - 1]![0]])
              if (all[count - 1]![0] === "0008_processor_events") {
                // data of the version before 0009: a subscription carrying a discount
                yield* sql`insert into recur_subscriptions
                  (id, merchant_id, created_at, data, status, customer_id, billing_cycle_unit, price_id)
                  values ('sub_old', 'mch_old', now(), ${JSON.stringify({
                    subscription: { customer_id: "cus_old", created_at: 1_700_000_000_000 },
                    discounts: [{ discount_id: "dsc_old" }]
                  })}::jsonb, 'active', 'cus_old', 'month', 'pri_old')`
              }
            }
            expect(yield* schemaOf).toEqual(latest)
            // the data written under 0008 was carried into 0009's table
            const redemptions = yield* sql<{ discount_id: string; subscription_id: string }>`
              select discount_id, subscription_id from recur_discount_redemptions where merchant_id = 'mch_old'`
            expect(redemptions).toEqual([{ discount_id: "dsc_old", subscription_id: "sub_old" }])
            const recorded = yield* sql<{ migration_id: number }>`
              select migration_id from recur_migrations order by migration_id`
            expect(recorded.map((r) => Number(r.migration_id))).toEqual(ids)
          })
      )

      it.effect("idempotent: run again, nothing runs; each migration's statements run twice change nothing", () =>
        Effect.gen(function* () {
          const before = yield* schemaOf
          expect(yield* Migrations.run).toEqual([])
          for (const [, migration] of all) yield* migration
          expect(yield* schemaOf).toEqual(before)
        })
      )

      it.effect(
        "forward only: an older Recur on a newer store refuses to start, runs nothing and changes nothing",
        () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const before = yield* schemaOf
            // a later version's migration, recorded as it would be
            yield* sql`insert into recur_migrations (migration_id, name, created_at)
            values (${later}, 'from_a_later_version', now())`
            const refused = yield* Effect.flip(Migrations.run)
            expect(refused).toBeInstanceOf(Migrations.SchemaNewerThanCode)
            expect(refused).toMatchObject({
              applied: `${String(later).padStart(4, "0")}_from_a_later_version`,
              known: all[all.length - 1]![0]
            })
            expect(refused.message).toContain("Nothing was changed")
            // an older set of migrations alone (Effect's migrator) runs nothing either
            expect(yield* upTo(3)).toEqual([])
            expect(yield* schemaOf).toEqual(before)
            yield* sql`delete from recur_migrations where migration_id = ${later}`
          })
      )
    })
  }
})
