/**
 * Invoices as the REST API returns them (note the seed's capital-D `Discounts`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Discounts, Metadata, NullableString, NullableTimestamp, Timestamp } from "./Common.js"
import type { Result } from "effect"
import * as Lifecycle from "./Lifecycle.js"
import { InvoiceStatus } from "./Lifecycle.js"

/**
 * The seed's four invoice types plus `upgrade` (a prorated charge).
 *
 * @since 0.1.0
 */
export const InvoiceType = Schema.Literals(["initial", "trial", "renewal", "refund", "upgrade"])

/**
 * @since 0.1.0
 */
export type InvoiceType = typeof InvoiceType.Type

/**
 * An invoice record.
 *
 * @since 0.1.0
 */
export class Invoice extends Schema.Class<Invoice>("Invoice")({
  invoice_id: Schema.String,
  merchant_id: Schema.String,
  trade_id: NullableString,
  subscription_id: NullableString,
  price_id: NullableString,
  customer_id: Schema.String,
  order_id: NullableString,
  original_invoice_id: NullableString,
  refund_order_id: NullableString,
  amount: Schema.String,
  currency: Schema.String,
  biz_status: InvoiceStatus,
  invoice_type: InvoiceType,
  paid_at: NullableTimestamp,
  cycle_index: Schema.Int,
  created_at: Timestamp,
  metadata: Metadata,
  Discounts: Discounts,
  price_version_id: NullableString,
  tax_amount: Schema.String
}) {}

/**
 * Moves an invoice's `biz_status` by `trigger` (the {@link Lifecycle.invoice} machine), with the
 * fields that change with it. The only way an invoice's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  invoice: Invoice,
  trigger: Lifecycle.InvoiceTrigger,
  patch: Partial<Omit<Invoice, "biz_status">> = {}
): Result.Result<Lifecycle.Moved<Invoice>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.invoice,
    invoice.biz_status,
    trigger,
    (to) => new Invoice({ ...invoice, ...patch, biz_status: to }, { disableChecks: true })
  )
