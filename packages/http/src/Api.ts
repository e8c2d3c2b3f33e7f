/**
 * The merchant REST API as one `HttpApi`: every path and method of the seed and the
 * contract's additions, importable without the handlers (for `HttpApiClient` and OpenAPI).
 *
 * @since 0.1.0
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { CheckoutSession, Common, Customer, Invoice, type Merchant, Price, Product, Refund, Subscription, Trade, Usage, Webhook } from "@recur/core"
import { Context, Schema } from "effect"
import * as ApiErrors from "./Errors.js"

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
export const Page = <A, I, R>(item: Schema.Codec<A, I, R>) => Schema.Struct({ has_more: Schema.Boolean, list: Schema.Array(item) })

/** A query array: repeated keys or one comma-separated value. */
const QueryList = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))

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
 * `Request-Id` header, on every endpoint.
 *
 * @since 0.1.0
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@recur/http/Authentication", {
  provides: CurrentMerchant,
  failure: Schema.Union(ApiErrors.Unauthorized, ApiErrors.InvalidParameter)
}) {}

const Address = Schema.Struct({
  line1: Schema.optional(Schema.String),
  line2: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  province: Schema.optional(Schema.String),
  postal_code: Schema.optional(Schema.String),
  country: Schema.optional(Schema.String)
})
const Metadata = Schema.Record({ key: Schema.String, value: Schema.String })

const CustomerBody = {
  email: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  address: Schema.optional(Address),
  metadata: Schema.optional(Metadata),
  payer_id: Schema.optional(Schema.String),
  email_subscription: Schema.optional(Schema.Literals([1, 2]))
}

const CustomerRef = Schema.Struct({ customer_id: Schema.optional(Schema.String), payer_id: Schema.optional(Schema.String) })

/**
 * Customers.
 *
 * @since 0.1.0
 */
export class CustomersGroup extends HttpApiGroup.make("customers")
  .add(HttpApiEndpoint.post("create", "/api/v1/front/customer/create").setPayload(Schema.Struct(CustomerBody)).addSuccess(Envelope(Schema.Struct({ customer_id: Schema.String }))))
  .add(HttpApiEndpoint.post("update", "/api/v1/front/customer/update").setPayload(Schema.Struct({ ...CustomerBody, customer_id: Schema.optional(Schema.String) })).addSuccess(Envelope(Schema.Struct({ customer_id: Schema.String }))))
  .add(HttpApiEndpoint.post("delete", "/api/v1/front/customer/delete").setPayload(CustomerRef).addSuccess(Envelope(Schema.Struct({}))))
  .add(HttpApiEndpoint.get("get", "/api/v1/front/customer/:customer_id").setPath(Schema.Struct({ customer_id: Schema.String })).addSuccess(Envelope(Schema.Struct({ customer: Customer.Customer }))))
  .add(
    HttpApiEndpoint.get("list", "/api/v1/front/customer")
      .setUrlParams(Schema.Struct({ ...PageQuery, customer_ids: QueryList, emails: QueryList, payer_ids: QueryList, type: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Page(Customer.Customer)))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customers") {}

const PricePlanPayload = Schema.Struct({
  plan_name: Schema.optional(Schema.String),
  billing_cycle_unit: Schema.optional(Schema.String),
  billing_cycle_count: Schema.optional(Schema.Number),
  is_infinite: Schema.optional(Schema.Boolean),
  base_price_val: Schema.optional(Schema.String),
  plan_description: Schema.optional(Schema.String),
  price_plan_tiers: Schema.optional(Schema.Array(Schema.Struct({
    period_count: Schema.Number,
    period_unit: Schema.optional(Schema.String),
    original_price: Schema.optional(Schema.String),
    due_price: Schema.optional(Schema.String),
    discount_type: Schema.optional(Schema.String),
    discount_value: Schema.optional(Schema.String)
  })))
})

/**
 * The body of `POST /api/v1/prices`.
 *
 * @since 0.1.0
 */
export const PricePayload = Schema.Struct({
  name: Schema.optional(Schema.String),
  product_id: Schema.optional(Schema.String),
  product_version_id: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  billing_type: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  price_type: Schema.optional(Schema.String),
  model_type: Schema.optional(Schema.String),
  billing_threshold: Schema.optional(Schema.String),
  trial_type: Schema.optional(Schema.Number),
  status: Schema.optional(Schema.String),
  payment_timing: Schema.optional(Schema.String),
  billing_dimension: Schema.optional(Schema.String),
  merchant_price_id: Schema.optional(Schema.String),
  price_val: Schema.optional(Schema.String),
  has_trial: Schema.optional(Schema.Boolean),
  trial_period: Schema.optional(Schema.Struct({ trial_period_unit: Schema.String, trial_period_count: Schema.Number })),
  price_plan: Schema.optional(PricePlanPayload),
  usage_amount: Schema.optional(Schema.String),
  usage_unit: Schema.optional(Schema.String),
  usage_unit_price: Schema.optional(Schema.String),
  usage_threshold: Schema.optional(Schema.String),
  features: Schema.optional(Schema.Array(Common.Feature)),
  trial_amount: Schema.optional(Schema.String),
  quantity_unit: Schema.optional(Schema.String),
  quantity_tiers: Schema.optional(Schema.Array(Common.QuantityTier)),
  quantity_tier_type: Schema.optional(Schema.String),
  usage_tiers: Schema.optional(Schema.Array(Common.UsageTier)),
  price_tier_type: Schema.optional(Schema.String),
  metadata: Schema.optional(Metadata)
})

/**
 * Products, categories and prices.
 *
 * @since 0.1.0
 */
export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(HttpApiEndpoint.get("categories", "/api/v1/product-categories").addSuccess(Envelope(Schema.Struct({ total: Schema.Int, list: Schema.Array(Product.Category) }))))
  .add(
    HttpApiEndpoint.post("createProduct", "/api/v1/products")
      .setPayload(Schema.Struct({
        product_name: Schema.optional(Schema.String), description: Schema.optional(Schema.String), category_id: Schema.optional(Schema.String),
        image_url: Schema.optional(Schema.String), merchant_product_id: Schema.optional(Schema.String), quantity_unit: Schema.optional(Schema.String),
        features: Schema.optional(Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, type: Schema.String }))), metadata: Schema.optional(Metadata),
        product_status: Schema.optional(Schema.Literals(["draft", "active"]))
      }))
      .addSuccess(Envelope(Schema.Struct({ product_id: Schema.String })))
  )
  .add(
    HttpApiEndpoint.post("productStatus", "/api/v1/product/:product_id/status")
      .setPath(Schema.Struct({ product_id: Schema.String }))
      .setPayload(Schema.Struct({ status: Schema.optional(Schema.String), product_status: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Schema.Struct({ product_id: Schema.String, product_status: Schema.String })))
  )
  .add(HttpApiEndpoint.get("products", "/api/v1/products").setUrlParams(Schema.Struct({ ...PageQuery, price_ids: QueryList, status: Schema.optional(Schema.String) })).addSuccess(Envelope(Page(Product.Product))))
  .add(HttpApiEndpoint.post("createPrice", "/api/v1/prices").setPayload(PricePayload).addSuccess(Envelope(Schema.Struct({ price_id: Schema.String, price_version_id: Schema.String, merchant_price_id: Schema.NullOr(Schema.String) }))))
  .add(
    HttpApiEndpoint.post("priceStatus", "/api/v1/prices/:price_version_id/status")
      .setPath(Schema.Struct({ price_version_id: Schema.String }))
      .setPayload(Schema.Struct({ price_version_id: Schema.optional(Schema.String), status: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Schema.Struct({ price_version_id: Schema.String })))
  )
  .add(HttpApiEndpoint.get("priceVersion", "/api/v1/prices/version/:price_version_id").setPath(Schema.Struct({ price_version_id: Schema.String })).addSuccess(Envelope(Price.PriceVersion)))
  .add(HttpApiEndpoint.get("prices", "/api/v1/prices").setUrlParams(Schema.Struct({ ...PageQuery, product_id: Schema.optional(Schema.String), status: Schema.optional(Schema.String) })).addSuccess(Envelope(Page(Price.PriceVersion))))
  .add(
    HttpApiEndpoint.get("priceVersions", "/api/v1/price/:price_id/versions")
      .setPath(Schema.Struct({ price_id: Schema.String }))
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Envelope(Page(Price.PriceVersion)))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Catalog") {}

/**
 * The body of `POST /api/v1/session`.
 *
 * @since 0.1.0
 */
export const SessionPayload = Schema.Struct({
  order_id: Schema.optional(Schema.String),
  line_items: Schema.optional(Schema.Array(Schema.Struct({
    price_id: Schema.optional(Schema.String),
    quantity: Schema.optional(Schema.String),
    quantity_editable: Schema.optional(Schema.Boolean),
    quantity_min: Schema.optional(Schema.String),
    quantity_max: Schema.optional(Schema.String)
  }))),
  customer_id: Schema.optional(Schema.String),
  payer_id: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  mode: Schema.optional(Schema.Literals(["checkout", "payment"])),
  return_url: Schema.optional(Schema.String),
  cancel_url: Schema.optional(Schema.String),
  target_currency: Schema.optional(Schema.String),
  merchant_rate: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  metadata: Schema.optional(Metadata),
  integration_method: Schema.optional(Schema.Literals(["hosted", "embedded"])),
  redirect_on_completion: Schema.optional(Schema.Literals(["always", "if_required"])),
  locale: Schema.optional(CheckoutSession.Locale),
  payment_mode: Schema.optional(Schema.Literals(["onetime_payment", "subscription"])),
  trial_policy: Schema.optional(Schema.Literals([1, 2, 3])),
  total_cycles: Schema.optional(Schema.Number),
  convert_to_continuous: Schema.optional(Schema.Boolean),
  product_type: Schema.optional(CheckoutSession.ProductType),
  terms_of_service_url: Schema.optional(Schema.String),
  privacy_policy_url: Schema.optional(Schema.String),
  first_source_channel: Schema.optional(Schema.String),
  billing_address: Schema.optional(Schema.Struct({
    name: Schema.optional(Schema.String), address_line1: Schema.optional(Schema.String), address_line2: Schema.optional(Schema.String),
    country_code: Schema.optional(Schema.String), province_code: Schema.optional(Schema.String), city: Schema.optional(Schema.String),
    area: Schema.optional(Schema.String), postal_code: Schema.optional(Schema.String), phone: Schema.optional(Schema.String),
    phone_area_code: Schema.optional(Schema.String), email: Schema.optional(Schema.String)
  })),
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String)
})

/**
 * Checkout sessions.
 *
 * @since 0.1.0
 */
export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(HttpApiEndpoint.post("create", "/api/v1/session").setPayload(SessionPayload).addSuccess(Envelope(Schema.Struct({ session_id: Schema.String, session_url: Schema.String }))))
  .add(HttpApiEndpoint.get("get", "/api/v1/session/:session_id").setPath(Schema.Struct({ session_id: Schema.String })).addSuccess(Envelope(Schema.Struct({ session: CheckoutSession.CheckoutSession }))))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Checkout sessions") {}

const SubscriptionPath = Schema.Struct({ subscription_id: Schema.String })
const ChangePayload = Schema.Struct({
  subscription_id: Schema.optional(Schema.String),
  merchant_id: Schema.optional(Schema.String),
  price_id: Schema.optional(Schema.String),
  effective_type: Schema.optional(Schema.String),
  proration: Schema.optional(Schema.String),
  quantity: Schema.optional(Schema.String),
  quote_id: Schema.optional(Schema.String)
})
const StatusResult = Envelope(Schema.Struct({ subscription_id: Schema.String, status: Schema.String }))
const Quote = Schema.Struct({
  quote_id: Schema.String, subscription_id: Schema.String, effective_type: Schema.String, proration: Schema.String,
  currency: Schema.String, credit: Schema.String, charge: Schema.String, net: Schema.String, outcome: Schema.String,
  lines: Schema.Array(Schema.Struct({ description: Schema.String, amount: Schema.String })), effective_at: Schema.String
})

/**
 * Subscriptions: reads, changes, lifecycle and usage.
 *
 * @since 0.1.0
 */
export class SubscriptionsGroup extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/subscription")
      .setUrlParams(Schema.Struct({
        ...PageQuery, subscription_ids: QueryList, status: QueryList, merchant_id: Schema.optional(Schema.String), order_ids: QueryList,
        source_trade_id: QueryList, billing_cycle_unit: Schema.optional(Schema.String), search_type: Schema.optional(Schema.String), search_value: Schema.optional(Schema.String)
      }))
      .addSuccess(Envelope(Page(Subscription.Subscription)))
  )
  .add(HttpApiEndpoint.get("get", "/api/v1/subscription/:subscription_id").setPath(SubscriptionPath).addSuccess(Envelope(Schema.Struct({ subscription: Subscription.Subscription }))))
  .add(HttpApiEndpoint.post("change", "/api/v1/subscription/:subscription_id").setPath(SubscriptionPath).setPayload(ChangePayload).addSuccess(Envelope(Schema.Struct({}))))
  .add(HttpApiEndpoint.post("previewChange", "/api/v1/subscription/:subscription_id/preview-change").setPath(SubscriptionPath).setPayload(ChangePayload).addSuccess(Envelope(Quote)))
  .add(
    HttpApiEndpoint.post("revokePriceChange", "/api/v1/subscription/:subscription_id/revoke-price-change")
      .setPath(SubscriptionPath)
      .addSuccess(Envelope(Schema.Struct({ subscription_id: Schema.String, result: Schema.Literals(["revoked", "no_pending_change"]) })))
  )
  .add(HttpApiEndpoint.post("cancel", "/api/v1/subscription/:subscription_id/cancel").setPath(SubscriptionPath).setPayload(Schema.Struct({ cancel_type: Schema.optional(Schema.String), cancel_reason: Schema.optional(Schema.String) })).addSuccess(StatusResult))
  .add(HttpApiEndpoint.post("revokeCancel", "/api/v1/subscription/:subscription_id/revoke-cancel").setPath(SubscriptionPath).addSuccess(StatusResult))
  .add(HttpApiEndpoint.post("pause", "/api/v1/subscription/:subscription_id/pause").setPath(SubscriptionPath).addSuccess(StatusResult))
  .add(HttpApiEndpoint.post("resume", "/api/v1/subscription/:subscription_id/resume").setPath(SubscriptionPath).addSuccess(StatusResult))
  .add(HttpApiEndpoint.post("renewal", "/api/v1/subscription/:subscription_id/renewal").setPath(SubscriptionPath).addSuccess(StatusResult))
  .add(
    HttpApiEndpoint.get("usage", "/api/v1/subscription/:subscription_id/usage")
      .setPath(SubscriptionPath)
      .setUrlParams(Schema.Struct({ merchant_id: Schema.optional(Schema.String), cycle_index: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Usage.UsageSummary))
  )
  .add(
    HttpApiEndpoint.post("recordUsage", "/api/v1/subscription/:subscription_id/usage")
      .setPath(SubscriptionPath)
      .setPayload(Schema.Struct({ usage_count: Schema.optional(Schema.Number), event_id: Schema.optional(Schema.String), timestamp: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Schema.Struct({ subscription_id: Schema.String, cycle_index: Schema.Int, usage_count: Schema.Int, duplicate: Schema.Boolean })))
  )
  .add(
    HttpApiEndpoint.post("recordUsageBatch", "/api/v1/usage/batch")
      .setPayload(Schema.Struct({
        records: Schema.Array(Schema.Struct({ subscription_id: Schema.optional(Schema.String), usage_count: Schema.optional(Schema.Number), event_id: Schema.optional(Schema.String), timestamp: Schema.optional(Schema.String) }))
      }))
      .addSuccess(Envelope(Schema.Struct({
        accepted: Schema.Int,
        duplicates: Schema.Int,
        records: Schema.Array(Schema.Struct({ subscription_id: Schema.String, event_id: Schema.String, cycle_index: Schema.Int, usage_count: Schema.Int, duplicate: Schema.Boolean }))
      })))
      .annotate(OpenApi.Description, "Records up to 1,000 usage events of any of the merchant's usage-billed subscriptions in one transaction. Re-sent event_ids are reported as duplicates and not counted again; a bad record rejects the whole batch (the error names records[i]).")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Subscriptions") {}

/**
 * Trades, invoices and refunds.
 *
 * @since 0.1.0
 */
export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.get("trades", "/api/v1/trades")
      .setUrlParams(Schema.Struct({ ...PageQuery, trade_ids: QueryList, trade_status: QueryList, order_ids: QueryList, customer_id: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Page(Trade.Trade)))
  )
  .add(HttpApiEndpoint.get("trade", "/api/v1/trade/:trade_id").setPath(Schema.Struct({ trade_id: Schema.String })).addSuccess(Envelope(Schema.Struct({ trade: Trade.Trade }))))
  .add(
    HttpApiEndpoint.get("invoices", "/api/v1/invoices")
      .setUrlParams(Schema.Struct({
        ...PageQuery, invoice_ids: QueryList, trade_ids: QueryList, order_ids: QueryList, subscription_id: Schema.optional(Schema.String),
        customer_id: Schema.optional(Schema.String), biz_status: QueryList, invoice_types: QueryList
      }))
      .addSuccess(Envelope(Page(Invoice.Invoice)))
  )
  .add(HttpApiEndpoint.get("invoice", "/api/v1/invoice/:invoice_id").setPath(Schema.Struct({ invoice_id: Schema.String })).addSuccess(Envelope(Schema.Struct({ invoice: Invoice.Invoice }))))
  .add(
    HttpApiEndpoint.post("refund", "/api/v1/refund")
      .setPayload(Schema.Struct({ trade_id: Schema.optional(Schema.String), amount: Schema.optional(Schema.String), reason: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Schema.Struct({ refund_id: Schema.String, refund_status: Schema.String })))
  )
  .add(HttpApiEndpoint.get("getRefund", "/api/v1/refund/:refund_id").setPath(Schema.Struct({ refund_id: Schema.String })).addSuccess(Envelope(Schema.Struct({ refund: Refund.Refund }))))
  .add(HttpApiEndpoint.get("refunds", "/api/v1/refunds").setUrlParams(Schema.Struct(PageQuery)).addSuccess(Envelope(Page(Refund.Refund))))
  .add(
    HttpApiEndpoint.get("tradeRefunds", "/api/v1/trades/:trade_id/refunds")
      .setPath(Schema.Struct({ trade_id: Schema.String }))
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Envelope(Page(Refund.Refund)))
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
    HttpApiEndpoint.post("advanceClock", "/api/v1/test_helpers/advance_clock")
      .setPayload(Schema.Struct({ frozen_time: Schema.optional(Schema.String) }))
      .addSuccess(Envelope(Schema.Struct({ frozen_time: Schema.String })))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox") {}

const EndpointPayload = Schema.Struct({
  url: Schema.optional(Schema.String),
  desc: Schema.optional(Schema.String),
  all_events: Schema.optional(Schema.Boolean),
  event_types: Schema.optional(Schema.Array(Schema.String)),
  event_version: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String)
})

/**
 * Webhook events and endpoints (version 2 paths).
 *
 * @since 0.1.0
 */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("events", "/api/v2/webhook/events")
      .setUrlParams(Schema.Struct({ ...PageQuery, business_ids: QueryList, event_types: QueryList, event_statuses: QueryList }))
      .addSuccess(Envelope(Page(Webhook.WebhookEvent)))
  )
  .add(HttpApiEndpoint.get("endpoints", "/api/v2/webhook/endpoints").setUrlParams(Schema.Struct({ ...PageQuery, status: QueryList })).addSuccess(Envelope(Page(Webhook.WebhookEndpoint))))
  .add(HttpApiEndpoint.post("createEndpoint", "/api/v2/webhook/endpoints").setPayload(EndpointPayload).addSuccess(Envelope(Schema.Struct({ id: Schema.String, secret: Schema.String }))))
  .add(HttpApiEndpoint.post("updateEndpoint", "/api/v2/webhook/endpoints/:endpoint_id").setPath(Schema.Struct({ endpoint_id: Schema.String })).setPayload(EndpointPayload).addSuccess(Envelope(Webhook.WebhookEndpoint)))
  .add(HttpApiEndpoint.post("deleteEndpoint", "/api/v2/webhook/endpoints/:endpoint_id/delete").setPath(Schema.Struct({ endpoint_id: Schema.String })).addSuccess(Envelope(Schema.Struct({}))))
  .add(HttpApiEndpoint.post("resendEvent", "/api/v2/webhook/events/:event_id/resend").setPath(Schema.Struct({ event_id: Schema.String })).addSuccess(Envelope(Webhook.WebhookEvent)))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks") {}

/**
 * The platform's built-in `HttpApiDecodeError` never reaches a client: the adapter answers every
 * decode failure as `InvalidParameter` in the envelope, so the document says exactly that.
 */
function withoutDecodeError(spec: Record<string, any>): Record<string, any> {
  const ref = "#/components/schemas/HttpApiDecodeError"
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.filter((n) => !(n && typeof n === "object" && (n as any).$ref === ref)).map(strip)
    if (node && typeof node === "object") {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(node)) out[k] = strip(v)
      const anyOf = out.anyOf as Array<unknown> | undefined
      if (anyOf && anyOf.length === 1 && Object.keys(out).length === 1) return anyOf[0]
      return out
    }
    return node
  }
  const { HttpApiDecodeError: _d, Issue: _i, PropertyKey: _p, ...schemas } = spec.components?.schemas ?? {}
  return withBearer(strip({ ...spec, components: { ...spec.components, schemas } }) as Record<string, any>)
}

/**
 * Declares the API key as an HTTP bearer scheme, required by every operation of the document
 * (every group is authenticated; the hosted checkout pages and `/healthz` are served outside it),
 * so generated clients send `Authorization: Bearer <key>` on their own.
 */
function withBearer(spec: Record<string, any>): Record<string, any> {
  return {
    ...spec,
    security: [{ bearer: [] }],
    components: {
      ...spec.components,
      securitySchemes: { ...spec.components?.securitySchemes, bearer: { type: "http", scheme: "bearer", description: "A merchant API key (sk_live_… or sk_test_…)." } }
    }
  }
}

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
  .addError(ApiErrors.InvalidParameter)
  .addError(ApiErrors.InvalidRequest)
  .addError(ApiErrors.Unauthorized)
  .addError(ApiErrors.PaymentFailed)
  .addError(ApiErrors.NotFound)
  .addError(ApiErrors.Conflict)
  .addError(ApiErrors.RateLimited)
  .addError(ApiErrors.SystemError)
  .annotate(OpenApi.Title, "Recur merchant API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Transform, withoutDecodeError) {}

