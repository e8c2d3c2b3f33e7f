/**
 * The notification's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * A message's `status`: `pending` until the notifier took it (`sent`), or `skipped` when it could
 * not or need not be sent (no address, notifications turned off since).
 *
 * @since 0.1.0
 */
export const NotificationStatus = Schema.Literals(["pending", "sent", "skipped"])
/** @since 0.1.0 */
export type NotificationStatus = typeof NotificationStatus.Type

/**
 * The notification machine.
 *
 * @since 0.1.0
 */
export const notification: Machine<NotificationStatus, "sent" | "skip"> = {
  name: "Notification",
  field: "status",
  states: NotificationStatus.literals,
  initial: "pending",
  createEvents: [],
  terminal: ["sent", "skipped"],
  transitions: [
    {
      from: ["pending"],
      trigger: "sent",
      to: "sent",
      events: [],
      description: "the notifier took the message (a failed attempt keeps it pending, retried by the worker)"
    },
    {
      from: ["pending"],
      trigger: "skip",
      to: "skipped",
      events: [],
      description: "the customer has no address, or the merchant turned the message off since"
    }
  ]
}
