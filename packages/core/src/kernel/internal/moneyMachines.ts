/**
 * The machines of the money path: subscription, invoice, trade (and its refund status), refund
 * and checkout session (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../Lifecycle.js"

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
  | "update_payment_method"
  | "term_completed"

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

/**
 * Invoice `biz_status`.
 *
 * @since 0.1.0
 */
export const InvoiceStatus = Schema.Literals([
  "open",
  "pending",
  "retrying",
  "success",
  "failed",
  "refunded",
  "partially_refunded",
  "void"
])
/** @since 0.1.0 */
export type InvoiceStatus = typeof InvoiceStatus.Type
/** @since 0.1.0 */
export type InvoiceTrigger =
  | "charge"
  | "paid"
  | "charge_failed_will_retry"
  | "charge_failed_final"
  | "retries_exhausted"
  | "partial_refund"
  | "full_refund"
  | "settle_without_charge"
  | "reopen"
  | "void"
  | "payment_action_required"

/**
 * The invoice machine.
 *
 * @since 0.1.0
 */
export const invoice: Machine<InvoiceStatus, InvoiceTrigger> = {
  name: "Invoice",
  field: "biz_status",
  states: InvoiceStatus.literals,
  initial: "open",
  createEvents: [],
  terminal: ["refunded", "void"],
  transitions: [
    { from: ["open", "retrying"], trigger: "charge", to: "pending", events: [], description: "a charge is in flight" },
    {
      from: ["failed"],
      trigger: "reopen",
      to: "pending",
      events: [],
      description: "the customer of an unpaid subscription gives a new card: a new charge of the failed invoice"
    },
    {
      from: ["open"],
      trigger: "settle_without_charge",
      to: "success",
      events: ["v2.invoice.paid"],
      description: "nothing to charge (free trial, fully covered by credit)"
    },
    {
      from: ["pending", "retrying"],
      trigger: "paid",
      to: "success",
      events: ["v2.invoice.paid"],
      description: "the charge succeeds (also an earlier attempt confirmed while a retry waits)"
    },
    {
      from: ["pending"],
      trigger: "charge_failed_will_retry",
      to: "retrying",
      events: [],
      description: "the charge fails and a retry is scheduled"
    },
    {
      from: ["pending"],
      trigger: "charge_failed_final",
      to: "failed",
      events: ["v2.invoice.payment_failed"],
      description: "the charge fails and no retry remains"
    },
    {
      from: ["retrying"],
      trigger: "retries_exhausted",
      to: "failed",
      events: ["v2.invoice.payment_failed"],
      description: "the last retry failed"
    },
    {
      from: ["success", "partially_refunded"],
      trigger: "partial_refund",
      to: "partially_refunded",
      events: ["v2.invoice.refunded"],
      description: "part of the paid amount is refunded"
    },
    {
      from: ["success", "partially_refunded"],
      trigger: "full_refund",
      to: "refunded",
      events: ["v2.invoice.refunded"],
      description: "the remainder is refunded"
    },
    {
      from: ["open", "pending"],
      trigger: "void",
      to: "void",
      events: ["v2.invoice.voided"],
      description:
        "a checkout's first invoice never paid: its session expired or its subscription's first payment expired (never issued: no number)"
    },
    {
      from: ["retrying"],
      trigger: "payment_action_required",
      events: ["v2.invoice.payment_action_required"],
      description:
        "an off-session renewal needs the customer's authentication (3-D Secure): no off-session retry, the customer pays on the hosted invoice page"
    }
  ]
}

/**
 * Trade `trade_status`.
 *
 * @since 0.1.0
 */
export const TradeStatus = Schema.Literals([
  "requires_payment_method",
  "processing",
  "succeeded",
  "payment_failed",
  "closed"
])
/** @since 0.1.0 */
export type TradeStatus = typeof TradeStatus.Type
/** @since 0.1.0 */
export type TradeTrigger =
  | "submit_payment"
  | "resubmit_payment"
  | "succeeded"
  | "failed"
  | "close"
  | "abandon"
  | "processor_unavailable"
  | "succeeded_late"

/**
 * The trade machine. `next_action` is set while `processing` waits for 3-D Secure.
 *
 * @since 0.1.0
 */
export const trade: Machine<TradeStatus, TradeTrigger> = {
  name: "Trade",
  field: "trade_status",
  states: TradeStatus.literals,
  initial: "requires_payment_method",
  createEvents: ["v2.trades.created"],
  terminal: ["succeeded", "closed"],
  transitions: [
    {
      from: ["requires_payment_method", "payment_failed"],
      trigger: "submit_payment",
      to: "processing",
      events: [],
      description: "a payment method is charged (also a customer's retry)"
    },
    {
      from: ["processing"],
      trigger: "resubmit_payment",
      to: "processing",
      events: [],
      description: "the payer leaves a pending 3-D Secure challenge and pays with another card (a new attempt)"
    },
    {
      from: ["processing"],
      trigger: "succeeded",
      to: "succeeded",
      events: ["v2.trades.succeeded"],
      description: "the gateway confirms the charge"
    },
    {
      from: ["payment_failed"],
      trigger: "succeeded_late",
      to: "succeeded",
      events: ["v2.trades.succeeded"],
      description:
        "a charge recorded as failed succeeded after all at the processor (a late confirmation): the money was taken"
    },
    {
      from: ["processing"],
      trigger: "failed",
      to: "payment_failed",
      events: ["v2.trades.payment_failed"],
      description: "the gateway declines (last_payment_error set)"
    },
    {
      from: ["processing"],
      trigger: "processor_unavailable",
      to: "requires_payment_method",
      events: ["v2.trades.processor_unavailable"],
      description:
        "the processor could not take the charge (rate limit, outage, a rolled or restricted key): nothing charged, not a decline; tried again later"
    },
    {
      from: ["requires_payment_method", "payment_failed"],
      trigger: "close",
      to: "closed",
      events: [],
      description: "unpaid when its checkout session or first payment expires, or a renewal's retries are exhausted"
    },
    {
      from: ["processing"],
      trigger: "abandon",
      to: "closed",
      events: [],
      description:
        "its checkout expires while the payment still waits (a 3-D Secure challenge unanswered): given up at the gateway"
    }
  ]
}

/**
 * Trade `dispute_status`: whether the payer disputed the charge with their bank (a chargeback) or
 * asked about it (an inquiry), as the processor reports it: `open` while it runs (the
 * processor's own status — Stripe's `warning_needs_response`, `warning_under_review`,
 * `needs_response`, `under_review` — and the evidence deadline are on the trade's `dispute`),
 * then how it ended: `won`, `lost`, `warning_closed` (an inquiry closed without a chargeback) or
 * `prevented` (stopped before it became one). Every end is terminal: none stays open forever.
 *
 * @since 0.1.0
 */
export const TradeDisputeStatus = Schema.Literals(["none", "open", "won", "lost", "warning_closed", "prevented"])
/** @since 0.1.0 */
export type TradeDisputeStatus = typeof TradeDisputeStatus.Type

/**
 * A trigger of the dispute machine.
 *
 * @since 0.1.0
 */
export type TradeDisputeTrigger =
  | "dispute_opened"
  | "dispute_updated"
  | "dispute_won"
  | "dispute_lost"
  | "dispute_warning_closed"
  | "dispute_prevented"

/**
 * The trade's dispute machine: a dispute (or an inquiry) opens, then is won, lost, closed as an
 * inquiry or prevented. Its invoice's `dispute_status` follows the same machine.
 *
 * @since 0.1.0
 */
export const tradeDispute: Machine<TradeDisputeStatus, TradeDisputeTrigger> = {
  name: "TradeDispute",
  field: "dispute_status",
  states: TradeDisputeStatus.literals,
  initial: "none",
  createEvents: [],
  terminal: ["won", "lost", "warning_closed", "prevented"],
  transitions: [
    {
      from: ["none"],
      trigger: "dispute_opened",
      to: "open",
      events: ["v2.trades.disputed"],
      description:
        "the payer disputes the charge with their bank, or the bank asks about it (an inquiry): the processor reports it with its amount and evidence deadline"
    },
    {
      from: ["open"],
      trigger: "dispute_updated",
      events: ["v2.trades.dispute_updated"],
      description:
        "the processor reports a change of the open dispute (its status, reason, amount or evidence deadline); a report that changes nothing emits nothing"
    },
    {
      from: ["open"],
      trigger: "dispute_won",
      to: "won",
      events: ["v2.trades.dispute_closed"],
      description: "the bank decides for the merchant: the funds stay"
    },
    {
      from: ["open"],
      trigger: "dispute_lost",
      to: "lost",
      events: ["v2.trades.dispute_closed"],
      description: "the bank decides for the payer (or the merchant accepts the dispute): the funds are returned"
    },
    {
      from: ["open"],
      trigger: "dispute_warning_closed",
      to: "warning_closed",
      events: ["v2.trades.dispute_closed"],
      description: "an inquiry closes without becoming a chargeback"
    },
    {
      from: ["open"],
      trigger: "dispute_prevented",
      to: "prevented",
      events: ["v2.trades.dispute_closed"],
      description: "the dispute is prevented before it becomes a chargeback (e.g. resolved with the issuer)"
    }
  ]
}

/**
 * Trade `refund_status`.
 *
 * @since 0.1.0
 */
export const TradeRefundStatus = Schema.Literals(["no_refund", "partially_refunded", "refunded"])
/** @since 0.1.0 */
export type TradeRefundStatus = typeof TradeRefundStatus.Type

/**
 * The trade's refund machine: total refunded never exceeds the amount.
 *
 * @since 0.1.0
 */
export const tradeRefund: Machine<TradeRefundStatus, "partial_refund" | "full_refund"> = {
  name: "TradeRefund",
  field: "refund_status",
  states: TradeRefundStatus.literals,
  initial: "no_refund",
  createEvents: [],
  terminal: ["refunded"],
  transitions: [
    {
      from: ["no_refund", "partially_refunded"],
      trigger: "partial_refund",
      to: "partially_refunded",
      events: [],
      description: "a refund leaves part of the amount paid"
    },
    {
      from: ["no_refund", "partially_refunded"],
      trigger: "full_refund",
      to: "refunded",
      events: [],
      description: "refunds reach the amount paid"
    }
  ]
}

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
