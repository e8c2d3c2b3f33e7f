/**
 * The invoice as stored (re-exported by `Entities`).
 */
import * as Invoice from "./Invoice.js"
import * as InvoiceItem from "./InvoiceItem.js"
import * as Store from "../kernel/Store.js"
import { minor, ms } from "../kernel/internal/entities.js"

const CYCLE_TYPES: ReadonlyArray<string> = ["initial", "trial", "renewal"]

/** @since 0.1.0 */
export const invoice: Store.Entity<Invoice.Invoice, typeof Invoice.Invoice.Encoded> = Store.entity({
  name: "invoice",
  table: "recur_invoices",
  schema: Invoice.Invoice,
  id: "invoice_id",
  createdAt: (i) => ms(i.created_at),
  columns: {
    trade_id: "trade_id",
    order_id: "order_id",
    subscription_id: "subscription_id",
    customer_id: "customer_id",
    biz_status: "biz_status",
    invoice_type: "invoice_type",
    cycle_index: "cycle_index",
    amount_minor: (i) => minor(i.amount, i.currency),
    currency: "currency",
    // One cycle invoice per (subscription, cycle, type); refunds and upgrades may repeat.
    cycle_key: (i) =>
      i.subscription_id !== null && CYCLE_TYPES.includes(i.invoice_type)
        ? `${i.subscription_id}:${i.cycle_index}:${i.invoice_type}`
        : null
  },
  unique: [{ name: "invoice_cycle", columns: ["cycle_key"] }]
})

/**
 * Invoice items (`recur_invoice_items`): filtered by customer and status (a customer's pending
 * items are what a one-off invoice bills).
 *
 * @since 0.1.0
 */
export const invoiceItem: Store.Entity<InvoiceItem.InvoiceItem, typeof InvoiceItem.InvoiceItem.Encoded> = Store.entity({
  name: "invoice_item",
  table: "recur_invoice_items",
  schema: InvoiceItem.InvoiceItem,
  id: "invoice_item_id",
  createdAt: (i) => ms(i.created_at),
  columns: {
    customer_id: "customer_id",
    subscription_id: "subscription_id",
    status: "status",
    invoice_id: "invoice_id",
    currency: "currency"
  }
})
