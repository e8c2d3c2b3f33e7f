/**
 * The invoice as stored (re-exported by `Entities`).
 */
import * as Invoice from "./Invoice.js"
import type * as Store from "../kernel/Store.js"
import { minor, ms } from "../kernel/internal/entities.js"

const CYCLE_TYPES: ReadonlyArray<string> = ["initial", "trial", "renewal"]

/** @since 0.1.0 */
export const invoice: Store.Entity<Invoice.Invoice, typeof Invoice.Invoice.Encoded> = {
  name: "invoice",
  table: "recur_invoices",
  schema: Invoice.Invoice,
  id: (i) => i.invoice_id,
  merchantId: (i) => i.merchant_id,
  createdAt: (i) => ms(i.created_at),
  columns: {
    trade_id: (i) => i.trade_id,
    order_id: (i) => i.order_id,
    subscription_id: (i) => i.subscription_id,
    customer_id: (i) => i.customer_id,
    biz_status: (i) => i.biz_status,
    invoice_type: (i) => i.invoice_type,
    cycle_index: (i) => i.cycle_index,
    amount_minor: (i) => minor(i.amount, i.currency),
    currency: (i) => i.currency,
    // One cycle invoice per (subscription, cycle, type); refunds and upgrades may repeat.
    cycle_key: (i) =>
      i.subscription_id !== null && CYCLE_TYPES.includes(i.invoice_type)
        ? `${i.subscription_id}:${i.cycle_index}:${i.invoice_type}`
        : null
  },
  unique: [{ name: "invoice_cycle", columns: ["cycle_key"] }]
}
