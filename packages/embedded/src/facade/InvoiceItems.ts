/**
 * The facade's invoice items group (and the one-off invoice made of them): the same services and
 * the same request decoding as the REST handlers of the same operations.
 *
 * @since 0.1.0
 */
import { InvoiceItemRequests } from "@recur/contract"
import { Invoice, InvoiceItem, InvoiceItems, OneOffInvoices } from "@recur/core"
import { Effect } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, page, pageJson } from "./Kit.js"

/** `invoiceItems`. @since 0.1.0 */
export const invoiceItems = ({ run }: Kit<Services>): BillingClient["invoiceItems"] => ({
  create: (merchantId, input) =>
    run(
      decode(InvoiceItemRequests.CreateInvoiceItem, input).pipe(
        Effect.flatMap((i) => InvoiceItems.InvoiceItems.use((s) => s.create(merchantId, i))),
        Effect.map(json(InvoiceItem.InvoiceItem))
      )
    ),
  get: (merchantId, invoiceItemId) =>
    run(
      id("invoice_item_id", invoiceItemId).pipe(
        Effect.flatMap((i) => InvoiceItems.InvoiceItems.use((s) => s.get(merchantId, i))),
        Effect.map(json(InvoiceItem.InvoiceItem))
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      page(filter).pipe(
        Effect.flatMap((p) =>
          InvoiceItems.InvoiceItems.use((s) =>
            s.list(merchantId, { ...p, customer_id: filter.customer_id, pending: filter.pending })
          )
        ),
        Effect.map(pageJson(InvoiceItem.InvoiceItem))
      )
    ),
  delete: (merchantId, invoiceItemId) =>
    run(
      id("invoice_item_id", invoiceItemId).pipe(
        Effect.flatMap((i) => InvoiceItems.InvoiceItems.use((s) => s.remove(merchantId, i))),
        Effect.map(json(InvoiceItem.InvoiceItem))
      )
    ),
  createInvoice: (merchantId, input) =>
    run(
      decode(InvoiceItemRequests.CreateOneOffInvoice, input).pipe(
        Effect.flatMap((i) => OneOffInvoices.OneOffInvoices.use((s) => s.create(merchantId, i))),
        Effect.map((i) => Invoice.viewOf(i)),
        Effect.map(json(Invoice.InvoiceView))
      )
    )
})
