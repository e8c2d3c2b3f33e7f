/**
 * What a state machine is: its transitions, the webhook events they emit (re-exported by
 * `Lifecycle`, which runs them).
 */
import { Schema } from "effect"

/**
 * Every webhook event type Recur emits (the original platform's names).
 *
 * @since 0.1.0
 */
export const EventType = Schema.Literals([
  "v2.subscription.first",
  "v2.subscription.trial_period_expiring",
  "v2.subscription.canceled",
  "v2.subscription.price_changed",
  "v2.subscription.paused",
  "v2.subscription.resumed",
  "v2.subscription.past_due",
  "v2.subscription.unpaid",
  "v2.subscription.cancellation_requested",
  "v2.subscription.cancellation_revoked",
  "v2.subscription.payment_method_updated",
  "v2.subscription.migrated",
  "v2.subscription.items_updated",
  "v2.invoice.paid",
  "v2.invoice.payment_failed",
  "v2.invoice.refunded",
  "v2.invoice.voided",
  "v2.invoice.payment_action_required",
  "v2.invoice.sent",
  "v2.invoice.overdue",
  "v2.invoice.finalized",
  "v2.invoice.marked_uncollectible",
  "v2.trades.created",
  "v2.trades.succeeded",
  "v2.trades.payment_failed",
  "v2.trades.processor_unavailable",
  "v2.trades.disputed",
  "v2.trades.dispute_closed",
  "v2.trades.dispute_updated",
  "v2.refunds.succeeded",
  "v2.refunds.failed",
  "v2.discount.created",
  "v2.discount.redeemed",
  "v2.discount.ended",
  "v2.tax_rate.created",
  "v2.tax_rate.archived",
  "v2.entitlements.updated",
  "v2.subscription_schedule.phase_started",
  "v2.subscription_schedule.completed",
  "v2.subscription_schedule.released",
  "v2.subscription_schedule.canceled",
  "v2.customer.balance_updated",
  "v2.credit_note.created",
  "v2.billable_metric.created",
  "v2.billable_metric.updated",
  "v2.billable_metric.archived",
  "v2.credit_grant.created",
  "v2.credit_grant.depleted",
  "v2.credit_grant.expired",
  "v2.credit_grant.voided",
  "v2.customer.auto_top_up_failed",
  "v2.usage_adjustment.created",
  "v2.usage_adjustment.applied",
  "v2.usage_alert.triggered",
  "v2.usage_alert.resolved"
])

/**
 * @since 0.1.0
 */
export type EventType = typeof EventType.Type

/**
 * One row of a machine.
 *
 * @since 0.1.0
 */
export interface Transition<S extends string, T extends string> {
  readonly from: ReadonlyArray<S>
  readonly trigger: T
  /** The state entered; `undefined` keeps the current state (a self-transition). */
  readonly to?: S
  readonly events: ReadonlyArray<EventType>
  readonly description: string
}

/**
 * A state machine: its states, the state an object is born in, and its transitions.
 *
 * @since 0.1.0
 */
export interface Machine<S extends string, T extends string> {
  readonly name: string
  readonly field: string
  readonly states: ReadonlyArray<S>
  readonly initial: S
  /** Events emitted when an object is created in its initial state. */
  readonly createEvents: ReadonlyArray<EventType>
  readonly terminal: ReadonlyArray<S>
  readonly transitions: ReadonlyArray<Transition<S, T>>
}
