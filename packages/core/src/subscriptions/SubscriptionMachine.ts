/**
 * The subscription's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

const live = ["trial", "active", "past_due"] as const

/**
 * Subscription `status`.
 *
 * @since 0.1.0
 */
export const SubscriptionStatus = Schema.Literals([
  "init",
  "trial",
  "active",
  "canceled",
  "incomplete",
  "paused",
  "past_due",
  "unpaid"
])
/** @since 0.1.0 */
export type SubscriptionStatus = typeof SubscriptionStatus.Type

/** @since 0.1.0 */
export type SubscriptionTrigger =
  | "first_payment_succeeded_with_trial"
  | "first_payment_succeeded"
  | "first_payment_failed"
  | "incomplete_expired"
  | "trial_expiring_notice"
  | "renewal_succeeded"
  | "renewal_failed"
  | "retry_succeeded"
  | "retries_exhausted"
  | "retries_exhausted_cancel"
  | "pause"
  | "resume"
  | "cancel"
  | "request_cancel_at_period_end"
  | "revoke_cancel"
  | "change_price"
  | "migrate"
  | "update_items"
  | "update_payment_method"
  | "term_completed"
  | "latest_invoice_closed"

/**
 * The subscription machine (the contract's table).
 *
 * @since 0.1.0
 */
export const subscription: Machine<SubscriptionStatus, SubscriptionTrigger> = {
  name: "Subscription",
  field: "status",
  states: SubscriptionStatus.literals,
  initial: "init",
  createEvents: [],
  terminal: ["canceled"],
  transitions: [
    {
      from: ["init", "incomplete"],
      trigger: "first_payment_succeeded_with_trial",
      to: "trial",
      events: ["v2.subscription.first"],
      description: "first payment succeeds and the price has a trial"
    },
    {
      from: ["init", "incomplete"],
      trigger: "first_payment_succeeded",
      to: "active",
      events: ["v2.subscription.first"],
      description: "first payment succeeds, no trial"
    },
    {
      from: ["init"],
      trigger: "first_payment_failed",
      to: "incomplete",
      events: [],
      description: "first payment fails or 3-D Secure is not completed"
    },
    {
      from: ["init", "incomplete"],
      trigger: "incomplete_expired",
      to: "canceled",
      events: ["v2.subscription.canceled"],
      description:
        "the first payment is not made: 23 hours after a decline, or its checkout session expires (a 3-D Secure challenge left unanswered); cancel_reason incomplete_expired"
    },
    {
      from: ["trial"],
      trigger: "trial_expiring_notice",
      events: ["v2.subscription.trial_period_expiring"],
      description: "3 days before the trial ends"
    },
    {
      from: ["trial", "active"],
      trigger: "renewal_succeeded",
      to: "active",
      events: [],
      description: "a renewal (or the first paid cycle after a trial) is paid"
    },
    {
      from: ["trial", "active"],
      trigger: "renewal_failed",
      to: "past_due",
      events: ["v2.subscription.past_due"],
      description: "a renewal payment fails; the invoice is retrying"
    },
    {
      from: ["past_due", "unpaid"],
      trigger: "retry_succeeded",
      to: "active",
      events: [],
      description: "a dunning retry (or a later payment) succeeds"
    },
    {
      from: ["past_due"],
      trigger: "latest_invoice_closed",
      to: "active",
      events: [],
      description:
        "the merchant voids or marks uncollectible the past-due invoice (as Stripe: nothing more is collected for it, dunning stops)"
    },
    {
      from: ["past_due"],
      trigger: "retries_exhausted",
      to: "unpaid",
      events: ["v2.subscription.unpaid"],
      description: "retries exhausted, merchant setting unpaid (default)"
    },
    {
      from: ["past_due"],
      trigger: "retries_exhausted_cancel",
      to: "canceled",
      events: ["v2.subscription.canceled"],
      description: "retries exhausted, merchant setting canceled"
    },
    {
      from: live,
      trigger: "pause",
      to: "paused",
      events: ["v2.subscription.paused"],
      description: "paused by the merchant"
    },
    {
      from: ["paused"],
      trigger: "resume",
      to: "active",
      events: ["v2.subscription.resumed"],
      description: "resumed; the period restarts at resume"
    },
    {
      from: ["init", "trial", "active", "incomplete", "paused", "past_due", "unpaid"],
      trigger: "cancel",
      to: "canceled",
      events: ["v2.subscription.canceled"],
      description: "cancel immediately, or an end-of-period cancel reaching cancel_at"
    },
    {
      from: ["trial", "active", "past_due", "paused"],
      trigger: "request_cancel_at_period_end",
      events: ["v2.subscription.cancellation_requested"],
      description: "cancel scheduled for the period end"
    },
    {
      from: ["trial", "active", "past_due", "paused"],
      trigger: "revoke_cancel",
      events: ["v2.subscription.cancellation_revoked"],
      description: "a scheduled cancel is revoked"
    },
    {
      from: live,
      trigger: "change_price",
      events: ["v2.subscription.price_changed"],
      description: "the price changes (immediately or when a scheduled change applies)"
    },
    {
      from: live,
      trigger: "update_items",
      events: ["v2.subscription.items_updated"],
      description: "an item change (add, remove, quantity or price of an item) is committed through its quote"
    },
    {
      from: ["trial", "active", "past_due", "unpaid", "paused"],
      trigger: "migrate",
      events: ["v2.subscription.migrated"],
      description: "a catalog migration moves it to a newer version of its price from its next cycle"
    },
    {
      from: ["trial", "active", "past_due", "unpaid", "paused"],
      trigger: "update_payment_method",
      events: ["v2.subscription.payment_method_updated"],
      description: "a new card, saved by the gateway, is what renewals charge from now on"
    },
    {
      from: ["trial", "active", "past_due"],
      trigger: "term_completed",
      to: "canceled",
      events: ["v2.subscription.canceled"],
      description: "a fixed term reaches total_cycles"
    }
  ]
}
