/**
 * The usage adjustment's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Usage adjustment `status`: `pending` (the merchant reviews adjustments, `usage_adjustments:
 * "review"`: nothing issued yet, revised by later re-ratings of its period) or `applied` (its
 * extra invoice or credit note issued, or its draft re-priced).
 *
 * @since 0.1.0
 */
export const UsageAdjustmentStatus = Schema.Literals(["pending", "applied"])
/** @since 0.1.0 */
export type UsageAdjustmentStatus = typeof UsageAdjustmentStatus.Type

/**
 * The usage adjustment machine.
 *
 * @since 0.1.0
 */
export const usageAdjustment: Machine<UsageAdjustmentStatus, "revise" | "apply"> = {
  name: "UsageAdjustment",
  field: "status",
  states: UsageAdjustmentStatus.literals,
  initial: "pending",
  createEvents: ["v2.usage_adjustment.created"],
  terminal: ["applied"],
  transitions: [
    {
      from: ["pending"],
      trigger: "revise",
      events: [],
      description: "a later late event or correction of its period re-rated it again, before it was applied"
    },
    {
      from: ["pending"],
      trigger: "apply",
      to: "applied",
      events: ["v2.usage_adjustment.applied"],
      description:
        "applied: its extra invoice or credit note issued (by the merchant under review; at once, born applied, when adjustments are automatic)"
    }
  ]
}
