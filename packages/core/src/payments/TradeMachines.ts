/**
 * The trade's state machines: its payment, its dispute and its refund status (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

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
