/**
 * The subscription schedule's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Schedule `status`: `not_started` until its first phase's cycle is billed, `active` while a
 * phase governs the subscription, then `completed` (the last phase ended and the subscription
 * canceled, `end_behavior: cancel`), `released` (the last phase ended and the subscription
 * keeps it, `end_behavior: release`, or released by the merchant) or `canceled` (by the merchant).
 *
 * @since 0.1.0
 */
export const ScheduleStatus = Schema.Literals(["not_started", "active", "completed", "released", "canceled"])
/** @since 0.1.0 */
export type ScheduleStatus = typeof ScheduleStatus.Type

/**
 * What moves a schedule.
 *
 * @since 0.1.0
 */
export type ScheduleTrigger = "start" | "next_phase" | "end_release" | "end_cancel" | "release" | "cancel"

/**
 * The subscription schedule machine.
 *
 * @since 0.1.0
 */
export const schedule: Machine<ScheduleStatus, ScheduleTrigger> = {
  name: "SubscriptionSchedule",
  field: "status",
  states: ScheduleStatus.literals,
  initial: "not_started",
  createEvents: [],
  terminal: ["completed", "released", "canceled"],
  transitions: [
    {
      from: ["not_started"],
      trigger: "start",
      to: "active",
      events: ["v2.subscription_schedule.phase_started"],
      description:
        "its first phase starts: created on the current period, or the renewal that bills the first phase's cycle"
    },
    {
      from: ["active"],
      trigger: "next_phase",
      events: ["v2.subscription_schedule.phase_started"],
      description:
        "the renewal that bills a phase's first cycle: that cycle's invoice bills the phase's items (prices and quantities)"
    },
    {
      from: ["active"],
      trigger: "end_release",
      to: "released",
      events: ["v2.subscription_schedule.released"],
      description: "the last phase ended with `end_behavior: release`: the subscription keeps the last phase"
    },
    {
      from: ["active"],
      trigger: "end_cancel",
      to: "completed",
      events: ["v2.subscription_schedule.completed"],
      description: "the last phase ended with `end_behavior: cancel`: the subscription is canceled at that renewal"
    },
    {
      from: ["not_started", "active"],
      trigger: "release",
      to: "released",
      events: ["v2.subscription_schedule.released"],
      description:
        "released by the merchant: the subscription keeps its current price and quantity, no later phase starts"
    },
    {
      from: ["not_started", "active"],
      trigger: "cancel",
      to: "canceled",
      events: ["v2.subscription_schedule.canceled"],
      description: "canceled by the merchant: no later phase starts and the subscription cancels at its period's end"
    }
  ]
}
