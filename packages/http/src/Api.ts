/**
 * The merchant REST API as one `HttpApi`: every path and method of the seed and the
 * contract's additions, importable without the handlers (for `HttpApiClient` and OpenAPI).
 *
 * @since 0.1.0
 */
import {
  CheckoutSession,
  Customer,
  Discount,
  Invoice,
  type Merchant,
  Price,
  Product,
  Refund,
  PaymentSettings,
  PortalSession,
  Subscription,
  Tax,
  Trade,
  Usage,
  Webhook
} from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import * as ApiErrors from "./Errors.js"
import * as OpenApiDocument from "./internal/openapi.js"

/**
 * `{code: "success", message: "success", data}`.
 *
 * @since 0.1.0
 */
export const Envelope = <A, I, R>(data: Schema.Codec<A, I, R>) =>
  Schema.Struct({ code: Schema.Literal("success"), message: Schema.Literal("success"), data })

/**
 * A list page: `{has_more, list}`.
 *
 * @since 0.1.0
 */
export const Page = <A, I, R>(item: Schema.Codec<A, I, R>) =>
  Schema.Struct({ has_more: Schema.Boolean, list: Schema.Array(item) })

/** A query array: repeated keys or one comma-separated value. */
const QueryList = Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.String)]))

/** Cursor pagination and `created_at` ranges, common to every list. */
const PageQuery = {
  starting_after: Schema.optional(Schema.String),
  ending_before: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.String),
  "created_at.gt": Schema.optional(Schema.String),
  "created_at.gte": Schema.optional(Schema.String),
  "created_at.lt": Schema.optional(Schema.String),
  "created_at.lte": Schema.optional(Schema.String)
}

/**
 * The authenticated merchant of a request.
 *
 * @since 0.1.0
 */
export class CurrentMerchant extends Context.Service<
  CurrentMerchant,
  { readonly merchant: Merchant.Merchant; readonly requestId: string }
>()("@recur/http/CurrentMerchant") {}

/**
 * Authentication (`Authorization: Bearer <key>`, exactly one space) and the required
 * `Request-Id` header, on every endpoint. The key is declared as an HTTP bearer scheme, so the
 * OpenAPI document and generated clients send it.
 *
 * @since 0.1.0
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentMerchant }>()(
  "@recur/http/Authentication",
  {
    error: [ApiErrors.Unauthorized, ApiErrors.InvalidParameter],
    security: {
      bearer: HttpApiSecurity.bearer.pipe(
        HttpApiSecurity.annotate(OpenApi.Description, "A merchant API key (sk_live_… or sk_test_…).")
      )
    }
  }
) {}

/**
 * Every request that does not decode (path, query or body) is answered as `InvalidParameter`
 * in the envelope, naming the first field at fault.
 *
 * @since 0.1.0
 */
export class DecodeErrors extends HttpApiMiddleware.Service<DecodeErrors>()("@recur/http/DecodeErrors", {
  error: ApiErrors.InvalidParameter
}) {}

const CustomerRef = Schema.Struct({
  customer_id: Schema.optional(Schema.String),
  payer_id: Schema.optional(Schema.String)
})

/**
 * Customers.
 *
 * @since 0.1.0
 */
export class CustomersGroup extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/front/customer/create", {
      payload: RequestBodies.CreateCustomer,
      success: Envelope(Schema.Struct({ customer_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("update", "/api/v1/front/customer/update", {
      payload: RequestBodies.UpdateCustomer,
      success: Envelope(Schema.Struct({ customer_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("delete", "/api/v1/front/customer/delete", {
      payload: CustomerRef,
      success: Envelope(Schema.Struct({})),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/front/customer/:customer_id", {
      params: Schema.Struct({ customer_id: Schema.String }),
      success: Envelope(Schema.Struct({ customer: Customer.Customer })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/front/customer", {
      query: Schema.Struct({
        ...PageQuery,
        customer_ids: QueryList,
        emails: QueryList,
        payer_ids: QueryList,
        type: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Customer.Customer)),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customers") {}

/**
 * The body of `POST /api/v1/prices` (core's `RequestBodies.CreatePrice`).
 *
 * @since 0.1.0
 */
export const PricePayload = RequestBodies.CreatePrice

/**
 * The body of `POST /api/v1/session` (core's `RequestBodies.CreateSession`).
 *
 * @since 0.1.0
 */
export const SessionPayload = RequestBodies.CreateSession

/**
 * Products, categories and prices.
 *
 * @since 0.1.0
 */
export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("categories", "/api/v1/product-categories", {
      success: Envelope(Schema.Struct({ total: Schema.Int, list: Schema.Array(Product.Category) })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createProduct", "/api/v1/products", {
      payload: RequestBodies.CreateProduct,
      success: Envelope(Schema.Struct({ product_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("productStatus", "/api/v1/product/:product_id/status", {
      params: Schema.Struct({ product_id: Schema.String }),
      payload: Schema.Struct({
        status: Schema.optional(Schema.String),
        product_status: Schema.optional(Schema.String)
      }),
      success: Envelope(Schema.Struct({ product_id: Schema.String, product_status: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("products", "/api/v1/products", {
      query: Schema.Struct({ ...PageQuery, price_ids: QueryList, status: Schema.optional(Schema.String) }),
      success: Envelope(Page(Product.Product)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createPrice", "/api/v1/prices", {
      payload: RequestBodies.CreatePrice,
      success: Envelope(
        Schema.Struct({
          price_id: Schema.String,
          price_version_id: Schema.String,
          merchant_price_id: Schema.NullOr(Schema.String)
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("priceStatus", "/api/v1/prices/:price_version_id/status", {
      params: Schema.Struct({ price_version_id: Schema.String }),
      payload: Schema.Struct({
        price_version_id: Schema.optional(Schema.String),
        status: Schema.optional(Schema.String)
      }),
      success: Envelope(Schema.Struct({ price_version_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("priceVersion", "/api/v1/prices/version/:price_version_id", {
      params: Schema.Struct({ price_version_id: Schema.String }),
      success: Envelope(Price.PriceVersion),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("prices", "/api/v1/prices", {
      query: Schema.Struct({
        ...PageQuery,
        product_id: Schema.optional(Schema.String),
        status: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Price.PriceVersion)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("priceVersions", "/api/v1/price/:price_id/versions", {
      params: Schema.Struct({ price_id: Schema.String }),
      query: Schema.Struct(PageQuery),
      success: Envelope(Page(Price.PriceVersion)),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Catalog") {}

/**
 * Checkout sessions.
 *
 * @since 0.1.0
 */
export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/session", {
      payload: RequestBodies.CreateSession,
      success: Envelope(Schema.Struct({ session_id: Schema.String, session_url: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/session/:session_id", {
      params: Schema.Struct({ session_id: Schema.String }),
      success: Envelope(Schema.Struct({ session: CheckoutSession.CheckoutSession })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Checkout sessions") {}

const SubscriptionPath = Schema.Struct({ subscription_id: Schema.String })
const StatusResult = Envelope(Schema.Struct({ subscription_id: Schema.String, status: Schema.String }))
const Quote = Schema.Struct({
  quote_id: Schema.String,
  subscription_id: Schema.String,
  effective_type: Schema.String,
  proration: Schema.String,
  currency: Schema.String,
  credit: Schema.String,
  charge: Schema.String,
  net: Schema.String,
  tax: Schema.String,
  total: Schema.String,
  outcome: Schema.String,
  lines: Schema.Array(Schema.Struct({ description: Schema.String, amount: Schema.String })),
  effective_at: Schema.String,
  /** The subscription's discounts that stop applying from the change on (outside the new price's products). */
  discounts_ending: Schema.Array(Schema.Struct({ discount_id: Schema.String, discount_code: Schema.String }))
})

/**
 * Subscriptions: reads, changes, lifecycle and usage.
 *
 * @since 0.1.0
 */
export class SubscriptionsGroup extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/subscription", {
      query: Schema.Struct({
        ...PageQuery,
        subscription_ids: QueryList,
        status: QueryList,
        merchant_id: Schema.optional(Schema.String),
        order_ids: QueryList,
        source_trade_id: QueryList,
        billing_cycle_unit: Schema.optional(Schema.String),
        search_type: Schema.optional(Schema.String),
        search_value: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Subscription.Subscription)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/subscription/:subscription_id", {
      params: SubscriptionPath,
      success: Envelope(Schema.Struct({ subscription: Subscription.Subscription })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("change", "/api/v1/subscription/:subscription_id", {
      params: SubscriptionPath,
      payload: RequestBodies.ChangePrice,
      success: Envelope(Schema.Struct({})),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("previewChange", "/api/v1/subscription/:subscription_id/preview-change", {
      params: SubscriptionPath,
      payload: RequestBodies.ChangePrice,
      success: Envelope(Quote),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("upcomingInvoice", "/api/v1/subscription/:subscription_id/upcoming_invoice", {
      params: SubscriptionPath,
      success: Envelope(Schema.Struct({ upcoming_invoice: Schema.NullOr(Invoice.UpcomingInvoice) })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("revokePriceChange", "/api/v1/subscription/:subscription_id/revoke-price-change", {
      params: SubscriptionPath,
      success: Envelope(
        Schema.Struct({ subscription_id: Schema.String, result: Schema.Literals(["revoked", "no_pending_change"]) })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("cancel", "/api/v1/subscription/:subscription_id/cancel", {
      params: SubscriptionPath,
      payload: RequestBodies.Cancel,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("revokeCancel", "/api/v1/subscription/:subscription_id/revoke-cancel", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("pause", "/api/v1/subscription/:subscription_id/pause", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("resume", "/api/v1/subscription/:subscription_id/resume", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updatePaymentMethod", "/api/v1/subscription/:subscription_id/payment_method", {
      params: SubscriptionPath,
      payload: RequestBodies.PaymentMethod,
      success: Envelope(
        Schema.Struct({
          subscription_id: Schema.String,
          status: Schema.String,
          payment_method: Schema.Struct({
            brand: Schema.String,
            last4: Schema.String,
            exp_month: Schema.Int,
            exp_year: Schema.Int
          }),
          retry: Schema.NullOr(Schema.Struct({ trade_id: Schema.String, trade_status: Schema.String }))
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("renewal", "/api/v1/subscription/:subscription_id/renewal", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("usage", "/api/v1/subscription/:subscription_id/usage", {
      params: SubscriptionPath,
      query: Schema.Struct({
        merchant_id: Schema.optional(Schema.String),
        cycle_index: Schema.optional(Schema.String)
      }),
      success: Envelope(Usage.UsageSummary),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("recordUsage", "/api/v1/subscription/:subscription_id/usage", {
      params: SubscriptionPath,
      payload: RequestBodies.Usage,
      success: Envelope(
        Schema.Struct({
          subscription_id: Schema.String,
          cycle_index: Schema.Int,
          usage_count: Schema.Int,
          duplicate: Schema.Boolean
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("recordUsageBatch", "/api/v1/usage/batch", {
      payload: RequestBodies.UsageBatch,
      success: Envelope(
        Schema.Struct({
          accepted: Schema.Int,
          duplicates: Schema.Int,
          records: Schema.Array(
            Schema.Struct({
              subscription_id: Schema.String,
              event_id: Schema.String,
              cycle_index: Schema.Int,
              usage_count: Schema.Int,
              duplicate: Schema.Boolean
            })
          )
        })
      ),
      error: ApiErrors.all
    }).annotate(
      OpenApi.Description,
      "Records up to 1,000 usage events of any of the merchant's usage-billed subscriptions in one transaction. Re-sent event_ids are reported as duplicates and not counted again; a bad record rejects the whole batch (the error names records[i])."
    )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Subscriptions") {}

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
        invoice_types: QueryList
      }),
      success: Envelope(Page(Invoice.Invoice)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("invoice", "/api/v1/invoice/:invoice_id", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      success: Envelope(Schema.Struct({ invoice: Invoice.Invoice })),
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
      success: Envelope(Schema.Struct({ refund_id: Schema.String, refund_status: Schema.String })),
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

/**
 * Sandbox helpers (keys `sk_test_…` only).
 *
 * @since 0.1.0
 */
export class SandboxGroup extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("advanceClock", "/api/v1/test_helpers/advance_clock", {
      payload: Schema.Struct({ frozen_time: Schema.optional(Schema.String) }),
      success: Envelope(
        Schema.Struct({
          frozen_time: Schema.String.annotate({ description: "where the clock is now" }),
          target_time: Schema.String.annotate({ description: "the frozen_time asked for" }),
          complete: Schema.Boolean.annotate({
            description:
              "false when the request's work bound (2,000 items by default) stopped the clock before target_time; the advance then continues in the background (see GET /api/v1/test_helpers/clock)"
          })
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("clock", "/api/v1/test_helpers/clock", {
      success: Envelope(
        Schema.Struct({
          frozen_time: Schema.NullOr(Schema.String).annotate({ description: "where the clock is now" }),
          target_time: Schema.NullOr(Schema.String).annotate({
            description: "where a background advance is taking it, or null"
          }),
          advancing: Schema.Boolean
        })
      ),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox") {}

/**
 * Webhook events and endpoints (version 2 paths).
 *
 * @since 0.1.0
 */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("events", "/api/v2/webhook/events", {
      query: Schema.Struct({
        ...PageQuery,
        business_ids: QueryList,
        event_types: QueryList,
        event_statuses: QueryList
      }),
      success: Envelope(Page(Webhook.WebhookEvent)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("endpoints", "/api/v2/webhook/endpoints", {
      query: Schema.Struct({ ...PageQuery, status: QueryList }),
      success: Envelope(Page(Webhook.WebhookEndpoint)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createEndpoint", "/api/v2/webhook/endpoints", {
      payload: RequestBodies.WebhookEndpoint,
      success: Envelope(Schema.Struct({ id: Schema.String, secret: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateEndpoint", "/api/v2/webhook/endpoints/:endpoint_id", {
      params: Schema.Struct({ endpoint_id: Schema.String }),
      payload: RequestBodies.WebhookEndpoint,
      success: Envelope(Webhook.WebhookEndpoint),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("deleteEndpoint", "/api/v2/webhook/endpoints/:endpoint_id/delete", {
      params: Schema.Struct({ endpoint_id: Schema.String }),
      success: Envelope(Schema.Struct({})),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("resendEvent", "/api/v2/webhook/events/:event_id/resend", {
      params: Schema.Struct({ event_id: Schema.String }),
      success: Envelope(Webhook.WebhookEvent),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks") {}

/**
 * Declares what the middleware requires of every operation but no endpoint schema carries: the
 * `Request-Id` header (1..255 printable characters; the idempotency key of a POST), so Swagger's
 * "Try it out" and generated clients send it.
 */
const requestIdHeader = (spec: Record<string, any>): Record<string, any> => {
  const ref = { $ref: "#/components/parameters/RequestId" }
  const paths = Object.fromEntries(
    Object.entries(spec.paths ?? {}).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops as Record<string, any>).map(([method, op]) => [
          method,
          typeof op === "object" && op !== null && Array.isArray(op.security)
            ? { ...op, parameters: [...(op.parameters ?? []), ref] }
            : op
        ])
      )
    ])
  )
  return {
    ...spec,
    paths,
    components: {
      ...spec.components,
      parameters: {
        ...spec.components?.parameters,
        RequestId: {
          name: "Request-Id",
          in: "header",
          required: true,
          description:
            "1 to 255 printable characters, unique per request. A POST with a Request-Id already seen replays the stored answer (7 days); with another body it is 409 idempotency_conflict.",
          schema: { type: "string", minLength: 1, maxLength: 255 }
        }
      }
    }
  }
}

const SubscriptionDiscounts = Schema.Struct({
  subscription_id: Schema.String,
  discounts: Schema.Array(
    Schema.Struct({
      discount_id: Schema.String,
      discount_code: Schema.String,
      first_cycle: Schema.NullOr(Schema.Int),
      cycles: Schema.NullOr(Schema.Int)
    })
  )
})

/**
 * Discounts: percentage or fixed amount, for one, several or every paid cycle, with codes.
 *
 * @since 0.1.0
 */
export class DiscountsGroup extends HttpApiGroup.make("discounts")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/discounts", {
      payload: RequestBodies.CreateDiscount,
      success: Envelope(Schema.Struct({ discount: Discount.Discount })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/discounts", {
      query: Schema.Struct({ ...PageQuery, status: QueryList, code: QueryList }),
      success: Envelope(Page(Discount.Discount)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/discount/:discount_id", {
      params: Schema.Struct({ discount_id: Schema.String }),
      success: Envelope(Schema.Struct({ discount: Discount.Discount })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("end", "/api/v1/discount/:discount_id/end", {
      params: Schema.Struct({ discount_id: Schema.String }),
      success: Envelope(Schema.Struct({ discount: Discount.Discount })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("applyToSubscription", "/api/v1/subscription/:subscription_id/discount", {
      params: Schema.Struct({ subscription_id: Schema.String }),
      payload: RequestBodies.ApplyDiscount,
      success: Envelope(SubscriptionDiscounts),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("removeFromSubscription", "/api/v1/subscription/:subscription_id/discount/remove", {
      params: Schema.Struct({ subscription_id: Schema.String }),
      payload: RequestBodies.RemoveDiscount,
      success: Envelope(SubscriptionDiscounts),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Discounts") {}

/**
 * Tax rates: a percentage for a country and optional region, inclusive or exclusive.
 *
 * @since 0.1.0
 */
export class TaxRatesGroup extends HttpApiGroup.make("taxRates")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/tax_rates", {
      payload: RequestBodies.CreateTaxRate,
      success: Envelope(Schema.Struct({ tax_rate: Tax.TaxRate })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/tax_rates", {
      query: Schema.Struct({ ...PageQuery, status: QueryList, country: QueryList }),
      success: Envelope(Page(Tax.TaxRate)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/tax_rate/:tax_rate_id", {
      params: Schema.Struct({ tax_rate_id: Schema.String }),
      success: Envelope(Schema.Struct({ tax_rate: Tax.TaxRate })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("archive", "/api/v1/tax_rate/:tax_rate_id/archive", {
      params: Schema.Struct({ tax_rate_id: Schema.String }),
      success: Envelope(Schema.Struct({ tax_rate: Tax.TaxRate })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Tax rates") {}

/**
 * The customer portal: a signed, short-lived link to one customer's billing.
 *
 * @since 0.1.0
 */
export class PortalGroup extends HttpApiGroup.make("portal")
  .add(
    HttpApiEndpoint.post("createSession", "/api/v1/customer-portal/auth", {
      payload: RequestBodies.PortalSession,
      success: Envelope(Schema.Struct({ portal_session: PortalSession.PortalSession })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("revokeSession", "/api/v1/customer-portal/session/:portal_session_id/revoke", {
      params: Schema.Struct({ portal_session_id: Schema.String }),
      success: Envelope(Schema.Struct({ portal_session: PortalSession.PortalSession })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("settings", "/api/v1/portal_settings", {
      success: Envelope(PortalSession.PortalSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateSettings", "/api/v1/portal_settings", {
      payload: RequestBodies.PortalSettings,
      success: Envelope(PortalSession.PortalSettings),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customer portal") {}

/**
 * The whole API.
 *
 * @since 0.1.0
 */
export class BillingApi extends HttpApi.make("recur")
  .add(CustomersGroup)
  .add(CatalogGroup)
  .add(CheckoutGroup)
  .add(SubscriptionsGroup)
  .add(PaymentsGroup)
  .add(SandboxGroup)
  .add(WebhooksGroup)
  .add(DiscountsGroup)
  .add(TaxRatesGroup)
  .add(PortalGroup)
  .middleware(DecodeErrors)
  .annotate(OpenApi.Title, "Recur merchant API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Transform, (spec) => OpenApiDocument.describe(requestIdHeader(spec))) {}
