/**
 * Storage on PostgreSQL through `@effect/sql-pg`, and on embedded PGlite through PGlite's
 * node-postgres adapter: the same client, repositories and migrations for both.
 *
 * @since 0.1.0
 */
import { PGlite } from "@electric-sql/pglite"
import { createPgConfig } from "@electric-sql/pglite/node-postgres"
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "effect/sql/SqlClient"
import { SqlError } from "effect/sql/SqlError"
import type { Store } from "@recur/core"
import { Config, type ConfigError, Effect, Layer } from "effect"
import pg from "pg"
import * as Migrations from "./Migrations.js"
import * as SqlStorage from "./SqlStorage.js"

// node-postgres returns int8 as text; keep it text (money is parsed explicitly, never a lossy number).
const types = { getTypeParser: (oid: number, format?: any) => pg.types.getTypeParser(oid, format) }

/**
 * A `SqlClient` for a PostgreSQL URL.
 *
 * @since 0.1.0
 */
export const clientPg = (options: PgOptions) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (options.schema !== undefined) await createSchema(options.url, options.schema)
          return new pg.Pool({
            connectionString: options.url,
            max: options.maxConnections ?? 10,
            ...(options.schema !== undefined ? { options: `-c search_path=${quoteIdent(options.schema)}` } : {})
          })
        },
        catch: (cause) => new SqlError({ cause, message: `Cannot prepare PostgreSQL schema ${options.schema ?? ""}` })
      }),
      (pool) => Effect.promise(() => pool.end())
    ),
    types
  })

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

const createSchema = async (url: string, schema: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`create schema if not exists ${quoteIdent(schema)}`)
  } finally {
    await client.end()
  }
}

/**
 * A fresh schema name for a test or benchmark run, so runs on a shared database never see
 * each other's rows.
 *
 * @since 0.1.0
 */
export const freshSchemaName = (prefix = "recur_test"): string =>
  `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`

/**
 * Storage on PostgreSQL at `url`, migrated at start.
 *
 * @since 0.1.0
 */
export const layerPgUrl = (options: PgOptions): Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError> =>
  Layer.provideMerge(Layer.effectDiscard(Effect.orDie(Migrations.run)).pipe(Layer.provideMerge(SqlStorage.layer)), clientPg(options))

/**
 * Storage on a fresh schema of the PostgreSQL at `url`, migrated at start and dropped when the
 * layer is released: tests on a shared database (CI's, a developer's) leave nothing behind.
 *
 * @example
 * layer(Pg.layerPgScratch({ url: process.env.RECUR_TEST_DATABASE_URL! }))("my tests", (it) => { ... })
 * @since 0.1.0
 */
export const layerPgScratch = (options: { readonly url: string; readonly prefix?: string }): Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError> => {
  const schema = freshSchemaName(options.prefix)
  const dropOnRelease = Layer.effectDiscard(
    Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.addFinalizer(() => sql`drop schema if exists ${sql(schema)} cascade`.pipe(Effect.ignore)))
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
export const layerPg: Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError | ConfigError.ConfigError> = Layer.unwrap(
  Effect.map(
    Config.all({ url: Config.string("DATABASE_URL"), schema: Config.option(Config.string("RECUR_DATABASE_SCHEMA")) }),
    ({ schema, url }) => layerPgUrl({ url, ...(schema._tag === "Some" ? { schema: schema.value } : {}) })
  )
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
}

/**
 * Opens PGlite, durable when on disk: `fsync` and synchronous commits on, so a change
 * acknowledged before a crash (`kill -9`) is there after reopening.
 *
 * @since 0.1.0
 */
export const openPglite = (options: PgliteOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const db = new PGlite({
        ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
        ...(options.loadDataDir !== undefined ? { loadDataDir: options.loadDataDir } : {}),
        relaxedDurability: false,
        postgresqlconf: ["fsync = on", "synchronous_commit = on", "full_page_writes = on"]
      })
      await db.waitReady
      return db
    }),
    (db) => Effect.promise(() => db.close().catch(() => undefined))
  )

/**
 * A `SqlClient` on an open PGlite (a pool of one connection: PGlite is a single session).
 *
 * @since 0.1.0
 */
export const clientPglite = (db: PGlite) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ ...createPgConfig(db), max: 1 } as unknown as pg.PoolConfig)),
      (pool) => Effect.promise(() => pool.end())
    ),
    types
  })

/**
 * Storage on embedded PGlite (in memory, or durable in `dataDir`), migrated at start.
 *
 * @since 0.1.0
 */
export const layerPglite = (options: PgliteOptions = {}): Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError> =>
  Layer.unwrap(
    Effect.map(openPglite(options), (db) =>
      Layer.provideMerge(Layer.effectDiscard(Effect.orDie(Migrations.run)).pipe(Layer.provideMerge(SqlStorage.layer)), clientPglite(db))
    )
  )
