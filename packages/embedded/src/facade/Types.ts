/**
 * What the Promise facade takes and answers: the REST API's bodies with every enumerated field a
 * literal union and every field the engine requires required, and the REST API's JSON (fields
 * that decoding always fills are not optional).
 *
 * @since 0.1.0
 */
import type {
  Billing,
  BillingPeriod,
  CheckoutSession,
  Customer,
  Discount,
  Discounts,
  DunningPolicy,
  Entitlement,
  Invoice,
  InvoiceItem,
  Lifecycle,
  Merchant,
  Merchants,
  MeterEvents,
  Metering,
  PaymentMethods,
  PaymentSettings,
  Price,
  PriceChanges,
  PriceMigration,
  Product,
  PortalSession,
  Refund,
  Schedule,
  Subscription,
  Tax,
  Trade,
  Usage,
  Webhook,
  Webhooks
} from "@recur/core"
import type {
  CollectionRequests,
  CurrentUsage,
  InvoiceItemRequests,
  MeterEventRequests,
  RequestBodies
} from "@recur/contract"
import { type Effect, Schema } from "effect"

type Success<F extends (...args: never) => Effect.Effect<unknown, unknown, unknown>> = Effect.Success<ReturnType<F>>

/** The keys of `T` that are not optional. */
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T]

/**
 * The JSON of a schema as the engine writes it: its encoded form, with the fields decoding
 * fills by default (optional on the wire, always present in the decoded value) required.
 *
 * @since 0.1.0
 */
export type Answer<S extends Schema.Top> = Omit<S["Encoded"], RequiredKeys<S["Type"]> & keyof S["Encoded"]> & {
  readonly [K in RequiredKeys<S["Type"]> & keyof S["Encoded"]]-?: Exclude<S["Encoded"][K], undefined>
}

/** A product as the REST API returns it (`GET /api/v1/products` items). @since 0.1.0 */
export type ProductJson = Answer<typeof Product.Product>
/** A product category. @since 0.1.0 */
export type CategoryJson = Answer<typeof Product.Category>
/** A price version as the REST API returns it. @since 0.1.0 */
export type PriceJson = Answer<typeof Price.PriceVersion>
/** A customer as the REST API returns it. @since 0.1.0 */
export type CustomerJson = Answer<typeof Customer.Customer>
/** A checkout session as the REST API returns it (`session_url` is the hosted page). @since 0.1.0 */
export type CheckoutSessionJson = Answer<typeof CheckoutSession.CheckoutSession>
/** A subscription as the REST API returns it. @since 0.1.0 */
export type SubscriptionJson = Answer<typeof Subscription.Subscription>
/** A trade (one charge or refund movement) as the REST API returns it. @since 0.1.0 */
export type TradeJson = Answer<typeof Trade.Trade>
/** An invoice as the REST API returns it. @since 0.1.0 */
export type InvoiceJson = Answer<typeof Invoice.InvoiceView>
/** A subscription's collection setting, its own and the one in force. */
export type CollectionJson = typeof CollectionRequests.CollectionAnswer.Type
/** A discount as the REST API returns it. @since 0.1.0 */
export type DiscountJson = Answer<typeof Discount.Discount>

/** A subscription schedule, as `GET /api/v1/subscription/{subscription_id}/schedule` answers it. @since 0.1.0 */
export type ScheduleJson = Answer<typeof Schedule.SubscriptionSchedule>
/** What a subscription's next renewal will bill (`GET /api/v1/subscription/{id}/upcoming_invoice`). @since 0.1.0 */
export type UpcomingInvoiceJson = Answer<typeof Invoice.UpcomingInvoice>
/** A payment method update's answer. @since 0.1.0 */
export type PaymentMethodResultJson = Success<PaymentMethods.PaymentMethods["Service"]["updatePaymentMethod"]>
/** Who charges a merchant's customers, as JSON (never a secret). @since 0.1.0 */
export type PaymentSettingsJson = Answer<typeof PaymentSettings.PaymentSettingsView>
/** The merchant's proration and dunning settings as the REST API returns them. @since 0.1.0 */
export type BillingSettingsJson = Answer<typeof Merchant.BillingSettings>
/** The body of `POST /api/v1/invoices/{invoice_id}/edit`: an edit of a draft. @since 0.1.0 */
export interface EditDraftInput {
  readonly add_lines?: ReadonlyArray<{
    readonly description: string
    readonly amount: string
    readonly quantity?: number
  }>
  readonly remove_lines?: ReadonlyArray<number>
  readonly discount_id?: string
}
/** The body of `POST /api/v1/billing_settings`: the fields given change. @since 0.1.0 */
export interface BillingSettingsInput {
  /** `per_second`, `per_day` or `fixed_days(n)`. */
  readonly proration_policy?: string
  readonly proration_credit?: "refund" | "credit_balance"
  readonly dunning_final_state?: "unpaid" | "canceled"
  /** Days after the first failed renewal; `null`: the engine's default policy. */
  readonly dunning_retry_days?: ReadonlyArray<number> | null
  /**
   * What each class of decline does, `retry` (on the schedule) or `stop` (the invoice waits for
   * a new payment method): the classes given change; `null`: the engine's default policy.
   */
  readonly dunning_on_decline?: DeclineRulesInput | null
  /** How long a renewal's invoice stays an editable draft, in seconds (0 to 2592000; 0: finalised at once). */
  readonly invoice_draft_grace_seconds?: number
  /** Usage adjustments (late events, corrections) issued at once (`automatic`) or held for review (`review`). */
  readonly usage_adjustments?: "automatic" | "review"
}
/** What each class of decline does (the classes given). @since 0.1.0 */
export interface DeclineRulesInput {
  readonly hard?: "retry" | "stop"
  readonly soft?: "retry" | "stop"
  readonly expired_card?: "retry" | "stop"
}
/** The body of `POST /api/v1/dunning/preview`. @since 0.1.0 */
export interface DunningPreviewInput {
  /** The class of decline every charge meets. */
  readonly decline_class: "hard" | "soft" | "expired_card"
  /** When the renewal fails (RFC 3339); default the merchant's clock now. */
  readonly failed_at?: string
  /** A proposed policy: the fields given replace the merchant's policy in force. */
  readonly dunning_retry_days?: ReadonlyArray<number>
  readonly dunning_final_state?: "unpaid" | "canceled"
  readonly dunning_on_decline?: DeclineRulesInput
}
/** A dunning preview as the REST API returns it. @since 0.1.0 */
export type DunningPreviewJson = Answer<typeof DunningPolicy.Preview>
/** What a merchant's customers may do in the portal, as JSON. @since 0.1.0 */
export type PortalSettingsJson = Answer<typeof PortalSession.PortalSettings>
/** A customer portal session as JSON. @since 0.1.0 */
export type PortalSessionJson = Answer<typeof PortalSession.PortalSession>
/** A tax rate as JSON. @since 0.1.0 */
export type TaxRateJson = Answer<typeof Tax.TaxRate>
/** The discounts a subscription carries, each with its window of cycles. @since 0.1.0 */
export type SubscriptionDiscountsJson = Success<Discounts.Discounts["Service"]["applyToSubscription"]>
/** A refund as the REST API returns it. @since 0.1.0 */
export type RefundJson = Answer<typeof Refund.Refund>
/** A cycle's usage as the REST API returns it. @since 0.1.0 */
export type UsageSummaryJson = Answer<typeof Usage.UsageSummary>
/** A webhook endpoint as the REST API returns it (never its secret). @since 0.1.0 */
export type WebhookEndpointJson = Answer<typeof Webhook.WebhookEndpoint>
/** A webhook event and its delivery state as the REST API returns it. @since 0.1.0 */
export type WebhookEventJson = Answer<typeof Webhook.WebhookEvent>
/** A catalog migration as the REST API returns it. @since 0.1.0 */
export type PriceMigrationJson = Answer<typeof PriceMigration.PriceMigration>
/** One subscription of a catalog migration: its next invoice before and after, and its outcome. @since 0.1.0 */
export type PriceMigrationLineJson = Answer<typeof PriceMigration.PriceMigrationLine>
/** The body of `POST /api/v1/price/{price_id}/migrations`. @since 0.1.0 */
export interface CreatePriceMigrationInput {
  readonly from_version_id: string
  readonly to_version_id: string
  /** Only `next_cycle` (the default). */
  readonly effective?: "next_cycle"
}
/** One page of a list, newest first: `has_more` says whether a next page exists. @since 0.1.0 */
export interface PageJson<A> {
  readonly has_more: boolean
  readonly list: Array<A>
}

/**
 * What paying a checkout session did, discriminated by `status` ({@link PaymentOutcome}):
 * `succeeded` (with the subscription it started), `requires_action` (open `redirect_url` for
 * 3-D Secure), `processing`, `failed` (a decline: `error.code` is the decline code, never null)
 * or `unavailable` (nothing charged: `error.code` says why).
 *
 * @example
 * const paid = await billing.checkout.pay(merchantId, sessionId, card)
 * if (paid.status === "failed") console.log(paid.error.code) // "insufficient_funds"
 * @since 0.1.0
 */
export type PaymentJson =
  | PaymentOutcome<"succeeded", null>
  | PaymentOutcome<"requires_action", null>
  | PaymentOutcome<"processing", null>
  | PaymentOutcome<"failed", PaymentErrorJson>
  | PaymentOutcome<"unavailable", PaymentErrorJson>

/**
 * Why a payment did not go through: for a decline (`status: "failed"`) `code` is the decline
 * code (`card_declined`, `insufficient_funds`, `expired_card` …), the REST API's 402
 * `last_payment_error`; for `unavailable`, why the processor could not take the charge (nothing
 * was charged, not a decline).
 *
 * @since 0.1.0
 */
export interface PaymentErrorJson {
  readonly code: string
  readonly message: string
}

/**
 * One outcome of a payment, told by `status`: `succeeded` (the trade is paid; `subscription`
 * for a subscription's checkout, `redirect_url` the merchant's return URL when it set one),
 * `requires_action` (3-D Secure: send the payer to `redirect_url`), `processing` (the processor
 * will tell; nothing to do now), `failed` (declined: `error.code` is the decline code) or
 * `unavailable` (nothing charged; try again later). A decline is an outcome, not an exception:
 * `pay` resolves with it, as the REST API answers it (402 with `last_payment_error`).
 *
 * @since 0.1.0
 */
export interface PaymentOutcome<S extends Billing.PaymentResult["status"], E extends PaymentErrorJson | null> {
  readonly status: S
  readonly trade: TradeJson
  readonly subscription: SubscriptionJson | null
  readonly redirect_url: string | null
  readonly error: E
}

/** The proration quote of a price or quantity change (what `change` will charge or credit). @since 0.1.0 */
export type ChangePreview = Success<PriceChanges.PriceChanges["Service"]["previewChange"]>
/** One item of a subscription, as JSON. @since 0.1.0 */
export type SubscriptionItemJson = typeof Subscription.SubscriptionItem.Encoded
/** What an item change did: its quote and the items after. @since 0.1.0 */
export interface ItemChangeResult {
  readonly quote: ChangePreview
  readonly items: ReadonlyArray<SubscriptionItemJson>
}
/** What a price or quantity change did. @since 0.1.0 */
export type ChangeResult = Success<PriceChanges.PriceChanges["Service"]["changePrice"]>
/** What revoking a scheduled price change did (`no_pending_change` when none was scheduled). @since 0.1.0 */
export type RevokePriceChangeResult = Success<PriceChanges.PriceChanges["Service"]["revokePriceChange"]>
/** A recorded usage event (`duplicate: true` when its `event_id` was already recorded). @since 0.1.0 */
export type UsageRecorded = Success<Metering.Metering["Service"]["recordUsage"]>
/** A batch of usage events: how many were accepted and which were duplicates. @since 0.1.0 */
export type UsageBatchRecorded = Success<Metering.Metering["Service"]["recordUsageBatch"]>
/** A new webhook endpoint: its id and its `whsec_` signing secret (shown once). @since 0.1.0 */
export type WebhookEndpointCreated = Success<Webhooks.Webhooks["Service"]["create"]>
/** A created price: `price_id` as the REST API names it (`id` is the same value). @since 0.1.0 */
export type PriceCreatedJson = PriceJson & { readonly price_id: string }
/** A sandbox merchant's clock. @since 0.1.0 */
export interface ClockJson {
  /** The frozen time (RFC 3339), `null` when the merchant follows the real clock. */
  readonly frozen_time: string | null
  /** Where a background advance is heading, `null` when none runs. */
  readonly target_time: string | null
  readonly advancing: boolean
}

/** The body of a REST request, as plain data. */
type Body<S extends Schema.Top> = S["Encoded"]
/** A REST body with some fields replaced: narrowed to literal unions, or made required. */
type Narrow<B, N> = Omit<B, keyof N> & N

/** A recurring price's plan, its cycle unit a literal. @since 0.1.0 */
export type PricePlanInput = Narrow<
  Body<typeof RequestBodies.PricePlan>,
  { readonly billing_cycle_unit: typeof BillingPeriod.BillingCycleUnit.Type }
>

/**
 * A new price (`POST /api/v1/prices`): a name, its product, its currency, its billing and price
 * types are required; a recurring price needs `price_plan`, a one-time price `price_val`.
 *
 * @since 0.1.0
 */
export type CreatePriceInput = Narrow<
  Body<typeof RequestBodies.CreatePrice>,
  {
    readonly name: string
    readonly product_id: string
    readonly currency: string
    readonly billing_type: typeof Price.BillingType.Type
    readonly price_type: typeof Price.PriceType.Type
    readonly status?: typeof Lifecycle.PriceVersionStatus.Type
    readonly model_type?: typeof Price.ModelType.Type
    readonly payment_timing?: typeof Price.PaymentTiming.Type
    readonly billing_dimension?: "quantity" | "usage"
    readonly price_plan?: PricePlanInput
  }
>

/** A new product (`POST /api/v1/products`): its name is required. @since 0.1.0 */
export type CreateProductInput = Narrow<Body<typeof RequestBodies.CreateProduct>, { readonly product_name: string }>

/** A price or quantity change (`POST /api/v1/subscription/{id}`): a new price, a new quantity or both. @since 0.1.0 */
export type ChangeInput = Narrow<
  Omit<Body<typeof RequestBodies.ChangePrice>, "subscription_id" | "merchant_id">,
  {
    /** `immediate` (default) or at the current period's end. */
    readonly effective_type?: "immediate" | "end_of_period"
    /**
     * `always_invoice` or its alias `immediate` (default): credit and charge the rest of the period
     * now; `create_prorations`: record them as pending lines the next cycle's invoice bills;
     * `none`: no proration.
     */
    readonly proration?: "always_invoice" | "create_prorations" | "none" | "immediate"
  }
> &
  (
    | { readonly price_id: string; readonly quantity?: string }
    | { readonly price_id?: string; readonly quantity: string }
  )

/** A cancellation: `immediate` (default) or at the period's end. @since 0.1.0 */
export type CancelInput = Narrow<
  Body<typeof RequestBodies.Cancel>,
  { readonly cancel_type?: "immediate" | "end_of_period" }
>

/** A new discount (`POST /api/v1/discounts`). @since 0.1.0 */
export type CreateDiscountInput = Narrow<
  Body<typeof RequestBodies.CreateDiscount>,
  {
    readonly name: string
    readonly discount_type: typeof Discount.DiscountType.Type
    readonly duration?: typeof Discount.DiscountDuration.Type
  }
>

/** A webhook endpoint (`POST /api/v2/webhook/endpoints`): its URL is required. @since 0.1.0 */
export type WebhookEndpointInput = Narrow<
  Body<typeof RequestBodies.WebhookEndpoint>,
  { readonly url: string; readonly status?: typeof Lifecycle.EndpointStatus.Type }
>

/** Changes to a webhook endpoint (`POST /api/v2/webhook/endpoints/{id}`): the fields given change. @since 0.1.0 */
export type WebhookEndpointUpdate = Narrow<
  Body<typeof RequestBodies.WebhookEndpoint>,
  { readonly status?: typeof Lifecycle.EndpointStatus.Type }
>

/** A refund (`POST /api/v1/refund`): of a trade, all of it unless `amount` is given. @since 0.1.0 */
export type RefundInput = Narrow<Body<typeof RequestBodies.Refund>, { readonly trade_id: string }>

/** An invoice item (`POST /api/v1/invoice_items`). @since 0.1.0 */
export type CreateInvoiceItemInput = Narrow<
  Body<typeof InvoiceItemRequests.CreateInvoiceItem>,
  { readonly customer_id: string }
>

/** @since 0.1.0 */
export type CreateOneOffInvoiceInput = Narrow<
  Body<typeof InvoiceItemRequests.CreateOneOffInvoice>,
  { readonly customer_id: string }
>

/** @since 0.1.0 */
export type InvoiceItemJson = Answer<typeof InvoiceItem.InvoiceItem>

/** A tax rate (`POST /api/v1/tax_rates`). @since 0.1.0 */
export type CreateTaxRateInput = Narrow<
  Body<typeof RequestBodies.CreateTaxRate>,
  { readonly name: string; readonly percentage: string; readonly country: string }
>

/** Who charges the merchant's customers (`POST /api/v1/payment_settings`). @since 0.1.0 */
export type PaymentSettingsInput = Narrow<
  Body<typeof RequestBodies.PaymentSettings>,
  { readonly provider: "sandbox" | "stripe" }
>

/** A portal session (`POST /api/v1/customer-portal/auth`): for one customer. @since 0.1.0 */
export type PortalSessionInput = Narrow<Body<typeof RequestBodies.PortalSession>, { readonly customer_id: string }>

/** A new merchant (as the CLI's `recur merchants create`). @since 0.1.0 */
export type CreateMerchantInput = Merchants.CreateMerchant

/**
 * A usage event as the facade takes it: the REST body with `timestamp` in Unix milliseconds.
 *
 * @since 0.1.0
 */
export const UsageInput = Schema.Struct({
  usage_count: Schema.optional(Schema.Number),
  event_id: Schema.optional(Schema.String),
  timestamp: Schema.optional(Schema.Number)
})

/** One usage event: how many units (required), its idempotency id and its time in Unix ms. @since 0.1.0 */
export type UsageEventInput = Narrow<Body<typeof UsageInput>, { readonly usage_count: number }>

/** The decoding of a batch of usage events (the facade's shape of `POST /api/v1/usage/batch`). */
export const UsageBatchInput = Schema.Struct({
  records: Schema.Array(Schema.Struct({ subscription_id: Schema.optional(Schema.String), ...UsageInput.fields }))
})

/** Cursor pagination, as the REST lists take it: `limit` 1 to 100 (default 10). @since 0.1.0 */
export interface PageInput {
  readonly limit?: number
  readonly starting_after?: string
  readonly ending_before?: string
}

/** A customer's entitlements as `GET /api/v1/customer/{customer_id}/entitlements` returns them. */
export type CustomerEntitlementsJson = typeof Entitlement.CustomerEntitlements.Encoded
/** One feature as `GET /api/v1/customer/{customer_id}/entitlements/{feature}` returns it. */
export type EntitlementCheckJson = typeof Entitlement.EntitlementCheck.Encoded
/** The merchant's entitlement settings as `GET /api/v1/entitlement_settings` returns them. */
export type EntitlementSettingsJson = typeof Entitlement.EntitlementSettings.Encoded

/** A meter event (`POST /api/v1/meter_events`): `timestamp` RFC 3339 or Unix ms. @since 0.1.0 */
export type MeterEventInput = Body<typeof MeterEventRequests.MeterEvent>

/** A stored meter event. @since 0.1.0 */
export type MeterEventJson = MeterEvents.MeterEventView

/** What one event's ingestion did: the stored event, and whether it was a re-send. @since 0.1.0 */
export interface MeterEventSentJson {
  readonly event: MeterEventJson
  readonly duplicate: boolean
}

/** What a batch's (or a stream's) ingestion did: how many stored, which transaction ids were re-sends. @since 0.1.0 */
export interface MeterEventsSentJson {
  readonly accepted: number
  readonly duplicates: ReadonlyArray<string>
}

/** A subscription's current usage (`GET /api/v1/subscription/{id}/current_usage`). @since 0.1.0 */
export type CurrentUsageJson = CurrentUsage.CurrentUsage
