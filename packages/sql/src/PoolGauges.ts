/**
 * The database connections of this process as Prometheus gauges, read at each scrape:
 *
 * - `recur_db_pool_connections{storage,state}`: connections by state. PostgreSQL: this process's
 *   pools' sessions as the server sees them (`pg_stat_activity`, found by the
 *   `application_name` each pool gives its connections: `active`, `idle`, `idle_in_transaction`;
 *   the scrape's own query is one `active`). PGlite: its one session, `active` while a message
 *   runs, `idle` otherwise.
 * - `recur_db_pool_max{storage}`: the most connections the pools may open.
 * - `recur_db_pool_waiting{storage}` (PGlite): wire-protocol messages queued behind the one
 *   running — PGlite runs one at a time, so this is its backlog.
 *
 * - `recur_db_pglite_busy_seconds` (PGlite): seconds spent running queries since start.
 *   PGlite runs a query synchronously on the event loop, so a scrape never sees it `active` (the
 *   scrape waits for it): its saturation shows as this total's rate (`rate(…[1m])` near 1: the
 *   database is the bottleneck).
 *
 * `@effect/sql-pg` keeps its pool's internals (fibers waiting for a connection) to itself: those
 * are not counted. PostgreSQL has no `waiting` gauge (connections all `active` at `max` is the
 * sign of waiting), and PGlite's counts messages at the database, behind its one pool connection,
 * so it is 0 unless something else (a second client of the same PGlite) queues there too.
 *
 * @since 0.1.0
 */
import { Effect, Metric } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"

/**
 * One PGlite's message queue.
 *
 * @since 0.1.0
 */
export interface PgliteQueue {
  /** Messages waiting for the database. */
  waiting: number
  /** Messages the database is running (0 or 1). */
  running: number
  /** Milliseconds spent running messages, in total. */
  busyMs: number
}

const pglites = new Set<PgliteQueue>()
const pgPools = new Map<string, number>()

/**
 * A PGlite's queue, counted until `release` is called (when the database closes).
 *
 * @since 0.1.0
 */
export const trackPglite = (): { readonly queue: PgliteQueue; readonly release: () => void } => {
  const queue: PgliteQueue = { waiting: 0, running: 0, busyMs: 0 }
  pglites.add(queue)
  return { queue, release: () => pglites.delete(queue) }
}

/**
 * Runs `task` through a PGlite queue's counters.
 *
 * @since 0.1.0
 */
export const counted = <A>(
  queue: PgliteQueue,
  enqueue: (run: () => Promise<A>) => Promise<A>,
  task: () => Promise<A>
) => {
  queue.waiting++
  return enqueue(() => {
    queue.waiting--
    queue.running++
    // a measurement, not business time: PGlite's own duration, outside any Effect fiber
    const started = performance.now()
    return task().finally(() => {
      queue.running--
      queue.busyMs += performance.now() - started
    })
  })
}

/**
 * A PostgreSQL pool of this process: its connections' `application_name` (unique to the pool)
 * and its size, counted until `release`.
 *
 * @since 0.1.0
 */
export const trackPgPool = (
  maxConnections: number
): { readonly applicationName: string; readonly release: () => void } => {
  const applicationName = `recur-${process.pid}-${Math.random().toString(36).slice(2, 10)}`
  pgPools.set(applicationName, maxConnections)
  return { applicationName, release: () => pgPools.delete(applicationName) }
}

const connections = Metric.gauge("recur_db_pool_connections", {
  description:
    "Database connections of this process by state (active, idle, idle_in_transaction); storage=postgres from pg_stat_activity, storage=pglite its one session"
})
const max = Metric.gauge("recur_db_pool_max", {
  description: "The most database connections this process's pools may open"
})
const waiting = Metric.gauge("recur_db_pool_waiting", {
  description: "PGlite: wire-protocol messages queued behind the one running (PGlite runs one at a time)"
})

const busy = Metric.gauge("recur_db_pglite_busy_seconds", {
  description:
    "PGlite: seconds spent running queries since start (a running total; its rate is the share of time the database was busy)"
})

const STATES = ["active", "idle", "idle_in_transaction"] as const

const set = (storage: string, counts: Record<(typeof STATES)[number], number>, size: number) =>
  Effect.all(
    [
      ...STATES.map((state) => Metric.update(Metric.withAttributes(connections, { storage, state }), counts[state])),
      Metric.update(Metric.withAttributes(max, { storage }), size)
    ],
    { discard: true }
  )

/**
 * Updates the gauges from this process's pools: the PostgreSQL ones through `sql` (one query on
 * `pg_stat_activity`), the PGlite ones from their counters. A read that fails is logged and the
 * gauges keep their last values.
 *
 * @since 0.1.0
 */
export const update = (sql: SqlClient.SqlClient): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (pglites.size > 0) {
      let running = 0
      let queued = 0
      let busyMs = 0
      for (const q of pglites) {
        running += Math.min(1, q.running)
        queued += q.waiting
        busyMs += q.busyMs
      }
      yield* Metric.update(busy, busyMs / 1000)
      yield* set("pglite", { active: running, idle: pglites.size - running, idle_in_transaction: 0 }, pglites.size)
      yield* Metric.update(Metric.withAttributes(waiting, { storage: "pglite" }), queued)
    }
    if (pgPools.size > 0) {
      const names = [...pgPools.keys()]
      const rows = yield* sql<{ state: string | null; n: number }>`
        select state, count(*)::int as n from pg_stat_activity
        where application_name in ${sql.in(names)} group by state`
      const counts = { active: 0, idle: 0, idle_in_transaction: 0 }
      for (const r of rows) {
        const state = (r.state ?? "").replace(/ /g, "_")
        if (state === "active" || state === "idle") counts[state] += r.n
        else if (state.startsWith("idle_in_transaction")) counts.idle_in_transaction += r.n
      }
      yield* set(
        "postgres",
        counts,
        [...pgPools.values()].reduce((a, b) => a + b, 0)
      )
    }
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("database pool gauges not read", cause)))
