/**
 * The merchant and its API keys as stored (re-exported by `Entities`).
 */
import { Schema } from "effect"
import { ApiKeyStatus } from "../kernel/Lifecycle.js"
import * as Merchant from "./Merchant.js"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/** @since 0.1.0 */
export const merchant: Store.Entity<Merchant.Merchant, typeof Merchant.Merchant.Encoded> = Store.entity({
  name: "merchant",
  table: "recur_merchants",
  schema: Merchant.Merchant,
  id: "merchant_id",
  createdAt: (m) => ms(m.created_at),
  columns: { mode: "mode" }
})

/**
 * A stored API key: never the key itself. `lookup_hash` is the SHA-256 of the key (for
 * authentication), `ciphertext` its AES-256-GCM encryption under the master key (webhook
 * signing needs the raw key).
 *
 * @since 0.1.0
 */
export const ApiKeyRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  lookup_hash: Schema.String,
  ciphertext: Schema.String,
  last4: Schema.String,
  mode: Schema.Literals(["sandbox", "live"]),
  status: ApiKeyStatus,
  /** Set when rotated: the key is refused from this instant on. */
  expires_at: Schema.NullOr(Schema.Number),
  replaced_by: Schema.NullOr(Schema.String),
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** @since 0.1.0 */
export const apiKey: Store.Entity<ApiKeyRecord, typeof ApiKeyRecord.Encoded> = Store.entity({
  name: "api_key",
  table: "recur_api_keys",
  schema: ApiKeyRecord,
  id: "id",
  createdAt: "created_at",
  columns: { lookup_hash: "lookup_hash", status: "status" },
  unique: [{ name: "api_key_lookup_hash", columns: ["lookup_hash"] }]
})
