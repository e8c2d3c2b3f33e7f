/**
 * The refund's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Refund `refund_status`.
 *
 * @since 0.1.0
 */
export const RefundStatus = Schema.Literals(["pending", "succeeded", "failed"])
/** @since 0.1.0 */
export type RefundStatus = typeof RefundStatus.Type

/**
 * The refund machine.
 *
 * @since 0.1.0
 */
export const refund: Machine<RefundStatus, "succeeded" | "failed"> = {
  name: "Refund",
  field: "refund_status",
  states: RefundStatus.literals,
  initial: "pending",
  createEvents: [],
  terminal: ["succeeded", "failed"],
  transitions: [
    {
      from: ["pending"],
      trigger: "succeeded",
      to: "succeeded",
      events: ["v2.refunds.succeeded"],
      description: "the gateway refunds the payment method"
    },
    {
      from: ["pending"],
      trigger: "failed",
      to: "failed",
      events: ["v2.refunds.failed"],
      description: "the gateway refuses the refund"
    }
  ]
}
