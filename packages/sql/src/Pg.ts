/**
 * Storage on PostgreSQL through `@effect/sql-pg`, and on embedded PGlite through PGlite's
 * node-postgres adapter: the same client, repositories and migrations for both.
 *
 * @since 0.1.0
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketHandler } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import type { Store } from "@recur/core"
import { Clock, Config, Data, Effect, Layer, Redacted } from "effect"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { duplexPair, type Duplex } from "node:stream"
import * as DataDirLock from "./DataDirLock.js"
import * as Maintenance from "./Maintenance.js"
import * as Migrations from "./Migrations.js"
import * as PoolGauges from "./PoolGauges.js"
import * as SqlStorage from "./SqlStorage.js"

/**
 * The connection pool keeps real time whatever clock the program runs on: under a test clock
 * its idle timers would otherwise fire once per virtual minute when a test moves the clock
 * years ahead.
 */
const realClock = Layer.sync(Clock.Clock, () => Clock.Clock.defaultValue())

/**
 * A `SqlClient` for a PostgreSQL URL (`@effect/sql-pg`'s own wire-protocol client; `int8` comes
 * back as `bigint`). With `schema`, the schema is created when missing and is every
 * connection's `search_path`.
 *
 * @since 0.1.0
 */
export const clientPg = (options: PgOptions) =>
  PgClient.layerFrom(
    Effect.gen(function* () {
      const url = Redacted.make(options.url)
      if (options.schema !== undefined) {
        const schema = options.schema
        yield* Effect.scoped(
          Effect.flatMap(PgClient.makeClient({ url }), (admin) => admin`create schema if not exists ${admin(schema)}`)
        )
      }
      const maxConnections = options.maxConnections ?? 10
      // the pool's sessions carry a name of their own: the pool gauges find them in pg_stat_activity
      const tracked = yield* Effect.acquireRelease(
        Effect.sync(() => PoolGauges.trackPgPool(maxConnections)),
        (t) => Effect.sync(t.release)
      )
      return yield* PgClient.make({
        url,
        maxConnections,
        startupParameters: {
          application_name: tracked.applicationName,
          ...(options.schema !== undefined ? { search_path: quoteIdent(options.schema) } : {})
        }
      })
    })
  ).pipe(Layer.provide(realClock))

/**
 * Where Recur's tables live on PostgreSQL.
 *
 * @since 0.1.0
 */
export interface PgOptions {
  readonly url: string
  readonly maxConnections?: number
  /** A schema of its own (created when missing), e.g. one per tenant database or per test run. */
  readonly schema?: string
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`

/**
 * A fresh schema name for a test or benchmark run, so runs on a shared database never see
 * each other's rows.
 *
 * @since 0.1.0
 */
export const freshSchemaName = (prefix = "recur_test"): string =>
  `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`

/** The migrations at start: a store a newer Recur migrated is a typed failure, anything else a defect. */
const migrate = Effect.catch(Migrations.run, (e) =>
  e instanceof Migrations.SchemaNewerThanCode ? Effect.fail(e) : Effect.die(e)
)

/**
 * Storage on PostgreSQL at `url`, migrated at start.
 *
 * @since 0.1.0
 */
export const layerPgUrl = (
  options: PgOptions
): Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError | Migrations.SchemaNewerThanCode> =>
  Layer.provideMerge(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(SqlStorage.layer)), clientPg(options))

/**
 * Storage on a fresh schema of the PostgreSQL at `url`, migrated at start and dropped when the
 * layer is released: tests on a shared database (CI's, a developer's) leave nothing behind.
 *
 * @example
 * layer(Pg.layerPgScratch({ url: process.env.RECUR_TEST_DATABASE_URL! }))("my tests", (it) => { ... })
 * @since 0.1.0
 */
export const layerPgScratch = (options: {
  readonly url: string
  readonly prefix?: string
}): Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError | Migrations.SchemaNewerThanCode> => {
  const schema = freshSchemaName(options.prefix)
  const dropOnRelease = Layer.effectDiscard(
    SqlClient.SqlClient.use((sql) =>
      Effect.addFinalizer(() => sql`drop schema if exists ${sql(schema)} cascade`.pipe(Effect.ignore))
    )
  )
  // the finalizer is registered after the client is built, so it runs before the pool closes
  return Layer.provideMerge(dropOnRelease, layerPgUrl({ url: options.url, schema }))
}

/**
 * Storage on PostgreSQL from the `DATABASE_URL` config (and `RECUR_DATABASE_SCHEMA`, optional),
 * migrated at start.
 *
 * @since 0.1.0
 */
export const layerPg: Layer.Layer<
  Store.Storage | SqlClient.SqlClient,
  SqlError | Config.ConfigError | Migrations.SchemaNewerThanCode
> = Layer.unwrap(
  Effect.gen(function* () {
    const { schema, url } = yield* Config.all({
      url: Config.String("DATABASE_URL"),
      schema: Config.option(Config.String("RECUR_DATABASE_SCHEMA"))
    })
    return layerPgUrl({ url, ...(schema._tag === "Some" ? { schema: schema.value } : {}) })
  })
)

/**
 * Where PGlite keeps its data: a directory (durable, survives restarts) or `memory://`.
 *
 * @since 0.1.0
 */
export interface PgliteOptions {
  readonly dataDir?: string
  /** Restore from a `dumpDataDir` snapshot (fast test templates). */
  readonly loadDataDir?: Blob
  /**
   * The background vacuum and analyze PGlite lacks (`Maintenance`): every 30 s of real time by
   * default; `false` turns it off (a host that runs `Maintenance.run` itself).
   */
  readonly maintenance?: Maintenance.MaintenanceOptions | false
}

/**
 * The data directory holds files but no PostgreSQL data Recur can recognise (`PG_VERSION` is
 * missing): damaged, or some other program's. Recur never initialises a database over it.
 *
 * @since 0.1.0
 */
export class DataDirUnrecognised extends Data.TaggedError("DataDirUnrecognised")<{
  readonly dataDir: string
  readonly entries: ReadonlyArray<string>
}> {
  override get message() {
    return (
      `The data directory ${this.dataDir} is not empty (${this.entries.slice(0, 5).join(", ")}${this.entries.length > 5 ? ", …" : ""}) ` +
      `but holds no PostgreSQL data (PG_VERSION is missing): it is damaged, or not Recur's. Nothing was written to it. ` +
      `Restore the directory from a backup, or point RECUR_DATA_DIR (dataDir) at an empty or new directory.`
    )
  }
}

/**
 * The data directory cannot be opened (`DataDirLock.DataDirUnreadable`).
 *
 * @since 0.1.0
 */
export const DataDirUnreadable = DataDirLock.DataDirUnreadable
/**
 * @since 0.1.0
 */
export type DataDirUnreadable = DataDirLock.DataDirUnreadable

/** Files Recur itself writes beside the database: they do not make a directory PostgreSQL data. */
const OWN_FILES = new Set([DataDirLock.LOCK_FILE, "master.key", "master.key.next", "master.key.previous"])

/** Refuses a non-empty directory that is not a PostgreSQL data directory. */
const recognise = (dataDir: string) =>
  Effect.suspend(() => {
    const entries = existsSync(dataDir) ? readdirSync(dataDir).filter((e) => !OWN_FILES.has(e)) : []
    return entries.length > 0 && !existsSync(join(dataDir, "PG_VERSION"))
      ? Effect.fail(new DataDirUnrecognised({ dataDir, entries }))
      : Effect.void
  })

/**
 * Opens PGlite, durable when on disk: `fsync` and synchronous commits on, so a change
 * acknowledged before a crash (`kill -9`) is there after reopening. A data directory is held by
 * one process at a time (`DataDirLock`): a second opener fails with `DataDirLocked`, naming the
 * holder, instead of silently losing the first one's writes.
 *
 * @since 0.1.0
 */
const openPglite = (options: PgliteOptions = {}) =>
  Effect.gen(function* () {
    const onDisk = options.dataDir !== undefined && !options.dataDir.includes("://")
    if (onDisk) {
      yield* DataDirLock.acquire(options.dataDir!)
      yield* recognise(options.dataDir!)
    }
    return yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const db = new PGlite({
            ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
            ...(options.loadDataDir !== undefined ? { loadDataDir: options.loadDataDir } : {}),
            relaxedDurability: false,
            postgresqlconf: ["fsync = on", "synchronous_commit = on", "full_page_writes = on"]
          })
          await db.waitReady
          return db
        },
        catch: (cause) =>
          new DataDirLock.DataDirUnreadable({
            dataDir: options.dataDir ?? "memory://",
            reason: cause instanceof Error ? `${cause.name}: ${cause.message}` : JSON.stringify(cause)
          })
      }),
      (db) => Effect.promise(() => db.close().catch(() => undefined))
    )
  })

/**
 * One in-process wire-protocol connection to PGlite: a `Duplex` whose far end is served by
 * `@electric-sql/pglite-socket`'s handler, every message run exclusively on the database.
 */
const pgliteStream = (db: PGlite, queue: PoolGauges.PgliteQueue) => (): Duplex => {
  const [client, server] = duplexPair()
  // the handler tunes a TCP socket; an in-memory pair has nothing to tune
  Object.assign(server, { setNoDelay: () => server, remoteAddress: "pglite", remotePort: 0 })
  const queryQueue = {
    enqueue: (_handler: number, message: Uint8Array, onData: (data: Uint8Array) => void) =>
      PoolGauges.counted(
        queue,
        (run) => db.runExclusive(run),
        () => db.execProtocolRawStream(message, { onRawData: onData })
      ).then(() => 0),
    getQueueLength: () => 0,
    clearQueueForHandler: () => {},
    clearTransactionIfNeeded: async () => {
      if (db.isInTransaction()) await db.exec("ROLLBACK")
    }
  }
  const handler = new PGLiteSocketHandler({ queryQueue: queryQueue as never, closeOnDetach: true })
  void handler.attach(server as never)
  return client
}

/**
 * A `SqlClient` on an open PGlite, over an in-process wire-protocol stream (a pool of one
 * connection: PGlite is a single session).
 *
 * @since 0.1.0
 */
const clientPglite = (db: PGlite) =>
  PgClient.layerFrom(
    Effect.flatMap(
      Effect.acquireRelease(Effect.sync(PoolGauges.trackPglite), (t) => Effect.sync(t.release)),
      (tracked) =>
        PgClient.make({
          stream: pgliteStream(db, tracked.queue),
          database: "postgres",
          username: "postgres",
          maxConnections: 1,
          minConnections: 1
        })
    )
  ).pipe(Layer.provide(realClock))

/**
 * Storage on embedded PGlite (in memory, or durable in `dataDir`), migrated at start, and
 * vacuumed and analyzed in the background as autovacuum would (`Maintenance`).
 *
 * @since 0.1.0
 */
export const layerPglite = (
  options: PgliteOptions = {}
): Layer.Layer<
  Store.Storage | SqlClient.SqlClient,
  SqlError | DataDirLock.DataDirLocked | DataDirUnrecognised | DataDirUnreadable | Migrations.SchemaNewerThanCode
> =>
  Layer.unwrap(
    Effect.map(openPglite(options), (db) =>
      Layer.provideMerge(
        Layer.effectDiscard(migrate).pipe(
          Layer.provideMerge(SqlStorage.layer),
          // PGlite has no autovacuum: without it, long-lived embedded databases slow down
          Layer.provideMerge(options.maintenance === false ? Layer.empty : Maintenance.layer(options.maintenance))
        ),
        clientPglite(db)
      )
    )
  )
