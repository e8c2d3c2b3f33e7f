/**
 * Storage on PostgreSQL through `@effect/sql-pg`, and on embedded PGlite through PGlite's
 * node-postgres adapter: the same client, repositories and migrations for both.
 *
 * @since 0.1.0
 */
import { PGlite } from "@electric-sql/pglite"
import { createPgConfig } from "@electric-sql/pglite/node-postgres"
import { PgClient } from "@effect/sql-pg"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
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
export const clientPg = (options: { readonly url: string; readonly maxConnections?: number }) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 10 })),
      (pool) => Effect.promise(() => pool.end())
    ),
    types
  })

/**
 * Storage on PostgreSQL at `url`, migrated at start.
 *
 * @since 0.1.0
 */
export const layerPgUrl = (options: { readonly url: string; readonly maxConnections?: number }): Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError> =>
  Layer.provideMerge(Layer.effectDiscard(Effect.orDie(Migrations.run)).pipe(Layer.provideMerge(SqlStorage.layer)), clientPg(options))

/**
 * Storage on PostgreSQL from the `DATABASE_URL` config, migrated at start.
 *
 * @since 0.1.0
 */
export const layerPg: Layer.Layer<Store.Storage | SqlClient.SqlClient, SqlError | ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(Config.string("DATABASE_URL"), (url) => layerPgUrl({ url }))
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
  Layer.unwrapScoped(
    Effect.map(openPglite(options), (db) =>
      Layer.provideMerge(Layer.effectDiscard(Effect.orDie(Migrations.run)).pipe(Layer.provideMerge(SqlStorage.layer)), clientPglite(db))
    )
  )
