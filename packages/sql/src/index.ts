/**
 * @recur/sql — Recur's storage on PostgreSQL and embedded PGlite.
 *
 * @since 0.1.0
 */
export * as DataDirLock from "./DataDirLock.js"
export * as Maintenance from "./Maintenance.js"
export * as MasterKey from "./MasterKey.js"
export * as Migrations from "./Migrations.js"
export * as Pg from "./Pg.js"
export * as PoolGauges from "./PoolGauges.js"
export * as SqlStorage from "./SqlStorage.js"
