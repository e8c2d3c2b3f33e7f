/**
 * The merchant and its API keys as stored (re-exported by `Entities`).
 */
import { Schema } from "effect"
import { ApiKeyStatus } from "../kernel/Lifecycle.js"
import * as Merchant from "./Merchant.js"
import type * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/** @since 0.1.0 */
export const merchant: Store.Entity<Merchant.Merchant, typeof Merchant.Merchant.Encoded> = {
  name: "merchant",
  table: "recur_merchants",
  schema: Merchant.Merchant,
  id: (m) => m.merchant_id,
  merchantId: (m) => m.merchant_id,
  createdAt: (m) => ms(m.created_at),
  columns: { mode: (m) => m.mode },
  unique: []
}

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
export const apiKey: Store.Entity<ApiKeyRecord, typeof ApiKeyRecord.Encoded> = {
  name: "api_key",
  table: "recur_api_keys",
  schema: ApiKeyRecord,
  id: (k) => k.id,
  merchantId: (k) => k.merchant_id,
  createdAt: (k) => k.created_at,
  columns: { lookup_hash: (k) => k.lookup_hash, status: (k) => k.status },
  unique: [{ name: "api_key_lookup_hash", columns: ["lookup_hash"] }]
}
