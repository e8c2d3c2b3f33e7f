/**
 * Catalog migrations and their lines as stored (re-exported by `Entities`).
 */
import { Schema } from "effect"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"
import * as PriceMigration from "./PriceMigration.js"

/** @since 0.1.0 */
export const priceMigration: Store.Entity<PriceMigration.PriceMigration, typeof PriceMigration.PriceMigration.Encoded> =
  Store.entity({
    name: "price_migration",
    table: "recur_price_migrations",
    schema: PriceMigration.PriceMigration,
    id: "migration_id",
    createdAt: (m) => ms(m.created_at),
    columns: { price_id: "price_id", status: "status" }
  })

/**
 * A stored line: the line as answered, and the version of its subscription's record the preview
 * read (a subscription written since then is skipped as `changed_since_preview`).
 *
 * @since 0.1.0
 */
export const PriceMigrationLineRecord = Schema.Struct({
  merchant_id: Schema.String,
  subscription_version: Schema.Number,
  line: PriceMigration.PriceMigrationLine
})
/** @since 0.1.0 */
export type PriceMigrationLineRecord = typeof PriceMigrationLineRecord.Type

/** @since 0.1.0 */
export const priceMigrationLine: Store.Entity<PriceMigrationLineRecord, typeof PriceMigrationLineRecord.Encoded> =
  Store.entity({
    name: "price_migration_line",
    table: "recur_price_migration_lines",
    schema: PriceMigrationLineRecord,
    id: (r) => r.line.line_id,
    createdAt: (r) => ms(r.line.created_at),
    columns: { migration_id: (r) => r.line.migration_id, outcome: (r) => r.line.outcome }
  })
