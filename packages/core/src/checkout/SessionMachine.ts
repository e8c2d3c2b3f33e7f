/**
 * The checkout session's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Checkout session `status`.
 *
 * @since 0.1.0
 */
export const SessionStatus = Schema.Literals(["open", "complete", "expired"])
/** @since 0.1.0 */
export type SessionStatus = typeof SessionStatus.Type

/**
 * The checkout session machine.
 *
 * @since 0.1.0
 */
export const checkoutSession: Machine<SessionStatus, "paid" | "expire"> = {
  name: "CheckoutSession",
  field: "status",
  states: SessionStatus.literals,
  initial: "open",
  createEvents: [],
  terminal: ["complete", "expired"],
  transitions: [
    {
      from: ["open"],
      trigger: "paid",
      to: "complete",
      events: [],
      description: "its payment succeeded (a session is paid at most once)"
    },
    {
      from: ["open"],
      trigger: "expire",
      to: "expired",
      events: [],
      description: "24 hours passed unpaid (seen on the next read; the worker ends a started payment then)"
    }
  ]
}
