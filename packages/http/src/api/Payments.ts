/**
 * The trades, invoices and refunds group (with the invoice, billing, dispute and payment settings): its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { DunningPolicy, Invoice, Merchant, Refund, PaymentSettings, Trade } from "@recur/core"
import { DunningRequests, InvoiceRequests, RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

const InvoiceSettings = Schema.Struct({ invoice_prefix: Schema.String })
const DisputeSettings = Schema.Struct({ fraud_dispute_renewals: Schema.Literals(["hold", "charge"]) })

/**
 * Trades, invoices and refunds.
 *
 * @since 0.1.0
 */
export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.get("trades", "/api/v1/trades", {
      query: Schema.Struct({
        ...PageQuery,
        trade_ids: QueryList,
        trade_status: QueryList,
        order_ids: QueryList,
        customer_id: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Trade.Trade)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("trade", "/api/v1/trade/:trade_id", {
      params: Schema.Struct({ trade_id: Schema.String }),
      success: Envelope(Schema.Struct({ trade: Trade.Trade })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("invoices", "/api/v1/invoices", {
      query: Schema.Struct({
        ...PageQuery,
        invoice_ids: QueryList,
        trade_ids: QueryList,
        order_ids: QueryList,
        subscription_id: Schema.optional(Schema.String),
        customer_id: Schema.optional(Schema.String),
        biz_status: QueryList,
        status: QueryList,
        invoice_types: QueryList
      }),
      success: Envelope(Page(Invoice.InvoiceView)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("invoice", "/api/v1/invoice/:invoice_id", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice: Invoice.InvoiceView })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("finalizeInvoice", "/api/v1/invoices/:invoice_id/finalize", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice: Invoice.InvoiceView })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("editInvoice", "/api/v1/invoices/:invoice_id/edit", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      payload: InvoiceRequests.EditDraft,
      success: Envelope(Schema.Struct({ invoice: Invoice.InvoiceView })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("voidInvoice", "/api/v1/invoices/:invoice_id/void", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice: Invoice.InvoiceView })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("markInvoiceUncollectible", "/api/v1/invoices/:invoice_id/mark_uncollectible", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice: Invoice.InvoiceView })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("invoiceSettings", "/api/v1/invoice_settings", {
      success: Envelope(InvoiceSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateInvoiceSettings", "/api/v1/invoice_settings", {
      payload: RequestBodies.InvoiceSettings,
      success: Envelope(InvoiceSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("billingSettings", "/api/v1/billing_settings", {
      success: Envelope(Merchant.BillingSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateBillingSettings", "/api/v1/billing_settings", {
      payload: RequestBodies.BillingSettings,
      success: Envelope(Merchant.BillingSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("dunningPreview", "/api/v1/dunning/preview", {
      payload: DunningRequests.DunningPreview,
      success: Envelope(DunningPolicy.Preview),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("disputeSettings", "/api/v1/dispute_settings", {
      success: Envelope(DisputeSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateDisputeSettings", "/api/v1/dispute_settings", {
      payload: RequestBodies.DisputeSettings,
      success: Envelope(DisputeSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("paymentSettings", "/api/v1/payment_settings", {
      success: Envelope(PaymentSettings.PaymentSettingsView),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updatePaymentSettings", "/api/v1/payment_settings", {
      payload: RequestBodies.PaymentSettings,
      success: Envelope(PaymentSettings.PaymentSettingsView),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("refund", "/api/v1/refund", {
      payload: RequestBodies.Refund,
      success: Envelope(
        Schema.Struct({
          refund_id: Schema.String,
          refund_status: Schema.String,
          credit_note_id: Schema.NullOr(Schema.String),
          credit_note_number: Schema.NullOr(Schema.String)
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("getRefund", "/api/v1/refund/:refund_id", {
      params: Schema.Struct({ refund_id: Schema.String }),
      success: Envelope(Schema.Struct({ refund: Refund.Refund })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("refunds", "/api/v1/refunds", {
      query: Schema.Struct(PageQuery),
      success: Envelope(Page(Refund.Refund)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("tradeRefunds", "/api/v1/trades/:trade_id/refunds", {
      params: Schema.Struct({ trade_id: Schema.String }),
      query: Schema.Struct(PageQuery),
      success: Envelope(Page(Refund.Refund)),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Trades, invoices and refunds") {}
