/**
 * The invoice's state machine (`biz_status`) (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

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
