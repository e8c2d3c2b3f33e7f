/**
 * Billable metrics as stored (re-exported by `Entities`).
 */
import * as BillableMetric from "./BillableMetric.js"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/**
 * A billable metric, stored as the API shows it; `code` is unique per merchant (archived
 * metrics keep theirs: a code is never reused, so an event's code always names one metric).
 *
 * @since 0.1.0
 */
export const billableMetric: Store.Entity<BillableMetric.BillableMetric, typeof BillableMetric.BillableMetric.Encoded> =
  Store.entity({
    name: "billable_metric",
    table: "recur_billable_metrics",
    schema: BillableMetric.BillableMetric,
    id: "billable_metric_id",
    createdAt: (m) => ms(m.created_at),
    columns: { status: "status", code: "code" },
    unique: [{ name: "billable_metric_code", columns: ["code"] }]
  })
