/**
 * What PostgreSQL's autovacuum does, for embedded PGlite, which has none.
 *
 * PGlite is a single-user PostgreSQL without background workers: no table is ever vacuumed or
 * analyzed unless someone asks. Dead row versions pile up (every subscription, trade and work
 * item update leaves one), and with no statistics the prepared batch updates (`updateMany`)
 * settle on plans that scan their whole table. Measured on the 100,000-operation model run, the
 * cost of 2,500 operations grew from 28 s to 50 s by operation 10,000 and kept growing; one
 * `VACUUM ANALYZE` brought it back to 32 s (docs/reliability.md).
 *
 * `layer` runs `run` on a real-time schedule, with autovacuum's default thresholds: a table is
 * vacuumed when its dead rows exceed 50 + 20 % of its live rows, and analyzed when the rows
 * changed since its last analysis exceed 50 + 10 %. On a PostgreSQL server, autovacuum does
 * this already; `Pg.layerPglite` includes the layer.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/**
 * What one pass did to one table.
 *
 * @since 0.1.0
 */
export interface TableMaintenance {
  readonly table: string
  readonly vacuumed: boolean
  readonly analyzed: boolean
}

/**
 * One pass: vacuums and analyzes the tables of the current schema that passed autovacuum's
 * thresholds, and says which. Runs outside any transaction (VACUUM cannot run inside one).
 *
 * @since 0.1.0
 */
export const run: Effect.Effect<ReadonlyArray<TableMaintenance>, SqlError, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    // this session's own counts reach the shared statistics at its next idle moment (PG 15+)
    yield* sql`select pg_stat_force_next_flush()`.pipe(Effect.ignore)
    const due = yield* sql<{ table: string; vacuum: boolean; analyze: boolean }>`
      select relname as table,
        n_dead_tup > 50 + 0.2 * n_live_tup as vacuum,
        n_mod_since_analyze > 50 + 0.1 * n_live_tup as analyze
      from pg_stat_user_tables
      where schemaname = current_schema()
        and (n_dead_tup > 50 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup)
      order by relname`
    return yield* Effect.forEach(due, (t) =>
      (t.vacuum ? sql`vacuum (analyze) ${sql(t.table)}` : sql`analyze ${sql(t.table)}`).pipe(
        Effect.as({ table: t.table, vacuumed: t.vacuum, analyzed: true })
      )
    )
  }
)

/**
 * How often the maintenance pass runs.
 *
 * @since 0.1.0
 */
export interface MaintenanceOptions {
  /** Time between passes, on the real clock whatever clock the program runs on; default 30 s. */
  readonly every?: Duration.Input
}

/**
 * Runs `run` in the background for as long as the layer lives, every `every` of real time
 * (a program under `TestClock` still gets its database maintained). A failed pass is logged and
 * the next one runs on schedule: maintenance never stops the engine.
 *
 * @since 0.1.0
 */
export const layer = (options: MaintenanceOptions = {}): Layer.Layer<never, never, SqlClient.SqlClient> => {
  const every = Duration.fromInputUnsafe(options.every ?? Duration.seconds(30))
  return Layer.effectDiscard(
    Effect.forkScoped(
      run.pipe(
        Effect.tap((done) =>
          done.length > 0 ? Effect.logDebug("recur: PGlite maintenance", { tables: done }) : Effect.void
        ),
        Effect.catchCause((cause) => Effect.logWarning("recur: PGlite maintenance failed", cause)),
        Effect.repeat(Schedule.spaced(every)),
        Effect.delay(every),
        Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
      )
    )
  )
}
