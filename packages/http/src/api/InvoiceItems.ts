/**
 * The invoice items group (and the one-off invoice made of them): its endpoints' paths, bodies
 * and answers.
 *
 * @since 0.1.0
 */
import { Invoice, InvoiceItem } from "@recur/core"
import { InvoiceItemRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope, Page, PageQuery } from "./Shared.js"

/**
 * Invoice items: one-off charges for a customer, and the one-off invoice that bills them.
 *
 * @since 0.1.0
 */
export class InvoiceItemsGroup extends HttpApiGroup.make("invoiceItems")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/invoice_items", {
      payload: InvoiceItemRequests.CreateInvoiceItem,
      success: Envelope(Schema.Struct({ invoice_item: InvoiceItem.InvoiceItem })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/invoice_items", {
      query: Schema.Struct({
        ...PageQuery,
        customer_id: Schema.optional(Schema.String),
        pending: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(InvoiceItem.InvoiceItem)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/invoice_item/:invoice_item_id", {
      params: Schema.Struct({ invoice_item_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice_item: InvoiceItem.InvoiceItem })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("delete", "/api/v1/invoice_item/:invoice_item_id/delete", {
      params: Schema.Struct({ invoice_item_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice_item: InvoiceItem.InvoiceItem })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createInvoice", "/api/v1/invoices", {
      payload: InvoiceItemRequests.CreateOneOffInvoice,
      success: Envelope(Schema.Struct({ invoice: Invoice.InvoiceView })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Invoice items") {}
