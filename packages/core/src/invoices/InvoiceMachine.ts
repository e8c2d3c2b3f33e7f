/**
 * The invoice's state machine (`biz_status`) (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Invoice `biz_status`: the seed's statuses, plus `draft` (a renewal's invoice during the
 * merchant's grace period: editable, unnumbered, not charged) and `uncollectible` (owed but
 * written off: dunning stopped; it can still be paid or voided). The Stripe-style `status` the
 * API shows beside it is {@link statusOf}.
 *
 * @since 0.1.0
 */
export const InvoiceStatus = Schema.Literals([
  "draft",
  "open",
  "pending",
  "retrying",
  "success",
  "failed",
  "refunded",
  "partially_refunded",
  "void",
  "uncollectible"
])
/** @since 0.1.0 */
export type InvoiceStatus = typeof InvoiceStatus.Type

/**
 * The Stripe-style invoice status: `draft`, `open` (issued, owed: also a charge in flight, a retry
 * waiting, a failed one), `paid` (also after refunds), `void`, `uncollectible` — and `issued`, a
 * credit note's (an `invoice_type: refund` document: nothing is owed on it, it is not a paid
 * invoice; Stripe's credit notes are `issued` or `void`).
 *
 * @since 0.1.0
 */
export const InvoiceStatusView = Schema.Literals(["draft", "open", "paid", "void", "uncollectible", "issued"])
/** @since 0.1.0 */
export type InvoiceStatusView = typeof InvoiceStatusView.Type

/**
 * The Stripe-style `status` of a `biz_status` (the mapping docs/invoices.md tabulates).
 *
 * @example
 * statusOf("retrying") // "open"
 * statusOf("partially_refunded") // "paid"
 * @since 0.1.0
 */
export const statusOf = (bizStatus: InvoiceStatus): InvoiceStatusView => {
  switch (bizStatus) {
    case "draft":
    case "void":
    case "uncollectible":
      return bizStatus
    case "open":
    case "pending":
    case "retrying":
    case "failed":
      return "open"
    case "success":
    case "refunded":
    case "partially_refunded":
      return "paid"
  }
}
/**
 * The Stripe-style `status` of an invoice: {@link statusOf} its `biz_status`, except a credit note
 * (`invoice_type: refund`), which is `issued` (or `void`) — never `paid`.
 *
 * @example
 * documentStatusOf({ invoice_type: "refund", biz_status: "success" }) // "issued"
 * @since 0.1.0
 */
export const documentStatusOf = (invoice: {
  readonly invoice_type: string
  readonly biz_status: InvoiceStatus
}): InvoiceStatusView =>
  invoice.invoice_type === "refund" ? (invoice.biz_status === "void" ? "void" : "issued") : statusOf(invoice.biz_status)

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
  | "finalize"
  | "mark_uncollectible"
  | "credited_in_full"

/**
 * The invoice machine.
 *
 * @since 0.1.0
 */
export const invoice: Machine<InvoiceStatus, InvoiceTrigger> = {
  name: "Invoice",
  field: "biz_status",
  states: InvoiceStatus.literals,
  // born a draft (a renewal in the merchant's grace period) or, finalised at once, `open`
  initial: "draft",
  createEvents: [],
  terminal: ["refunded", "void"],
  transitions: [
    {
      from: ["draft"],
      trigger: "finalize",
      to: "open",
      events: ["v2.invoice.finalized"],
      description:
        "a draft renewal invoice is finalised (at the end of the merchant's grace period, or on request): numbered, taxed, then charged or settled"
    },
    { from: ["open", "retrying"], trigger: "charge", to: "pending", events: [], description: "a charge is in flight" },
    {
      from: ["failed", "uncollectible"],
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
      from: ["open", "retrying", "failed", "uncollectible"],
      trigger: "credited_in_full",
      to: "success",
      events: ["v2.invoice.paid"],
      description: "a credit note (method reduce_invoice) reduces what remains owed to zero: settled, nothing charged"
    },
    {
      from: ["pending", "retrying", "uncollectible"],
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
      from: ["draft", "retrying", "failed", "uncollectible"],
      trigger: "void",
      to: "void",
      events: ["v2.invoice.voided"],
      description:
        "the merchant voids an unpaid invoice: nothing is owed; an issued one keeps its number and its document says VOID"
    },
    {
      from: ["open", "retrying", "failed"],
      trigger: "mark_uncollectible",
      to: "uncollectible",
      events: ["v2.invoice.marked_uncollectible"],
      description:
        "the merchant writes an unpaid issued invoice off: still owed, dunning stops; it can still be paid or voided"
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
