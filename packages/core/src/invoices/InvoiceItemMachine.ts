/**
 * The invoice item's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * An invoice item's `status`: `pending` until an invoice bills it (`invoiced`, with its
 * `invoice_id`), or `deleted` by the merchant before that; `invoiced` by a draft that is voided,
 * `pending` again.
 *
 * @since 0.1.0
 */
export const InvoiceItemStatus = Schema.Literals(["pending", "invoiced", "deleted"])
/** @since 0.1.0 */
export type InvoiceItemStatus = typeof InvoiceItemStatus.Type
/** @since 0.1.0 */
export type InvoiceItemTrigger = "invoice" | "delete" | "release"

/**
 * The invoice item machine.
 *
 * @since 0.1.0
 */
export const invoiceItem: Machine<InvoiceItemStatus, InvoiceItemTrigger> = {
  name: "InvoiceItem",
  field: "status",
  states: InvoiceItemStatus.literals,
  initial: "pending",
  createEvents: [],
  terminal: ["deleted"],
  transitions: [
    {
      from: ["pending"],
      trigger: "invoice",
      to: "invoiced",
      events: [],
      description: "a one-off invoice bills it (in the transaction that issues the invoice): billed once"
    },
    {
      from: ["pending"],
      trigger: "delete",
      to: "deleted",
      events: [],
      description: "the merchant deletes it before any invoice billed it"
    },
    {
      from: ["invoiced"],
      trigger: "release",
      to: "pending",
      events: [],
      description:
        "the draft that billed it is voided (no number, nothing owed): pending again, for the next invoice (as Stripe's deleting a draft)"
    }
  ]
}
