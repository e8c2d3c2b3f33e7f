/**
 * The billable metric's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Billable metric `status`: an `active` metric may be referenced by new usage prices; an
 * `archived` one never again (prices that already reference it keep billing it).
 *
 * @since 0.1.0
 */
export const BillableMetricStatus = Schema.Literals(["active", "archived"])
/** @since 0.1.0 */
export type BillableMetricStatus = typeof BillableMetricStatus.Type

/**
 * The billable metric machine.
 *
 * @since 0.1.0
 */
export const billableMetric: Machine<BillableMetricStatus, "update" | "archive"> = {
  name: "BillableMetric",
  field: "status",
  states: BillableMetricStatus.literals,
  initial: "active",
  createEvents: ["v2.billable_metric.created"],
  terminal: ["archived"],
  transitions: [
    {
      from: ["active"],
      trigger: "update",
      events: ["v2.billable_metric.updated"],
      description: "its name, description, filters or late window changed by the merchant"
    },
    {
      from: ["active"],
      trigger: "archive",
      to: "archived",
      events: ["v2.billable_metric.archived"],
      description: "archived by the merchant: no new price references it; prices that do keep billing it"
    }
  ]
}
