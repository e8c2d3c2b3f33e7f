/**
 * The Promise API of {@link createBilling}: one group per REST group, one method per REST
 * operation (the HTTP-only ones are listed in `packages/http/test/FacadeParity.test.ts` with
 * their reason).
 *
 * @since 0.1.0
 */
import type { Context } from "effect"
import type { CollectionRequests, ItemRequests, RequestBodies, ScheduleRequests } from "@recur/contract"
import type { Lifecycle } from "@recur/core"
import type { Services } from "../createBilling.js"
import type * as T from "./Types.js"
import type { UsageAdjustmentsClient } from "./UsageAdjustments.js"
import type { NotificationJson, NotificationSettingsInput, NotificationSettingsJson } from "./Notifications.js"
import type {
  AdjustBalanceInput,
  BalanceTransactionJson,
  CreditNoteInput,
  CreditNoteJson,
  CustomerBalanceJson
} from "./Balances.js"
import type {
  BillableMetricJson,
  CreateBillableMetricInput,
  ListBillableMetricsInput,
  UpdateBillableMetricInput
} from "./BillableMetrics.js"
import type {
  AutoTopUpJson,
  CreateCreditGrantInput,
  CreateTopUpInput,
  CreditGrantJson,
  SetAutoTopUpInput
} from "./CreditGrants.js"
import type {
  CreateUsageAlertInput,
  ListUsageAlertsInput,
  ProgressiveBillingJson,
  UsageAlertJson
} from "./UsageAlerts.js"

type Body<S extends { readonly Encoded: unknown }> = S["Encoded"]

/**
 * The Promise API returned by `createBilling`. Every method takes the REST API's body for the
 * same operation (checked the same way) and resolves with the REST API's JSON; failures reject
 * with a `RecurError` subclass carrying the REST code and status.
 *
 * @since 0.1.0
 */
export interface BillingClient {
  /** What a customer's subscriptions grant, as committed: "may this customer use this feature?" */
  readonly entitlements: {
    /**
     * `GET /api/v1/customer/{customer_id}/entitlements/{feature}`: the feature's value (`null` when no
     * granting subscription has it) and whether it is enabled (`true`, or a number above 0).
     */
    readonly check: (merchantId: string, customerId: string, feature: string) => Promise<T.EntitlementCheckJson>
    /**
     * `GET /api/v1/customer/{customer_id}/entitlements`: the merged features of the customer's
     * subscriptions that grant (booleans OR, numbers the largest) and their ids.
     */
    readonly list: (merchantId: string, customerId: string) => Promise<T.CustomerEntitlementsJson>
    /**
     * `POST /api/v1/product/{product_id}/entitlements`: replaces the features the product declares
     * (customers' entitlements follow on the next read; no event is sent for this change).
     */
    readonly setProductEntitlements: (
      merchantId: string,
      productId: string,
      entitlements: Readonly<Record<string, boolean | number>>
    ) => Promise<{ product_id: string; entitlements: Record<string, boolean | number> }>
    /** `GET /api/v1/entitlement_settings`: the subscription states that grant. */
    readonly settings: (merchantId: string) => Promise<T.EntitlementSettingsJson>
    /**
     * `POST /api/v1/entitlement_settings`: `granting_statuses` among trial, active, past_due,
     * paused, unpaid (`null`: the default trial, active, past_due).
     */
    readonly updateSettings: (
      merchantId: string,
      input: (typeof RequestBodies.EntitlementSettings)["Encoded"]
    ) => Promise<T.EntitlementSettingsJson>
  }
  readonly merchants: {
    /** Creates a merchant; resolves with its id and its API key (shown once). No REST route: the CLI's `recur merchants create`. */
    readonly create: (input: T.CreateMerchantInput) => Promise<{ merchant_id: string; api_key: string }>
    /** `GET /api/v1/invoice_settings`: what the merchant's invoice numbers start with. */
    readonly invoiceSettings: (merchantId: string) => Promise<{ invoice_prefix: string }>
    /**
     * What the merchant's next invoice numbers start with (`POST /api/v1/invoice_settings`): 3 to
     * 12 uppercase letters and digits; a new prefix starts its own sequences at 1.
     */
    readonly setInvoicePrefix: (merchantId: string, prefix: string) => Promise<{ invoice_prefix: string }>
    /**
     * `GET /api/v1/billing_settings`: how the merchant's changes are prorated (`proration_policy`,
     * `proration_credit`) and its failed renewals retried (`dunning_final_state`, `dunning_retry_days`).
     */
    readonly billingSettings: (merchantId: string) => Promise<T.BillingSettingsJson>
    /**
     * `POST /api/v1/billing_settings`: the fields given change, the others stay (`dunning_retry_days:
     * null` returns to the engine's default); applies from the next change, renewal or failed payment on.
     */
    readonly setBillingSettings: (merchantId: string, input: T.BillingSettingsInput) => Promise<T.BillingSettingsJson>
    /**
     * `POST /api/v1/dunning/preview`: the timeline of a failed renewal whose every charge is
     * declined with `decline_class`, under the merchant's dunning policy or a proposed one (the
     * fields given replace it), on the merchant's clock: each retry's instant and the end (the
     * subscription's final status, what the invoice then waits for). Nothing is written.
     */
    readonly dunningPreview: (merchantId: string, input: T.DunningPreviewInput) => Promise<T.DunningPreviewJson>
    /** `GET /api/v1/dispute_settings`. */
    readonly disputeSettings: (merchantId: string) => Promise<{ fraud_dispute_renewals: "hold" | "charge" }>
    /**
     * `POST /api/v1/dispute_settings`: whether renewals of a subscription under an open fraud
     * dispute are held (`hold`, the default) or charged (`charge`).
     */
    readonly setDisputeSettings: (
      merchantId: string,
      settings: { readonly fraud_dispute_renewals: "hold" | "charge" }
    ) => Promise<{ fraud_dispute_renewals: "hold" | "charge" }>
    /** `GET /api/v1/payment_settings`: who charges the merchant's customers (never a secret). */
    readonly paymentSettings: (merchantId: string) => Promise<T.PaymentSettingsJson>
    /**
     * `POST /api/v1/payment_settings`: `sandbox`, or `stripe` with a secret and a publishable key of
     * the merchant's mode and optionally the webhook signing secret (stored encrypted).
     */
    readonly setPaymentSettings: (merchantId: string, input: T.PaymentSettingsInput) => Promise<T.PaymentSettingsJson>
  }
  readonly catalog: {
    /** `GET /api/v1/product-categories`. */
    readonly categories: (merchantId: string) => Promise<{ total: number; list: Array<T.CategoryJson> }>
    /** `POST /api/v1/products`. */
    readonly createProduct: (merchantId: string, input: T.CreateProductInput) => Promise<T.ProductJson>
    /** `POST /api/v1/product/{product_id}/status`: `active` or `disabled`. */
    readonly setProductStatus: (
      merchantId: string,
      productId: string,
      status: "active" | "disabled"
    ) => Promise<{ product_id: string; product_status: string }>
    /** `GET /api/v1/products`: newest first, optionally by status and price. */
    readonly listProducts: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly status?: "draft" | "active" | "disabled"
        readonly price_ids?: ReadonlyArray<string>
      }
    ) => Promise<T.PageJson<T.ProductJson>>
    /** `POST /api/v1/prices`: a price and its first version (`price_id`, `price_version_id`). */
    readonly createPrice: (merchantId: string, input: T.CreatePriceInput) => Promise<T.PriceCreatedJson>
    /** `POST /api/v1/prices/{price_version_id}/status`. */
    readonly setPriceStatus: (
      merchantId: string,
      priceVersionId: string,
      status: "draft" | "active" | "frozen"
    ) => Promise<{ price_version_id: string }>
    /** `GET /api/v1/prices/version/{price_version_id}`. */
    readonly getPriceVersion: (merchantId: string, priceVersionId: string) => Promise<T.PriceJson>
    /**
     * `GET /api/v1/prices`: newest first, optionally of one product or status. Private prices
     * are listed only with `customer_id`: that customer's catalog (the public prices and theirs).
     */
    readonly listPrices: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly product_id?: string
        readonly status?: "draft" | "active" | "frozen"
        readonly customer_id?: string
      }
    ) => Promise<T.PageJson<T.PriceJson>>
    /** `GET /api/v1/price/{price_id}/versions`. */
    readonly listPriceVersions: (
      merchantId: string,
      priceId: string,
      filter?: T.PageInput
    ) => Promise<T.PageJson<T.PriceJson>>
    /**
     * `POST /api/v1/price/{price_id}/versions`: a new version of the price (its product and
     * customer are the price's); created active, it is the one new checkouts sell.
     */
    readonly createPriceVersion: (
      merchantId: string,
      priceId: string,
      input: Omit<T.CreatePriceInput, "product_id">
    ) => Promise<T.PriceJson>
    /**
     * `POST /api/v1/price/{price_id}/migrations`: previews moving the subscriptions of
     * `from_version_id` to `to_version_id` from their next cycle — a `previewed` migration whose
     * lines show each next invoice before and after.
     */
    readonly createMigration: (
      merchantId: string,
      priceId: string,
      input: T.CreatePriceMigrationInput
    ) => Promise<T.PriceMigrationJson>
    /** `GET /api/v1/price/{price_id}/migrations/{migration_id}`. */
    readonly getMigration: (merchantId: string, priceId: string, migrationId: string) => Promise<T.PriceMigrationJson>
    /** `GET /api/v1/price/{price_id}/migrations/{migration_id}/lines`: newest first, optionally of one outcome. */
    readonly listMigrationLines: (
      merchantId: string,
      priceId: string,
      migrationId: string,
      filter?: T.PageInput & { readonly outcome?: "pending" | "migrated" | "skipped" }
    ) => Promise<T.PageJson<T.PriceMigrationLineJson>>
    /** `POST /api/v1/price/{price_id}/migrations/{migration_id}/run`: the worker moves each subscription once. */
    readonly runMigration: (merchantId: string, priceId: string, migrationId: string) => Promise<T.PriceMigrationJson>
    /** `POST /api/v1/price/{price_id}/migrations/{migration_id}/cancel`: only before it runs. */
    readonly cancelMigration: (
      merchantId: string,
      priceId: string,
      migrationId: string
    ) => Promise<T.PriceMigrationJson>
  }
  readonly customers: {
    /** `POST /api/v1/front/customer/create`: the customer, with `customer_id` as REST answers it. */
    readonly create: (
      merchantId: string,
      input: Body<typeof RequestBodies.CreateCustomer>
    ) => Promise<T.CustomerJson & { readonly customer_id: string }>
    /** `POST /api/v1/front/customer/update`: the fields given change. */
    readonly update: (
      merchantId: string,
      customerId: string,
      input: Omit<Body<typeof RequestBodies.UpdateCustomer>, "customer_id">
    ) => Promise<T.CustomerJson>
    /**
     * `POST /api/v1/front/customer/delete`: the customer is gone from reads (its history stays)
     * and its portal links stop working at once.
     */
    readonly delete: (merchantId: string, customerId: string) => Promise<void>
    /** `GET /api/v1/front/customer/{customer_id}`. */
    readonly get: (merchantId: string, customerId: string) => Promise<T.CustomerJson>
    /** `GET /api/v1/front/customer`: newest first, optionally by ids, emails, payer ids or type. */
    readonly list: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly customer_ids?: ReadonlyArray<string>
        readonly emails?: ReadonlyArray<string>
        readonly payer_ids?: ReadonlyArray<string>
        readonly type?: "customer" | "guest"
      }
    ) => Promise<T.PageJson<T.CustomerJson>>
    /**
     * `POST /api/v1/customers/{customer_id}/auto_top_up`: when an invoice's credit leaves the
     * balance in `currency` under `threshold`, `amount` is charged to the card on file and granted.
     */
    readonly autoTopUp: (merchantId: string, customerId: string, input: SetAutoTopUpInput) => Promise<AutoTopUpJson>
  }
  /**
   * Prepaid credits: grants of credit on a customer's balance (applied by its invoices,
   * earliest-expiring first), and top-ups the customer buys.
   */
  readonly creditGrants: {
    /** `POST /api/v1/customers/{customer_id}/credit_grants`: a grant (no money moves). */
    readonly create: (merchantId: string, customerId: string, input: CreateCreditGrantInput) => Promise<CreditGrantJson>
    /** `GET /api/v1/customers/{customer_id}/credit_grants`: newest first. */
    readonly list: (merchantId: string, customerId: string, input?: T.PageInput) => Promise<T.PageJson<CreditGrantJson>>
    /** `GET /api/v1/credit_grants/{credit_grant_id}`. */
    readonly get: (merchantId: string, grantId: string) => Promise<CreditGrantJson>
    /** `POST /api/v1/credit_grants/{credit_grant_id}/void`: what remains leaves the balance. */
    readonly void: (merchantId: string, grantId: string) => Promise<CreditGrantJson>
    /**
     * `POST /api/v1/customers/{customer_id}/credit_top_ups`: charges `amount` and grants it once
     * the charge succeeded (a decline grants nothing).
     */
    readonly topUp: (merchantId: string, customerId: string, input: CreateTopUpInput) => Promise<CreditGrantJson>
  }
  readonly checkout: {
    /** `POST /api/v1/session`: a checkout session and its hosted page's URL. */
    readonly createSession: (
      merchantId: string,
      input: Body<typeof RequestBodies.CreateSession>
    ) => Promise<T.CheckoutSessionJson>
    /** `GET /api/v1/session/{session_id}`. */
    readonly getSession: (merchantId: string, sessionId: string) => Promise<T.CheckoutSessionJson>
    /**
     * Pays a session with a card (the hosted page's form, without the page), or with a payment
     * method the processor's form collected (`{ payment_method: "pm_…" }`, Stripe).
     */
    readonly pay: (
      merchantId: string,
      sessionId: string,
      card: Body<typeof RequestBodies.Payment>
    ) => Promise<T.PaymentJson>
  }
  readonly subscriptions: {
    /** `GET /api/v1/subscription`: newest first, optionally by ids, statuses or customer. */
    readonly list: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly subscription_ids?: ReadonlyArray<string>
        readonly status?: ReadonlyArray<SubscriptionStatus>
        readonly customer_id?: string
        readonly billing_cycle_unit?: T.PricePlanInput["billing_cycle_unit"]
      }
    ) => Promise<T.PageJson<T.SubscriptionJson>>
    /** `GET /api/v1/subscription/{subscription_id}`. */
    readonly get: (merchantId: string, id: string) => Promise<T.SubscriptionJson>
    /** `POST /api/v1/subscription/{subscription_id}/preview-change`: the quote of a change, nothing changed. */
    readonly previewChange: (merchantId: string, id: string, input: T.ChangeInput) => Promise<T.ChangePreview>
    /** `POST /api/v1/subscription/{subscription_id}`: a new price or quantity, prorated. */
    readonly change: (merchantId: string, id: string, input: T.ChangeInput) => Promise<T.ChangeResult>
    /** `POST /api/v1/subscription/{subscription_id}/revoke-price-change`: drops every change waiting for the next cycle (prices and quantities). */
    readonly revokePriceChange: (merchantId: string, id: string) => Promise<T.RevokePriceChangeResult>
    /** `POST /api/v1/subscription/{subscription_id}/cancel`: at once (default) or at the period's end. */
    readonly cancel: (merchantId: string, id: string, input?: T.CancelInput) => Promise<T.SubscriptionJson>
    /** `POST /api/v1/subscription/{subscription_id}/revoke-cancel`: drops a cancellation scheduled for the period's end. */
    readonly revokeCancel: (merchantId: string, id: string) => Promise<T.SubscriptionJson>
    /** `POST /api/v1/subscription/{subscription_id}/pause`. */
    readonly pause: (merchantId: string, id: string) => Promise<T.SubscriptionJson>
    /**
     * `POST /api/v1/subscription/{subscription_id}/collection_method`: how its next invoices are
     * collected — `send_invoice` with `days_until_due` (1 to 365), `charge_automatically`, or
     * `null` to follow its customer's setting.
     */
    readonly setCollection: (
      merchantId: string,
      id: string,
      input: Body<typeof CollectionRequests.SetCollection>
    ) => Promise<T.CollectionJson>
    /** `POST /api/v1/subscription/{subscription_id}/resume`. */
    readonly resume: (merchantId: string, id: string) => Promise<T.SubscriptionJson>
    /** `POST /api/v1/subscription/{subscription_id}/renewal`: renews now (a past-due one retries its payment). */
    readonly renewNow: (merchantId: string, id: string) => Promise<T.SubscriptionJson>
    /**
     * `POST /api/v1/subscription/{subscription_id}/payment_method`: replaces the card renewals
     * charge; a past-due subscription is retried at once with it.
     */
    readonly updatePaymentMethod: (
      merchantId: string,
      id: string,
      card: Body<typeof RequestBodies.Payment>
    ) => Promise<T.PaymentMethodResultJson>
    /**
     * `GET /api/v1/subscription/{subscription_id}/upcoming_invoice`: what the next renewal will
     * bill if nothing changes before it (computed by the renewal's own code, nothing written);
     * `null` when it will not renew.
     */
    readonly upcomingInvoice: (merchantId: string, id: string) => Promise<T.UpcomingInvoiceJson | null>
    /**
     * `GET /api/v1/subscription/{subscription_id}/current_usage`: the current period's usage of
     * each item billed by a billable metric (value and amount) and the total, as the next renewal
     * computes it.
     */
    readonly currentUsage: (merchantId: string, id: string) => Promise<T.CurrentUsageJson>
    /** `GET /api/v1/subscription/{subscription_id}/usage`: a cycle's usage (the open one by default). */
    readonly usage: (merchantId: string, id: string, cycleIndex?: number) => Promise<T.UsageSummaryJson>
    /** `POST /api/v1/subscription/{subscription_id}/usage`: one usage event (idempotent by `event_id`). */
    readonly recordUsage: (merchantId: string, id: string, input: T.UsageEventInput) => Promise<T.UsageRecorded>
    /**
     * `POST /api/v1/usage/batch`: up to 1,000 usage events of any subscriptions in one
     * transaction; re-sent event ids come back as duplicates.
     */
    readonly recordUsageBatch: (
      merchantId: string,
      records: ReadonlyArray<T.UsageEventInput & { readonly subscription_id: string }>
    ) => Promise<T.UsageBatchRecorded>
  }
  readonly invoices: {
    /**
     * `GET /api/v1/invoices`: newest first (default limit 100), optionally of one subscription, one
     * customer, or of the derived `status` values given (`draft`, `open`, `paid`, `void`,
     * `uncollectible`, `issued` — a credit note).
     */
    readonly list: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly subscription_id?: string
        readonly customer_id?: string
        readonly status?: ReadonlyArray<T.InvoiceJson["status"]>
      }
    ) => Promise<T.PageJson<T.InvoiceJson>>
    /** `GET /api/v1/invoice/{invoice_id}`. */
    readonly get: (merchantId: string, invoiceId: string) => Promise<T.InvoiceJson>
    /** `POST /api/v1/invoices/{invoice_id}/finalize`: a draft numbered, then charged or settled. */
    readonly finalize: (merchantId: string, invoiceId: string) => Promise<T.InvoiceJson>
    /**
     * `POST /api/v1/invoices/{invoice_id}/edit`: a draft's one-off lines added (`add_lines`: description,
     * amount — the unit price, a decimal string —, quantity), lines removed (`remove_lines`: positions
     * among its `lines`), a discount applied (`discount_id`); totals and tax recomputed.
     */
    readonly edit: (merchantId: string, invoiceId: string, input: T.EditDraftInput) => Promise<T.InvoiceJson>
    /** `POST /api/v1/invoices/{invoice_id}/void`: a draft or an issued unpaid invoice voided (nothing owed). */
    readonly void: (merchantId: string, invoiceId: string) => Promise<T.InvoiceJson>
    /** `POST /api/v1/invoices/{invoice_id}/mark_uncollectible`: an issued unpaid invoice written off (dunning stops). */
    readonly markUncollectible: (merchantId: string, invoiceId: string) => Promise<T.InvoiceJson>
  }
  readonly trades: {
    /** `GET /api/v1/trades`: newest first, optionally by ids, statuses or customer. */
    readonly list: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly trade_ids?: ReadonlyArray<string>
        readonly trade_status?: ReadonlyArray<TradeStatus>
        readonly customer_id?: string
      }
    ) => Promise<T.PageJson<T.TradeJson>>
    /** `GET /api/v1/trade/{trade_id}`. */
    readonly get: (merchantId: string, tradeId: string) => Promise<T.TradeJson>
  }
  readonly discounts: {
    /** `POST /api/v1/discounts`: a percentage or fixed-amount discount, optionally with a code. */
    readonly create: (merchantId: string, input: T.CreateDiscountInput) => Promise<T.DiscountJson>
    /** `GET /api/v1/discount/{discount_id}`. */
    readonly get: (merchantId: string, discountId: string) => Promise<T.DiscountJson>
    /** `GET /api/v1/discounts`: newest first, optionally by status and code. */
    readonly list: (
      merchantId: string,
      filter?: {
        readonly status?: ReadonlyArray<"active" | "ended">
        readonly codes?: ReadonlyArray<string>
        readonly limit?: number
        readonly starting_after?: string
      }
    ) => Promise<T.PageJson<T.DiscountJson>>
    /** `POST /api/v1/discount/{discount_id}/end`: no new redemption from now on. */
    readonly end: (merchantId: string, discountId: string) => Promise<T.DiscountJson>
    /** `POST /api/v1/subscription/{subscription_id}/discount`: from the subscription's next cycle, for the discount's duration. */
    readonly applyToSubscription: (
      merchantId: string,
      subscriptionId: string,
      input: Body<typeof RequestBodies.ApplyDiscount>
    ) => Promise<T.SubscriptionDiscountsJson>
    /** `POST /api/v1/subscription/{subscription_id}/discount/remove`: the next cycles are billed without it. */
    readonly removeFromSubscription: (
      merchantId: string,
      subscriptionId: string,
      discountId: string
    ) => Promise<T.SubscriptionDiscountsJson>
  }
  readonly meterEvents: {
    /**
     * `POST /api/v1/meter_events`: one usage event of a billable metric; a re-sent
     * `transaction_id` answers the stored event with `duplicate` true.
     */
    readonly send: (merchantId: string, input: T.MeterEventInput) => Promise<T.MeterEventSentJson>
    /** `POST /api/v1/meter_events/batch`: 1 to 1,000 events in one transaction, all or none. */
    readonly sendBatch: (merchantId: string, events: ReadonlyArray<T.MeterEventInput>) => Promise<T.MeterEventsSentJson>
    /**
     * Any number of events from an array or an async iterable (a queue consumer, a file being
     * read), ingested in transactions of up to 1,000 as `POST /api/v1/meter_events/batch` does,
     * in order. A refused event rejects with its position in the stream (`events[i]`); the
     * batches before it stay stored (re-sending the stream is harmless: transaction ids
     * de-duplicate).
     */
    readonly stream: (
      merchantId: string,
      events: Iterable<T.MeterEventInput> | AsyncIterable<T.MeterEventInput>
    ) => Promise<T.MeterEventsSentJson>
    /** `GET /api/v1/meter_events`: most recently ingested first, optionally of one customer and code. */
    readonly list: (
      merchantId: string,
      filter?: {
        readonly customer_id?: string
        readonly code?: string
        readonly limit?: number
        readonly starting_after?: string
      }
    ) => Promise<T.PageJson<T.MeterEventJson>>
  }
  /**
   * Late events and corrections (issue 35): void or amend a meter event (a closed period it
   * counted in is re-rated by the worker), preview a period's re-rating, list the adjustments.
   */
  readonly usageAdjustments: {
    /**
     * `POST /api/v1/meter_events/{transaction_id}/void`: voids the event; a closed period it
     * counted in is re-rated (a credit note, or a draft re-priced).
     */
    readonly voidEvent: UsageAdjustmentsClient["voidEvent"]
    /**
     * `POST /api/v1/meter_events/{transaction_id}/amend`: voids it and ingests its replacement
     * (a new `transaction_id`) in one transaction; both periods are re-rated.
     */
    readonly amendEvent: UsageAdjustmentsClient["amendEvent"]
    /**
     * `POST /api/v1/subscription/{subscription_id}/usage_adjustments/preview`: what re-rating the
     * billed period holding `timestamp` would do, written nowhere.
     */
    readonly preview: UsageAdjustmentsClient["preview"]
    /** `GET /api/v1/subscription/{subscription_id}/usage_adjustments`: the adjustments made, newest first. */
    readonly list: UsageAdjustmentsClient["list"]
    /**
     * `POST /api/v1/usage_adjustments/{usage_adjustment_id}/apply`: issues a pending adjustment
     * (under `usage_adjustments: "review"`) for its period's difference now.
     */
    readonly apply: UsageAdjustmentsClient["apply"]
  }
  readonly invoiceItems: {
    /**
     * `POST /api/v1/invoice_items`: a pending one-off charge for a customer — `unit_amount` in
     * `currency`, or a one-time `price_id` — billed by the next one-off invoice.
     */
    readonly create: (merchantId: string, input: T.CreateInvoiceItemInput) => Promise<T.InvoiceItemJson>
    /** `GET /api/v1/invoice_item/{invoice_item_id}`. */
    readonly get: (merchantId: string, invoiceItemId: string) => Promise<T.InvoiceItemJson>
    /** `GET /api/v1/invoice_items`: newest first, optionally of one customer, only pending ones (or only the others). */
    readonly list: (
      merchantId: string,
      filter?: T.PageInput & { readonly customer_id?: string; readonly pending?: boolean }
    ) => Promise<T.PageJson<T.InvoiceItemJson>>
    /** `POST /api/v1/invoice_item/{invoice_item_id}/delete`: only a pending item. */
    readonly delete: (merchantId: string, invoiceItemId: string) => Promise<T.InvoiceItemJson>
    /**
     * `POST /api/v1/invoices`: a one-off invoice of the customer's pending items, charged to the
     * card on file (`open` for its hosted page when there is none) — or, under `send_invoice`
     * (the customer's setting, or `collection_method`/`days_until_due` here), sent: `open` with
     * its `due_date`, emailed, reminded past due.
     */
    readonly createInvoice: (merchantId: string, input: T.CreateOneOffInvoiceInput) => Promise<T.InvoiceJson>
  }
  readonly taxRates: {
    /**
     * `POST /api/v1/tax_rates`: a percentage (up to 4 decimals) for a country and optional region,
     * inclusive or exclusive; one active rate per country and region.
     */
    readonly create: (merchantId: string, input: T.CreateTaxRateInput) => Promise<T.TaxRateJson>
    /** `GET /api/v1/tax_rate/{tax_rate_id}`. */
    readonly get: (merchantId: string, taxRateId: string) => Promise<T.TaxRateJson>
    /** `GET /api/v1/tax_rates`: newest first, optionally by status and country. */
    readonly list: (
      merchantId: string,
      filter?: {
        readonly status?: ReadonlyArray<"active" | "archived">
        readonly countries?: ReadonlyArray<string>
        readonly limit?: number
        readonly starting_after?: string
      }
    ) => Promise<T.PageJson<T.TaxRateJson>>
    /** `POST /api/v1/tax_rate/{tax_rate_id}/archive`: no new invoice uses it. */
    readonly archive: (merchantId: string, taxRateId: string) => Promise<T.TaxRateJson>
  }
  /**
   * Billable metrics: what usage prices rate — an aggregation (`count`, `sum`, `max`,
   * `unique_count`, `latest`, `weighted_sum`) of usage events' property, with filters and
   * grouping dimensions. Each method takes a metric's id or its code.
   */
  readonly billableMetrics: {
    /** `POST /api/v1/billable_metrics`: a new metric; its `code` is unique per merchant. */
    readonly create: (merchantId: string, input: CreateBillableMetricInput) => Promise<BillableMetricJson>
    /** `GET /api/v1/billable_metrics/{billable_metric_id}`: by id or code. */
    readonly get: (merchantId: string, metric: string) => Promise<BillableMetricJson>
    /** `GET /api/v1/billable_metrics`: newest first, optionally by status and code. */
    readonly list: (merchantId: string, filter?: ListBillableMetricsInput) => Promise<T.PageJson<BillableMetricJson>>
    /**
     * `POST /api/v1/billable_metrics/{billable_metric_id}`: changes its name, description,
     * filters or late window (the other fields are fixed).
     */
    readonly update: (
      merchantId: string,
      metric: string,
      input: UpdateBillableMetricInput
    ) => Promise<BillableMetricJson>
    /** `POST /api/v1/billable_metrics/{billable_metric_id}/archive`: no new price may reference it. */
    readonly archive: (merchantId: string, metric: string) => Promise<BillableMetricJson>
  }
  /**
   * Usage alerts on a subscription's billable metric (`v2.usage_alert.triggered` once per
   * crossing per cycle, `v2.usage_alert.resolved` when the next cycle starts) and a
   * subscription's progressive billing (its usage invoiced early at a threshold).
   */
  readonly usageAlerts: {
    /** `POST /api/v1/usage_alerts`: thresholds on a metric's value or amount in the open cycle. */
    readonly create: (merchantId: string, input: CreateUsageAlertInput) => Promise<UsageAlertJson>
    /** `GET /api/v1/usage_alerts/{usage_alert_id}`. */
    readonly get: (merchantId: string, alertId: string) => Promise<UsageAlertJson>
    /** `GET /api/v1/usage_alerts`: newest first, of a subscription or a customer. */
    readonly list: (merchantId: string, filter?: ListUsageAlertsInput) => Promise<T.PageJson<UsageAlertJson>>
    /** `POST /api/v1/usage_alerts/{usage_alert_id}/delete`: it fires nothing more. */
    readonly delete: (merchantId: string, alertId: string) => Promise<UsageAlertJson>
    /** `GET /api/v1/subscription/{subscription_id}/progressive_billing`. */
    readonly progressiveBilling: (merchantId: string, subscriptionId: string) => Promise<ProgressiveBillingJson>
    /** `POST /api/v1/subscription/{subscription_id}/progressive_billing`: the threshold, or `null`. */
    readonly setProgressiveBilling: (
      merchantId: string,
      subscriptionId: string,
      input: { readonly progressive_billing_threshold: string | null }
    ) => Promise<ProgressiveBillingJson>
  }
  /**
   * Customer notifications (email): the merchant's settings (sender, reply-to, which messages,
   * language, on/off) and its outbox. Sent through the `notifications` option's notifier.
   */
  readonly notifications: {
    /**
     * `GET /api/v1/notification_settings`: the merchant's notification settings; `null`: no
     * notification is sent.
     */
    readonly settings: (merchantId: string) => Promise<NotificationSettingsJson | null>
    /**
     * `POST /api/v1/notification_settings`: changes the fields given (the first change needs
     * `sender`); `reset: true` turns notifications off. Answers the settings in force.
     */
    readonly updateSettings: (
      merchantId: string,
      input: NotificationSettingsInput
    ) => Promise<NotificationSettingsJson | null>
    /** `GET /api/v1/notifications`: the merchant's messages (pending, sent, skipped), newest first, at most 100. */
    readonly list: (merchantId: string) => Promise<ReadonlyArray<NotificationJson>>
  }
  /**
   * The customer balance: what a customer holds (credit, positive) or owes per currency, its
   * ledger (every entry with its source) and manual adjustments with a reason.
   */
  readonly balances: {
    /** `GET /api/v1/customers/{customer_id}/balance`: the balance in each currency it has one in. */
    readonly get: (merchantId: string, customerId: string) => Promise<CustomerBalanceJson>
    /** `GET /api/v1/customers/{customer_id}/balance_transactions`: the ledger, newest first. */
    readonly transactions: (
      merchantId: string,
      customerId: string,
      input?: T.PageInput
    ) => Promise<T.PageJson<BalanceTransactionJson>>
    /**
     * `POST /api/v1/customers/{customer_id}/balance_transactions`: a manual adjustment (signed
     * `amount`, `currency`, `reason`); answers the ledger entry.
     */
    readonly adjust: (
      merchantId: string,
      customerId: string,
      input: AdjustBalanceInput
    ) => Promise<BalanceTransactionJson>
    /**
     * `POST /api/v1/invoices/{invoice_id}/credit_notes`: a credit note of an invoice (`amount`,
     * `method` — `credit_balance` to the customer's balance, `reduce_invoice` of an unpaid
     * invoice, `refund` to the card — and `reason`); answers the credit note (null for a refund
     * the processor has not confirmed yet).
     */
    readonly creditNote: (
      merchantId: string,
      invoiceId: string,
      input: CreditNoteInput
    ) => Promise<CreditNoteJson | null>
  }
  readonly portal: {
    /**
     * `POST /api/v1/customer-portal/auth`: a signed link to one customer's billing (subscriptions,
     * invoices, payment method), working for an hour.
     */
    readonly createSession: (merchantId: string, input: T.PortalSessionInput) => Promise<T.PortalSessionJson>
    /**
     * `POST /api/v1/customer-portal/session/{portal_session_id}/revoke`: the link stops working at
     * once (as a deleted customer's links do); revoking it again changes nothing.
     */
    readonly revokeSession: (merchantId: string, portalSessionId: string) => Promise<T.PortalSessionJson>
    /** `GET /api/v1/portal_settings`: what the merchant's customers may do in the portal. */
    readonly settings: (merchantId: string) => Promise<T.PortalSettingsJson>
    /**
     * `POST /api/v1/portal_settings`: changes the fields given; `reset: true` returns to the
     * `portal` option's default. Prices to switch between must be active recurring prices.
     */
    readonly updateSettings: (
      merchantId: string,
      input: Body<typeof RequestBodies.PortalSettings>
    ) => Promise<T.PortalSettingsJson>
  }
  readonly refunds: {
    /** `POST /api/v1/refund`: all or part of a trade. */
    readonly create: (merchantId: string, input: T.RefundInput) => Promise<T.RefundJson>
    /** `GET /api/v1/refund/{refund_id}`. */
    readonly get: (merchantId: string, refundId: string) => Promise<T.RefundJson>
    /** `GET /api/v1/refunds`: newest first. */
    readonly list: (merchantId: string, filter?: T.PageInput) => Promise<T.PageJson<T.RefundJson>>
    /** `GET /api/v1/trades/{trade_id}/refunds`: the refunds of one trade. */
    readonly ofTrade: (merchantId: string, tradeId: string, filter?: T.PageInput) => Promise<T.PageJson<T.RefundJson>>
  }
  readonly items: {
    /** `GET /api/v1/subscription/{subscription_id}/items`: the subscription's items, the base item first. */
    readonly list: (merchantId: string, subscriptionId: string) => Promise<ReadonlyArray<T.SubscriptionItemJson>>
    /**
     * `POST /api/v1/subscription/{subscription_id}/items/preview`: the quote of an item change (add,
     * remove, quantity or price of an item), nothing changed.
     */
    readonly preview: (
      merchantId: string,
      subscriptionId: string,
      input: Body<typeof ItemRequests.ItemChange>
    ) => Promise<T.ChangePreview>
    /**
     * `POST /api/v1/subscription/{subscription_id}/items`: commits an item change; with `quote_id`,
     * exactly what the quote showed.
     */
    readonly commit: (
      merchantId: string,
      subscriptionId: string,
      input: Body<typeof ItemRequests.ItemChange>
    ) => Promise<T.ItemChangeResult>
  }
  readonly schedules: {
    /**
     * `POST /api/v1/subscription/{subscription_id}/schedule`: 1–10 phases of 1–20 items each,
     * each billed from the renewal that opens its first cycle; `end_behavior` release or cancel.
     */
    readonly create: (
      merchantId: string,
      subscriptionId: string,
      input: Body<typeof ScheduleRequests.CreateSchedule>
    ) => Promise<T.ScheduleJson>
    /** `GET /api/v1/subscription/{subscription_id}/schedule`: the schedule in force, or the last one as it ended. */
    readonly get: (merchantId: string, subscriptionId: string) => Promise<T.ScheduleJson>
    /** `POST /api/v1/subscription/{subscription_id}/schedule/release`: the subscription keeps its current phase. */
    readonly release: (merchantId: string, subscriptionId: string) => Promise<T.ScheduleJson>
    /** `POST /api/v1/subscription/{subscription_id}/schedule/cancel`: no later phase; the subscription cancels at its period's end. */
    readonly cancel: (merchantId: string, subscriptionId: string) => Promise<T.ScheduleJson>
  }
  readonly webhooks: {
    /** `POST /api/v2/webhook/endpoints`: resolves with its id and its `whsec_` secret (shown once). */
    readonly createEndpoint: (merchantId: string, input: T.WebhookEndpointInput) => Promise<T.WebhookEndpointCreated>
    /** `GET /api/v2/webhook/endpoints`: newest first, optionally by status. */
    readonly listEndpoints: (
      merchantId: string,
      filter?: T.PageInput & { readonly status?: ReadonlyArray<typeof Lifecycle.EndpointStatus.Type> }
    ) => Promise<T.PageJson<T.WebhookEndpointJson>>
    /** `POST /api/v2/webhook/endpoints/{endpoint_id}`: the fields given change. */
    readonly updateEndpoint: (
      merchantId: string,
      endpointId: string,
      input: T.WebhookEndpointUpdate
    ) => Promise<T.WebhookEndpointJson>
    /** `POST /api/v2/webhook/endpoints/{endpoint_id}/delete`. */
    readonly deleteEndpoint: (merchantId: string, endpointId: string) => Promise<void>
    /** `GET /api/v2/webhook/events`: newest first, optionally by business id, type or delivery status. */
    readonly listEvents: (
      merchantId: string,
      filter?: T.PageInput & {
        readonly business_ids?: ReadonlyArray<string>
        readonly event_types?: ReadonlyArray<string>
        readonly event_statuses?: ReadonlyArray<DeliveryStatus>
      }
    ) => Promise<T.PageJson<T.WebhookEventJson>>
    /** `POST /api/v2/webhook/events/{event_id}/resend`: delivers the event again to its endpoints. */
    readonly resendEvent: (merchantId: string, eventId: string) => Promise<T.WebhookEventJson>
    /** Delivers what is in the outbox now (fan-out + first attempts); resolves with how many events it took. */
    readonly dispatch: (owner?: string) => Promise<number>
  }
  /** `GET /api/v1/test_helpers/clock`: a sandbox merchant's frozen clock. */
  readonly clock: (merchantId: string) => Promise<T.ClockJson>
  /**
   * `POST /api/v1/test_helpers/advance_clock`: moves a sandbox merchant's frozen clock forward,
   * running everything due on the way (all of it, before resolving).
   */
  readonly advanceClock: (merchantId: string, to: Date) => Promise<void>
  /** Runs due work once (call from your own scheduler). */
  readonly runDue: (owner?: string) => Promise<unknown>
  /**
   * The engine's services (for `@recur/http`'s `Mount` helpers, or Effect code of your own): the
   * same instances the methods above use, so one process has one engine over its storage.
   */
  readonly context: () => Promise<Context.Context<Services>>
  /** Releases the database and stops background work. Call it before the process ends. */
  readonly close: () => Promise<void>
}

type SubscriptionStatus = typeof Lifecycle.SubscriptionStatus.Type
type TradeStatus = typeof Lifecycle.TradeStatus.Type
type DeliveryStatus = typeof Lifecycle.DeliveryStatus.Type

/**
 * `billing.entitlements`.
 *
 * @since 0.1.0
 */
export type EntitlementsClient = BillingClient["entitlements"]
