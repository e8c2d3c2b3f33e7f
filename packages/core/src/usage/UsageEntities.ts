/**
 * Usage events as stored (re-exported by `Entities`).
 */
import { Schema } from "effect"
import * as Store from "../kernel/Store.js"
import * as Usage from "./Usage.js"
import { ms } from "../kernel/internal/entities.js"

/** @since 0.1.0 */
export const UsageRecordRow = Schema.Struct({
  merchant_id: Schema.String,
  usage: Usage.UsageRecord,
  trial: Schema.Boolean
})
/** @since 0.1.0 */
export type UsageRecordRow = typeof UsageRecordRow.Type

/** @since 0.1.0 */
export const usageRecord: Store.Entity<UsageRecordRow, typeof UsageRecordRow.Encoded> = Store.entity({
  name: "usage_record",
  table: "recur_usage_records",
  schema: UsageRecordRow,
  id: (u) => u.usage.id,
  createdAt: (u) => ms(u.usage.created_at),
  columns: {
    subscription_id: (u) => u.usage.subscription_id,
    event_id: (u) => u.usage.event_id,
    cycle_index: (u) => u.usage.cycle_index
  },
  unique: [{ name: "usage_event", columns: ["subscription_id", "event_id"] }]
})
