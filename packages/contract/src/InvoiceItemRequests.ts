/**
 * The merchant API's invoice-item and one-off invoice bodies (`POST /api/v1/invoice_items`,
 * `POST /api/v1/invoices`), decoded into core's commands (`InvoiceItems.create`,
 * `OneOffInvoices.create`).
 *
 * @since 0.1.0
 */
import { Common } from "@recur/core"
import { Schema } from "effect"
import * as CollectionRequests from "./CollectionRequests.js"

/**
 * The body of `POST /api/v1/invoice_items`: `unit_amount` (a decimal string in `currency`) or a
 * one-time `price_id`, a `quantity` (1 by default) and a `description`; with `subscription_id`,
 * pending on that subscription's next renewal invoice (in its currency, the default).
 *
 * @since 0.1.0
 */
export const CreateInvoiceItem = Schema.Struct({
  customer_id: Schema.String,
  subscription_id: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  unit_amount: Schema.optional(Schema.String),
  price_id: Schema.optional(Schema.String),
  quantity: Schema.optional(Schema.Number),
  description: Schema.optional(Schema.String),
  metadata: Schema.optional(Common.Metadata)
})

/** @since 0.1.0 */
export type CreateInvoiceItemRequest = typeof CreateInvoiceItem.Type

/**
 * The body of `POST /api/v1/invoices`: a one-off invoice of the customer's pending invoice items
 * (in `currency` when they are in several), collected as the customer's setting says — charged
 * to the card on file, or sent with net terms — unless `collection_method` (and
 * `days_until_due`, required with `send_invoice`) say otherwise for this invoice.
 *
 * @since 0.1.0
 */
export const CreateOneOffInvoice = Schema.Struct({
  customer_id: Schema.String,
  currency: Schema.optional(Schema.String),
  metadata: Schema.optional(Common.Metadata),
  ...CollectionRequests.CollectionFields
})

/** @since 0.1.0 */
export type CreateOneOffInvoiceRequest = typeof CreateOneOffInvoice.Type
