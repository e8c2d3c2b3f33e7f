/**
 * Recur behind Promises, for applications that do not use Effect: one call composes the
 * storage, the payment gateway and the engine, and returns async methods.
 *
 * @example
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, payments: "sandbox" })
 * const { merchant_id } = await billing.merchants.create({ name: "Acme", currency: "USD" })
 * @since 0.1.0
 */
import {
  Billing,
  Checkout,
  Catalog,
  CheckoutSession,
  Customer,
  Customers,
  Discount,
  Discounts,
  DunningPolicy,
  Engine,
  Entities,
  Errors,
  Invoice,
  Merchants,
  Metering,
  PaymentMethods,
  PaymentSettings,
  Portal,
  PortalSession,
  PriceChanges,
  Redaction,
  Ports,
  Price,
  Product,
  Refund,
  Refunds,
  Renewals,
  SandboxClock,
  Secrets,
  SessionPayments,
  Settings,
  Store,
  Subscription,
  Subscriptions,
  Tax,
  TaxRates,
  Trade,
  Usage,
  WebhookDispatch,
  Webhooks,
  Worker
} from "@recur/core"
import { RequestBodies, Requests } from "@recur/contract"
import { SandboxGateway } from "@recur/payment-sandbox"
import { HttpTransport } from "@recur/webhooks"
import { MasterKey, Pg } from "@recur/sql"
import { MemoryStorage } from "@recur/memory"
import { type Context, Effect, Exit, Layer, ManagedRuntime, Option, Redacted, Result, Schema } from "effect"
import * as FacadeErrors from "./Errors.js"
import { type EntitlementsClient, entitlementsClient } from "./entitlements.js"

/**
 * Where Recur keeps its data.
 *
 * @since 0.1.0
 */
export type StorageOption = "memory" | { readonly pglite?: string } | { readonly postgres: string }

/**
 * Options of {@link createBilling}.
 *
 * @since 0.1.0
 */
export interface BillingOptions {
  /** Default: in-memory PGlite. `{ pglite: dir }` persists, `{ postgres: url }` for production. */
  readonly storage?: StorageOption
  /**
   * The payment gateway: the sandbox (default), or a `PaymentGateway` Layer of your own — e.g.
   * `StripeGateway.perMerchant()` of `@recur/payment-stripe` (each merchant's own Stripe account,
   * the sandbox for the others) or `StripeGateway.layer({ secretKey })` (one account). Such a
   * layer may use the sandbox gateway, the storage and the secrets; the sandbox's 3-D Secure page
   * stays mounted either way.
   */
  readonly payments?:
    | "sandbox"
    | Layer.Layer<Ports.PaymentGateway, never, Ports.PaymentGateway | Store.Storage | Secrets.Secrets>
  /**
   * 32 bytes as 64 hex characters: encrypts stored API keys, webhook secrets, processor keys and
   * idempotent answers, and signs invoice and portal links. Default: with `{ pglite: dir }`, the
   * key kept in `dir/master.key` (made on first start, as the server does; a directory holding data
   * without it is refused); with memory storage, a fresh random key; with `{ postgres }`, required
   * (a RangeError without it: a key made up at each start would lose every secret at restart).
   */
  readonly masterKey?: string
  /** Exchange rates for `target_currency` without a `merchant_rate`, e.g. `{ "USD:EUR": "0.92" }`. */
  readonly fxRates?: Readonly<Record<string, string>>
  readonly publicUrl?: string
  /**
   * How webhooks are sent. Default: `@recur/webhooks`' HttpClient transport, refusing
   * private-network targets except for sandbox merchants (`{ allowPrivateNetwork: true }` lifts
   * that), or any `WebhookTransport` Layer of your own.
   */
  readonly webhooks?:
    | { readonly allowPrivateNetwork?: boolean }
    | { readonly transport: Layer.Layer<Ports.WebhookTransport> }
  /**
   * The default dunning policy (merchants may set their own retry days): retries `retryDays`
   * after the first failed renewal (default 1, 3, 5, 7), then `finalState` (default `unpaid`).
   */
  readonly dunning?: { readonly retryDays?: ReadonlyArray<number>; readonly finalState?: "unpaid" | "canceled" }
  /**
   * Tax rates for every merchant, used where a merchant has no rate of its own for the customer's
   * country and region (merchants add theirs with `taxRates.create`), e.g.
   * `[{ name: "VAT", percentage: "19", country: "DE", inclusive: true }]`. Default: none.
   */
  readonly taxRates?: ReadonlyArray<TaxRates.TaxRateCommand>
  /**
   * A tax calculator of your own (a tax service's adapter of `Ports.TaxCalculator`) in place of
   * the rate table.
   */
  readonly taxes?: Layer.Layer<Ports.TaxCalculator>
  /**
   * The customer portal's settings for merchants that set none of their own
   * (`portal.updateSettings`): which actions customers may take and which prices they may switch
   * between, e.g. `{ cancel: false, switch_prices: ["pri_basic", "pri_pro"] }`. Default: card,
   * cancellation and invoices on, no switching.
   */
  readonly portal?: Portal.ConfiguredSettings
  /** Where the pages of merchants on Stripe load Stripe.js from. Default `https://js.stripe.com/v3/`. */
  readonly stripeJsUrl?: string
}

const storageLayer = (option: StorageOption | undefined): Layer.Layer<Store.Storage, unknown> =>
  option === undefined
    ? Pg.layerPglite()
    : option === "memory"
      ? MemoryStorage.layer
      : "postgres" in option
        ? Pg.layerPgUrl({ url: option.postgres })
        : Pg.layerPglite(option.pglite !== undefined ? { dataDir: option.pglite } : {})

const randomHex = () =>
  [...globalThis.crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("")

/**
 * The master key when none is given: kept beside the data of a PGlite directory (as the server
 * keeps it; a directory with data and no key is refused), a fresh one for storage that ends with
 * the process, and none for PostgreSQL — a RangeError, as for any bad option.
 */
const masterKeyOf = (options: BillingOptions) => {
  if (options.masterKey !== undefined) return Effect.succeed(options.masterKey)
  const storage = options.storage
  if (storage !== undefined && storage !== "memory" && "postgres" in storage)
    throw new RangeError(
      new MasterKey.MasterKeyRequired({ setting: "masterKey", storage: "{ postgres } storage" }).message
    )
  const dir = storage !== undefined && storage !== "memory" ? storage.pglite : undefined
  return dir === undefined || dir.includes("://")
    ? Effect.sync(randomHex)
    : Effect.map(MasterKey.inDataDir(dir), Redacted.value)
}

/**
 * The engine as a Layer (for Effect users who want the same composition).
 *
 * @since 0.1.0
 */
export const layer = (options: BillingOptions = {}) => {
  const masterKey = masterKeyOf(options)
  return Layer.unwrap(
    Effect.map(masterKey, (key) => engineOn(storageLayer(options.storage), { ...options, masterKey: key }))
  )
}

/**
 * The engine on a storage layer of your own (its other outputs, such as a `SqlClient`, stay
 * available).
 *
 * @since 0.1.0
 */
export const engineOn = <A, E>(
  storage: Layer.Layer<A | Store.Storage, E>,
  options: Omit<BillingOptions, "storage"> = {}
) => {
  const secrets = Secrets.layer(Redacted.make(options.masterKey ?? randomHex()))
  return Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        secrets,
        paymentsLayer(options, secrets),
        Ports.fxStatic(options.fxRates ?? {}),
        options.taxes ?? TaxRates.table(taxTable(options.taxRates)),
        options.webhooks !== undefined && "transport" in options.webhooks
          ? options.webhooks.transport
          : HttpTransport.layer(options.webhooks ?? {}),
        Settings.layer({
          ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
          portal: portalDefaults(options.portal),
          ...(options.stripeJsUrl ? { stripeJsUrl: options.stripeJsUrl } : {}),
          webhookPrivateNetwork:
            options.webhooks !== undefined && "allowPrivateNetwork" in options.webhooks
              ? options.webhooks.allowPrivateNetwork === true
              : false
        }),
        DunningPolicy.layerDefault(dunningPolicy(options.dunning))
      )
    ),
    Layer.provideMerge(storage)
  )
}

/** The sandbox (its 3-D Secure challenge under the public URL), with the configured gateway over it. */
const paymentsLayer = (options: Omit<BillingOptions, "storage">, secrets: Layer.Layer<Secrets.Secrets>) => {
  // the 3-D Secure challenge lives beside the checkout pages, under the public URL (and its mount prefix)
  const sandbox = SandboxGateway.layer(
    options.publicUrl ? { challengeBaseUrl: `${options.publicUrl.replace(/\/+$/, "")}/sandbox/3ds` } : {}
  )
  return options.payments === undefined || options.payments === "sandbox"
    ? Layer.merge(sandbox, Layer.provide(sandboxOnly, sandbox))
    : Layer.merge(sandbox, Layer.provide(options.payments, Layer.merge(sandbox, secrets)))
}

/**
 * The sandbox as the only gateway: it takes sandbox merchants' payments only. A live merchant's
 * customers pay real money, and no processor of its own is configured here, so it opens no
 * checkout session (`refusal`) and its charges and card saves are refused as the merchant's
 * configuration (`processor_not_configured`) — never "paid" with a test card.
 */
const sandboxOnly = Layer.effect(
  Ports.PaymentGateway,
  Effect.gen(function* () {
    const sandbox = yield* Ports.PaymentGateway
    const merchants = (yield* Store.Storage).repository(Entities.merchant)
    const refusal = (merchantId: string) =>
      Effect.map(Effect.orDie(merchants.get(merchantId, merchantId)), (found) =>
        Option.isSome(found) && !PaymentSettings.sandboxMayCharge(found.value.value)
          ? Option.some(
              `merchant ${merchantId} is live and this engine takes payments with the sandbox only (no payments option): it takes no payments; the sandbox never takes a live merchant's payments`
            )
          : Option.none<string>()
      )
    const refused = (reason: string): Ports.UnavailableReason => ({
      reason: "merchant_configuration",
      code: "processor_not_configured",
      message: reason
    })
    const completeSaveCard = sandbox.completeSaveCard
    return Ports.PaymentGateway.of({
      ...sandbox,
      refusal,
      charge: (request) =>
        Effect.flatMap(refusal(request.merchant_id), (why) =>
          Option.isSome(why)
            ? Effect.succeed(Ports.ChargeOutcome.Unavailable(refused(why.value)))
            : sandbox.charge(request)
        ),
      saveCard: (request) =>
        Effect.flatMap(refusal(request.merchant_id), (why) =>
          Option.isSome(why)
            ? Effect.succeed(Ports.SaveCardOutcome.Unavailable(refused(why.value)))
            : sandbox.saveCard(request)
        ),
      ...(completeSaveCard !== undefined
        ? {
            completeSaveCard: (request: Parameters<typeof completeSaveCard>[0]) =>
              Effect.flatMap(refusal(request.merchant_id), (why) =>
                Option.isSome(why)
                  ? Effect.succeed(Ports.SaveCardOutcome.Unavailable(refused(why.value)))
                  : completeSaveCard(request)
              )
          }
        : {})
    })
  })
)

/** The configured tax table, checked: a bad entry is a RangeError naming it, as a bad option is. */
const taxTable = (rates: BillingOptions["taxRates"]): ReadonlyArray<TaxRates.Rate> => {
  const checked = TaxRates.checkTable(rates ?? [])
  if (Result.isFailure(checked)) throw new RangeError(`${checked.failure.param} ${checked.failure.reason}`)
  return checked.success
}

/** A decoded card or collected payment method, as the engine takes it. */
const paymentOf = (p: typeof RequestBodies.Payment.Type): Ports.CardInput | Ports.NewPaymentSource =>
  "payment_method" in p ? { _tag: "PaymentMethod", id: p.payment_method } : p

/** The configured portal settings, checked: a bad one is a RangeError naming it. */
const portalDefaults = (option: BillingOptions["portal"]) => {
  const checked = Portal.configured(option ?? {})
  if (Result.isFailure(checked)) throw new RangeError(`portal.${checked.failure.param} ${checked.failure.reason}`)
  return checked.success
}

const dunningPolicy = (option: BillingOptions["dunning"]): DunningPolicy.Policy => {
  if (option?.retryDays !== undefined && !DunningPolicy.validRetryDays(option.retryDays)) {
    throw new RangeError("dunning.retryDays must be 1 to 10 increasing whole days from 1 to 60")
  }
  return {
    retryAfterMs:
      option?.retryDays !== undefined
        ? option.retryDays.map((d) => d * 86_400_000)
        : DunningPolicy.standard.retryAfterMs,
    finalState: option?.finalState ?? DunningPolicy.standard.finalState
  }
}

type Services = Layer.Success<ReturnType<typeof layer>>
type SubscriptionsService = Subscriptions.Subscriptions["Service"]
type Success<F extends (...args: never) => Effect.Effect<unknown, unknown, unknown>> = Effect.Success<ReturnType<F>>

/** A product as the REST API returns it (`GET /api/v1/products` items). @since 0.1.0 */
export type ProductJson = typeof Product.Product.Encoded
/** A price version as the REST API returns it. @since 0.1.0 */
export type PriceJson = typeof Price.PriceVersion.Encoded
/** A customer as the REST API returns it. @since 0.1.0 */
export type CustomerJson = typeof Customer.Customer.Encoded
/** A checkout session as the REST API returns it (`session_url` is the hosted page). @since 0.1.0 */
export type CheckoutSessionJson = typeof CheckoutSession.CheckoutSession.Encoded
/** A subscription as the REST API returns it. @since 0.1.0 */
export type SubscriptionJson = typeof Subscription.Subscription.Encoded
/** A trade (one charge or refund movement) as the REST API returns it. @since 0.1.0 */
export type TradeJson = typeof Trade.Trade.Encoded
/** An invoice as the REST API returns it. @since 0.1.0 */
export type InvoiceJson = typeof Invoice.Invoice.Encoded
/** A discount as the REST API returns it. @since 0.1.0 */
export type DiscountJson = typeof Discount.Discount.Encoded
/** What a subscription's next renewal will bill (`GET /api/v1/subscription/{id}/upcoming_invoice`). @since 0.1.0 */
export type UpcomingInvoiceJson = typeof Invoice.UpcomingInvoice.Encoded
/** A payment method update's answer. @since 0.1.0 */
export type PaymentMethodResultJson = Success<PaymentMethods.PaymentMethods["Service"]["updatePaymentMethod"]>
/** Who charges a merchant's customers, as JSON (never a secret). @since 0.1.0 */
export type PaymentSettingsJson = typeof PaymentSettings.PaymentSettingsView.Encoded
/** What a merchant's customers may do in the portal, as JSON. @since 0.1.0 */
export type PortalSettingsJson = typeof PortalSession.PortalSettings.Encoded
/** A customer portal session as JSON. @since 0.1.0 */
export type PortalSessionJson = typeof PortalSession.PortalSession.Encoded
/** A tax rate as JSON. @since 0.1.0 */
export type TaxRateJson = typeof Tax.TaxRate.Encoded
/** The discounts a subscription carries, each with its window of cycles. @since 0.1.0 */
export type SubscriptionDiscountsJson = Success<Discounts.Discounts["Service"]["applyToSubscription"]>
/** A refund as the REST API returns it. @since 0.1.0 */
export type RefundJson = typeof Refund.Refund.Encoded
/** A cycle's usage as the REST API returns it. @since 0.1.0 */
export type UsageSummaryJson = typeof Usage.UsageSummary.Encoded

/**
 * What paying a checkout session did: `succeeded` (with the subscription it started),
 * `requires_action` (open `redirect_url` for 3-D Secure), `failed` (with `error`) or `processing`.
 *
 * @since 0.1.0
 */
export interface PaymentJson {
  readonly status: Billing.PaymentResult["status"]
  readonly trade: TradeJson
  readonly subscription: SubscriptionJson | null
  readonly redirect_url: string | null
  readonly error: Option.Option.Value<Billing.PaymentResult["error"]> | null
}

/** The proration quote of a price or quantity change (what `change` will charge or credit). @since 0.1.0 */
export type ChangePreview = Success<PriceChanges.PriceChanges["Service"]["previewChange"]>
/** What a price or quantity change did. @since 0.1.0 */
export type ChangeResult = Success<PriceChanges.PriceChanges["Service"]["changePrice"]>
/** A recorded usage event (`duplicate: true` when its `event_id` was already recorded). @since 0.1.0 */
export type UsageRecorded = Success<Metering.Metering["Service"]["recordUsage"]>
/** A batch of usage events: how many were accepted and which were duplicates. @since 0.1.0 */
export type UsageBatchRecorded = Success<Metering.Metering["Service"]["recordUsageBatch"]>
/** A new webhook endpoint: its id and its `whsec_` signing secret (shown once). @since 0.1.0 */
export type WebhookEndpointCreated = Success<Webhooks.Webhooks["Service"]["create"]>

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

const UsageBatchInput = Schema.Struct({
  records: Schema.Array(Schema.Struct({ subscription_id: Schema.optional(Schema.String), ...UsageInput.fields }))
})

/** The body of a REST request, as plain data (what the facade's methods take). */
type Body<S extends Schema.Top> = S["Encoded"]

/**
 * The Promise API returned by {@link createBilling}. Every method takes the REST API's body for
 * the same operation (checked the same way) and resolves with the REST API's JSON; failures
 * reject with a {@link FacadeErrors.RecurError} subclass carrying the REST code and status.
 *
 * @since 0.1.0
 */
export interface BillingClient {
  readonly merchants: {
    /** Creates a merchant; resolves with its id and its API key (shown once). */
    readonly create: (input: Merchants.CreateMerchant) => Promise<{ merchant_id: string; api_key: string }>
    /**
     * What the merchant's next invoice numbers start with (`POST /api/v1/invoice_settings`): 3 to
     * 12 uppercase letters and digits; a new prefix starts its own sequences at 1.
     */
    readonly setInvoicePrefix: (merchantId: string, prefix: string) => Promise<{ invoice_prefix: string }>
    /**
     * `POST /api/v1/dispute_settings`: whether renewals of a subscription under an open fraud
     * dispute are held (`hold`, the default) or charged (`charge`).
     */
    readonly setDisputeSettings: (
      merchantId: string,
      settings: { readonly fraud_dispute_renewals: "hold" | "charge" }
    ) => Promise<{ fraud_dispute_renewals: "hold" | "charge" }>
    /** `GET /api/v1/payment_settings`: who charges the merchant's customers (never a secret). */
    readonly paymentSettings: (merchantId: string) => Promise<PaymentSettingsJson>
    /**
     * `POST /api/v1/payment_settings`: `sandbox`, or `stripe` with a secret and a publishable key of
     * the merchant's mode and optionally the webhook signing secret (stored encrypted).
     */
    readonly setPaymentSettings: (
      merchantId: string,
      input: Body<typeof RequestBodies.PaymentSettings>
    ) => Promise<PaymentSettingsJson>
  }
  readonly catalog: {
    /** `POST /api/v1/products`. */
    readonly createProduct: (
      merchantId: string,
      input: Body<typeof RequestBodies.CreateProduct>
    ) => Promise<ProductJson>
    /** `POST /api/v1/prices`: a price and its first version. */
    readonly createPrice: (merchantId: string, input: Body<typeof RequestBodies.CreatePrice>) => Promise<PriceJson>
  }
  readonly customers: {
    /** `POST /api/v1/customer/create`. */
    readonly create: (merchantId: string, input: Body<typeof RequestBodies.CreateCustomer>) => Promise<CustomerJson>
    /**
     * `POST /api/v1/front/customer/delete`: the customer is gone from reads (its history stays)
     * and its portal links stop working at once.
     */
    readonly delete: (merchantId: string, customerId: string) => Promise<void>
  }
  readonly checkout: {
    /** `POST /api/v1/session`: a checkout session and its hosted page's URL. */
    readonly createSession: (
      merchantId: string,
      input: Body<typeof RequestBodies.CreateSession>
    ) => Promise<CheckoutSessionJson>
    /**
     * Pays a session with a card (the hosted page's form, without the page), or with a payment
     * method the processor's form collected (`{ payment_method: "pm_…" }`, Stripe).
     */
    readonly pay: (
      merchantId: string,
      sessionId: string,
      card: Body<typeof RequestBodies.Payment>
    ) => Promise<PaymentJson>
  }
  readonly subscriptions: {
    /** `GET /api/v1/subscription/{id}`. */
    readonly get: (merchantId: string, id: string) => Promise<SubscriptionJson>
    /** The quote of a change, without changing anything (`POST …/change/preview`). */
    readonly previewChange: (
      merchantId: string,
      id: string,
      input: Body<typeof RequestBodies.ChangePrice>
    ) => Promise<ChangePreview>
    /** `POST /api/v1/subscription/{id}/change`: a new price or quantity, prorated. */
    readonly change: (
      merchantId: string,
      id: string,
      input: Body<typeof RequestBodies.ChangePrice>
    ) => Promise<ChangeResult>
    /** `POST …/cancel`: at the period's end (default) or at once. */
    readonly cancel: (
      merchantId: string,
      id: string,
      input?: Body<typeof RequestBodies.Cancel>
    ) => Promise<SubscriptionJson>
    /** `POST …/pause`. */
    readonly pause: (merchantId: string, id: string) => Promise<SubscriptionJson>
    /** `POST …/resume`. */
    readonly resume: (merchantId: string, id: string) => Promise<SubscriptionJson>
    /**
     * `POST …/payment_method`: replaces the card renewals charge; a past-due subscription is
     * retried at once with it.
     */
    readonly updatePaymentMethod: (
      merchantId: string,
      id: string,
      card: Body<typeof RequestBodies.Payment>
    ) => Promise<PaymentMethodResultJson>
    /**
     * `GET …/upcoming_invoice`: what the next renewal will bill if nothing changes before it
     * (computed by the renewal's own code, nothing written); `null` when it will not renew.
     */
    readonly upcomingInvoice: (merchantId: string, id: string) => Promise<UpcomingInvoiceJson | null>
    /** `GET …/usage`: a cycle's usage (the open one by default). */
    readonly usage: (merchantId: string, id: string, cycleIndex?: number) => Promise<UsageSummaryJson>
    /** `POST …/usage`: one usage event (idempotent by `event_id`). */
    readonly recordUsage: (merchantId: string, id: string, input: Body<typeof UsageInput>) => Promise<UsageRecorded>
    /** Up to 1,000 usage events of any subscriptions in one transaction; re-sent event ids come back as duplicates. */
    readonly recordUsageBatch: (
      merchantId: string,
      records: ReadonlyArray<Body<typeof UsageInput> & { readonly subscription_id?: string }>
    ) => Promise<UsageBatchRecorded>
  }
  readonly invoices: {
    /** The merchant's invoices, newest first, optionally of one subscription. */
    readonly list: (
      merchantId: string,
      filter?: { readonly subscription_id?: string; readonly limit?: number }
    ) => Promise<{ has_more: boolean; list: Array<InvoiceJson> }>
  }
  readonly discounts: {
    /** `POST /api/v1/discounts`: a percentage or fixed-amount discount, optionally with a code. */
    readonly create: (merchantId: string, input: Body<typeof RequestBodies.CreateDiscount>) => Promise<DiscountJson>
    /** `GET /api/v1/discount/{id}`. */
    readonly get: (merchantId: string, discountId: string) => Promise<DiscountJson>
    /** `GET /api/v1/discounts`: newest first, optionally by status and code. */
    readonly list: (
      merchantId: string,
      filter?: {
        readonly status?: ReadonlyArray<"active" | "ended">
        readonly codes?: ReadonlyArray<string>
        readonly limit?: number
        readonly starting_after?: string
      }
    ) => Promise<{ has_more: boolean; list: Array<DiscountJson> }>
    /** `POST /api/v1/discount/{id}/end`: no new redemption from now on. */
    readonly end: (merchantId: string, discountId: string) => Promise<DiscountJson>
    /** `POST /api/v1/subscription/{id}/discount`: from the subscription's next cycle, for the discount's duration. */
    readonly applyToSubscription: (
      merchantId: string,
      subscriptionId: string,
      input: Body<typeof RequestBodies.ApplyDiscount>
    ) => Promise<SubscriptionDiscountsJson>
    /** `POST /api/v1/subscription/{id}/discount/remove`: the next cycles are billed without it. */
    readonly removeFromSubscription: (
      merchantId: string,
      subscriptionId: string,
      discountId: string
    ) => Promise<SubscriptionDiscountsJson>
  }
  readonly taxRates: {
    /**
     * `POST /api/v1/tax_rates`: a percentage (up to 4 decimals) for a country and optional region,
     * inclusive or exclusive; one active rate per country and region.
     */
    readonly create: (merchantId: string, input: Body<typeof RequestBodies.CreateTaxRate>) => Promise<TaxRateJson>
    /** `GET /api/v1/tax_rate/{id}`. */
    readonly get: (merchantId: string, taxRateId: string) => Promise<TaxRateJson>
    /** `GET /api/v1/tax_rates`: newest first, optionally by status and country. */
    readonly list: (
      merchantId: string,
      filter?: {
        readonly status?: ReadonlyArray<"active" | "archived">
        readonly countries?: ReadonlyArray<string>
        readonly limit?: number
        readonly starting_after?: string
      }
    ) => Promise<{ has_more: boolean; list: Array<TaxRateJson> }>
    /** `POST /api/v1/tax_rate/{id}/archive`: no new invoice uses it. */
    readonly archive: (merchantId: string, taxRateId: string) => Promise<TaxRateJson>
  }
  readonly portal: {
    /**
     * `POST /api/v1/customer-portal/auth`: a signed link to one customer's billing (subscriptions,
     * invoices, payment method), working for an hour.
     */
    readonly createSession: (
      merchantId: string,
      input: Body<typeof RequestBodies.PortalSession>
    ) => Promise<PortalSessionJson>
    /**
     * `POST /api/v1/customer-portal/session/{id}/revoke`: the link stops working at once (as a
     * deleted customer's links do); revoking it again changes nothing.
     */
    readonly revokeSession: (merchantId: string, portalSessionId: string) => Promise<PortalSessionJson>
    /** `GET /api/v1/portal_settings`: what the merchant's customers may do in the portal. */
    readonly settings: (merchantId: string) => Promise<PortalSettingsJson>
    /**
     * `POST /api/v1/portal_settings`: changes the fields given; `reset: true` returns to the
     * `portal` option's default. Prices to switch between must be active recurring prices.
     */
    readonly updateSettings: (
      merchantId: string,
      input: Body<typeof RequestBodies.PortalSettings>
    ) => Promise<PortalSettingsJson>
  }
  readonly refunds: {
    /** `POST /api/v1/refund`: all or part of a trade. */
    readonly create: (merchantId: string, input: Body<typeof RequestBodies.Refund>) => Promise<RefundJson>
  }
  readonly webhooks: {
    /** Creates a webhook endpoint; resolves with its id and its `whsec_` secret (shown once). */
    readonly createEndpoint: (
      merchantId: string,
      input: Body<typeof RequestBodies.WebhookEndpoint>
    ) => Promise<WebhookEndpointCreated>
    /** Delivers what is in the outbox now (fan-out + first attempts); resolves with how many events it took. */
    readonly dispatch: (owner?: string) => Promise<number>
  }
  /** What a customer's subscriptions grant, as committed (`./entitlements.ts`). */
  readonly entitlements: EntitlementsClient
  /** Moves a sandbox merchant's frozen clock forward, running everything due on the way. */
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

/**
 * Builds the engine and returns its Promise API. Call `close()` to release the database.
 *
 * @since 0.1.0
 */
export const createBilling = async (options: BillingOptions = {}): Promise<BillingClient> => {
  // the engine's own log lines (worker and webhook errors) never show a secret
  const runtime = ManagedRuntime.make(Layer.merge(layer(options), Redaction.layer))
  const started = await runtime.runPromiseExit(Effect.void)
  if (Exit.isFailure(started)) {
    await runtime.dispose()
    throw FacadeErrors.fromCause(started.cause)
  }
  const run = async <A, E>(effect: Effect.Effect<A, E, Services>): Promise<A> => {
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw FacadeErrors.fromCause(exit.cause)
  }
  /** Input checked as the REST API checks the same body. */
  const decode = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown) =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(input), (e) => FacadeErrors.invalidInput(e.issue))
  const billing = <A, E>(f: (b: Billing.Billing["Service"]) => Effect.Effect<A, E>) => run(Billing.Billing.use(f))
  const subs = <A, E>(f: (s: SubscriptionsService) => Effect.Effect<A, E>) => run(Subscriptions.Subscriptions.use(f))
  // Results are the JSON the REST API returns (timestamps as RFC 3339 strings), not Effect values.
  const json =
    <A, I>(schema: Schema.Codec<A, I>) =>
    (a: A): I =>
      Schema.encodeSync(schema)(a)
  const payment = (r: Billing.PaymentResult): PaymentJson => ({
    status: r.status,
    trade: json(Trade.Trade)(r.trade),
    subscription: Option.match(r.subscription, { onNone: () => null, onSome: json(Subscription.Subscription) }),
    redirect_url: Option.getOrNull(r.redirect_url),
    error: Option.getOrNull(r.error)
  })
  const id = (param: string, value: unknown) => decode(Schema.String.annotate({ identifier: param }), value)
  return {
    entitlements: entitlementsClient(run, decode),
    merchants: {
      create: (input) =>
        run(
          decode(RequestBodies.CreateMerchant, input).pipe(
            Effect.flatMap((i) => Merchants.Merchants.use((m) => m.create(i))),
            Effect.map((r) => ({ merchant_id: r.merchant.merchant_id, api_key: r.api_key }))
          )
        ),
      setInvoicePrefix: (merchantId, prefix) =>
        run(
          Effect.all([id("merchant_id", merchantId), id("invoice_prefix", prefix)]).pipe(
            Effect.flatMap(([m, p]) => Merchants.Merchants.use((ms) => ms.setInvoicePrefix(m, p))),
            Effect.map((m) => ({ invoice_prefix: m.invoice_prefix }))
          )
        ),
      setDisputeSettings: (merchantId, settings) =>
        run(
          Effect.gen(function* () {
            const m = yield* id("merchant_id", merchantId)
            const policy = (yield* decode(RequestBodies.DisputeSettings, settings)).fraud_dispute_renewals
            if (policy === undefined)
              return yield* new Errors.InvalidParameter({ param: "fraud_dispute_renewals", reason: "is required" })
            const merchant = yield* Merchants.Merchants.use((ms) =>
              ms.setDisputeSettings(m, { fraud_dispute_renewals: policy })
            )
            return { fraud_dispute_renewals: merchant.fraud_dispute_renewals }
          })
        ),
      paymentSettings: (merchantId) =>
        run(
          PaymentSettings.PaymentSettings.use((p) => p.get(merchantId)).pipe(
            Effect.map(json(PaymentSettings.PaymentSettingsView))
          )
        ),
      setPaymentSettings: (merchantId, input) =>
        run(
          decode(RequestBodies.PaymentSettings, input).pipe(
            Effect.flatMap((i) => PaymentSettings.PaymentSettings.use((p) => p.set(merchantId, i))),
            Effect.map(json(PaymentSettings.PaymentSettingsView))
          )
        )
    },
    catalog: {
      createProduct: (merchantId, input) =>
        run(
          decode(RequestBodies.CreateProduct, input).pipe(
            Effect.flatMap((i) => Catalog.Catalog.use((c) => c.createProduct(merchantId, i))),
            Effect.map(json(Product.Product))
          )
        ),
      createPrice: (merchantId, input) =>
        run(
          decode(RequestBodies.CreatePrice, input).pipe(
            Effect.flatMap((i) => Catalog.Catalog.use((c) => c.createPrice(merchantId, i))),
            Effect.map(json(Price.PriceVersion))
          )
        )
    },
    customers: {
      create: (merchantId, input) =>
        run(
          decode(RequestBodies.CreateCustomer, input).pipe(
            Effect.flatMap((i) => Customers.Customers.use((c) => c.create(merchantId, i))),
            Effect.map((r) => json(Customer.Customer)(Customers.toCustomer(r)))
          )
        ),
      delete: (merchantId, customerId) =>
        run(
          id("customer_id", customerId).pipe(
            Effect.flatMap((c) => Customers.Customers.use((s) => s.delete(merchantId, { customer_id: c })))
          )
        )
    },
    checkout: {
      createSession: (merchantId, input) =>
        run(
          decode(RequestBodies.CreateSession, input).pipe(
            Effect.flatMap(Requests.sessionCommand),
            Effect.flatMap((command) => Checkout.Checkout.use((c) => c.createSession(merchantId, command))),
            Effect.map(json(CheckoutSession.CheckoutSession))
          )
        ),
      pay: (merchantId, sessionId, card) =>
        run(
          SessionPayments.SessionPayments.use((sessionPayments) =>
            Effect.all([id("session_id", sessionId), decode(RequestBodies.Payment, card)]).pipe(
              Effect.flatMap(([s, c]) => sessionPayments.paySession(merchantId, s, paymentOf(c))),
              Effect.map(payment)
            )
          )
        )
    },
    subscriptions: {
      get: (merchantId, subscriptionId) =>
        billing((b) =>
          id("subscription_id", subscriptionId).pipe(
            Effect.flatMap((s) => b.getSubscription(merchantId, s)),
            Effect.map(json(Subscription.Subscription))
          )
        ),
      previewChange: (merchantId, subscriptionId, input) =>
        run(
          PriceChanges.PriceChanges.use((priceChanges) =>
            decode(RequestBodies.ChangePrice, input).pipe(
              Effect.flatMap((i) => Requests.changeCommand(subscriptionId, i)),
              Effect.flatMap((c) => priceChanges.previewChange(merchantId, c))
            )
          )
        ),
      change: (merchantId, subscriptionId, input) =>
        run(
          PriceChanges.PriceChanges.use((priceChanges) =>
            decode(RequestBodies.ChangePrice, input).pipe(
              Effect.flatMap((i) => Requests.changeCommand(subscriptionId, i)),
              Effect.flatMap((c) => priceChanges.changePrice(merchantId, c))
            )
          )
        ),
      cancel: (merchantId, subscriptionId, input = {}) =>
        subs((s) =>
          decode(RequestBodies.Cancel, input).pipe(
            Effect.flatMap((i) => Requests.cancelCommand(subscriptionId, i)),
            Effect.flatMap((c) => s.cancel(merchantId, c)),
            Effect.map(json(Subscription.Subscription))
          )
        ),
      pause: (merchantId, subscriptionId) =>
        subs((s) =>
          id("subscription_id", subscriptionId).pipe(
            Effect.flatMap((i) => s.pause(merchantId, i)),
            Effect.map(json(Subscription.Subscription))
          )
        ),
      updatePaymentMethod: (merchantId, subscriptionId, card) =>
        run(
          PaymentMethods.PaymentMethods.use((paymentMethods) =>
            Effect.all([id("subscription_id", subscriptionId), decode(RequestBodies.Payment, card)]).pipe(
              Effect.flatMap(([i, c]) => paymentMethods.updatePaymentMethod(merchantId, i, paymentOf(c)))
            )
          )
        ),
      upcomingInvoice: (merchantId, subscriptionId) =>
        run(
          Renewals.Renewals.use((renewals) =>
            id("subscription_id", subscriptionId).pipe(
              Effect.flatMap((i) => renewals.upcoming(merchantId, i)),
              Effect.map((o) => (Option.isSome(o) ? json(Invoice.UpcomingInvoice)(o.value) : null))
            )
          )
        ),
      resume: (merchantId, subscriptionId) =>
        subs((s) =>
          id("subscription_id", subscriptionId).pipe(
            Effect.flatMap((i) => s.resume(merchantId, i)),
            Effect.map(json(Subscription.Subscription))
          )
        ),
      usage: (merchantId, subscriptionId, cycleIndex) =>
        run(
          Metering.Metering.use((metering) =>
            id("subscription_id", subscriptionId).pipe(
              Effect.flatMap((i) => metering.usageSummary(merchantId, i, cycleIndex)),
              Effect.map(json(Usage.UsageSummary))
            )
          )
        ),
      recordUsage: (merchantId, subscriptionId, input) =>
        run(
          Metering.Metering.use((metering) =>
            decode(UsageInput, input).pipe(
              Effect.flatMap((i) => Requests.usageEvent(subscriptionId, i)),
              Effect.flatMap((e) => metering.recordUsage(merchantId, e))
            )
          )
        ),
      recordUsageBatch: (merchantId, records) =>
        run(
          Metering.Metering.use((metering) =>
            decode(UsageBatchInput, { records }).pipe(
              Effect.flatMap((i) => Requests.usageEvents(i.records)),
              Effect.flatMap((e) => metering.recordUsageBatch(merchantId, e))
            )
          )
        )
    },
    invoices: {
      list: (merchantId, filter = {}) =>
        billing((b) =>
          Effect.map(
            b.listInvoices(merchantId, {
              limit: filter.limit ?? 100,
              filters: filter.subscription_id
                ? [{ column: "subscription_id", op: "in", values: [filter.subscription_id] }]
                : []
            }),
            (p) => ({ has_more: p.has_more, list: p.list.map(json(Invoice.Invoice)) })
          )
        )
    },
    discounts: {
      create: (merchantId, input) =>
        run(
          decode(RequestBodies.CreateDiscount, input).pipe(
            Effect.flatMap(Requests.discountCommand),
            Effect.flatMap((c) => Requests.refusedAsParameter(Discounts.Discounts.use((d) => d.create(merchantId, c)))),
            Effect.map(json(Discount.Discount))
          )
        ),
      get: (merchantId, discountId) =>
        run(
          id("discount_id", discountId).pipe(
            Effect.flatMap((i) => Discounts.Discounts.use((d) => d.get(merchantId, i))),
            Effect.map(json(Discount.Discount))
          )
        ),
      list: (merchantId, filter = {}) =>
        run(
          Effect.map(
            Discounts.Discounts.use((d) => d.list(merchantId, filter)),
            (p) => ({ has_more: p.has_more, list: p.list.map(json(Discount.Discount)) })
          )
        ),
      end: (merchantId, discountId) =>
        run(
          id("discount_id", discountId).pipe(
            Effect.flatMap((i) => Discounts.Discounts.use((d) => d.end(merchantId, i))),
            Effect.map(json(Discount.Discount))
          )
        ),
      applyToSubscription: (merchantId, subscriptionId, input) =>
        run(
          Effect.all([
            id("subscription_id", subscriptionId),
            Effect.flatMap(decode(RequestBodies.ApplyDiscount, input), Requests.discountRef)
          ]).pipe(
            Effect.flatMap(([s, ref]) =>
              Requests.refusedAsParameter(Discounts.Discounts.use((d) => d.applyToSubscription(merchantId, s, ref)))
            )
          )
        ),
      removeFromSubscription: (merchantId, subscriptionId, discountId) =>
        run(
          Effect.all([id("subscription_id", subscriptionId), id("discount_id", discountId)]).pipe(
            Effect.flatMap(([s, i]) => Discounts.Discounts.use((d) => d.removeFromSubscription(merchantId, s, i)))
          )
        )
    },
    taxRates: {
      create: (merchantId, input) =>
        run(
          decode(RequestBodies.CreateTaxRate, input).pipe(
            Effect.flatMap((i) => TaxRates.TaxRates.use((t) => t.create(merchantId, i))),
            Effect.map(json(Tax.TaxRate))
          )
        ),
      get: (merchantId, taxRateId) =>
        run(
          id("tax_rate_id", taxRateId).pipe(
            Effect.flatMap((i) => TaxRates.TaxRates.use((t) => t.get(merchantId, i))),
            Effect.map(json(Tax.TaxRate))
          )
        ),
      list: (merchantId, filter = {}) =>
        run(
          Effect.map(
            TaxRates.TaxRates.use((t) => t.list(merchantId, filter)),
            (p) => ({ has_more: p.has_more, list: p.list.map(json(Tax.TaxRate)) })
          )
        ),
      archive: (merchantId, taxRateId) =>
        run(
          id("tax_rate_id", taxRateId).pipe(
            Effect.flatMap((i) => TaxRates.TaxRates.use((t) => t.archive(merchantId, i))),
            Effect.map(json(Tax.TaxRate))
          )
        )
    },
    portal: {
      createSession: (merchantId, input) =>
        run(
          decode(RequestBodies.PortalSession, input).pipe(
            Effect.flatMap(Requests.portalSessionCommand),
            Effect.flatMap((c) =>
              Requests.refusedAsParameter(Portal.Portal.use((p) => p.createSession(merchantId, c)))
            ),
            Effect.map(json(PortalSession.PortalSession))
          )
        ),
      revokeSession: (merchantId, sessionId) =>
        run(
          id("portal_session_id", sessionId).pipe(
            Effect.flatMap((s) => Portal.Portal.use((p) => p.revokeSession(merchantId, s))),
            Effect.map(json(PortalSession.PortalSession))
          )
        ),
      settings: (merchantId) =>
        run(Portal.Portal.use((p) => p.settingsOf(merchantId)).pipe(Effect.map(json(PortalSession.PortalSettings)))),
      updateSettings: (merchantId, input) =>
        run(
          decode(RequestBodies.PortalSettings, input).pipe(
            Effect.flatMap(Requests.portalSettingsCommand),
            Effect.flatMap((c) => Requests.refusedAsParameter(Portal.Portal.use((p) => p.setSettings(merchantId, c)))),
            Effect.map(json(PortalSession.PortalSettings))
          )
        )
    },
    refunds: {
      create: (merchantId, input) =>
        run(
          Refunds.Refunds.use((refunds) =>
            decode(RequestBodies.Refund, input).pipe(
              Effect.flatMap((i) => Requests.refundCommand(i)),
              Effect.flatMap((c) => refunds.refund(merchantId, c)),
              Effect.map(json(Refund.Refund))
            )
          )
        )
    },
    webhooks: {
      createEndpoint: (merchantId, input) =>
        run(
          decode(RequestBodies.WebhookEndpoint, input).pipe(
            Effect.flatMap((i) => Webhooks.Webhooks.use((w) => w.create(merchantId, i)))
          )
        ),
      dispatch: (owner = "embedded") => run(WebhookDispatch.WebhookDispatch.use((w) => w.dispatchOnce({ owner })))
    },
    advanceClock: (merchantId, to) =>
      run(
        SandboxClock.SandboxClock.use((sandboxClock) =>
          Effect.asVoid(sandboxClock.advanceClock(merchantId, to.getTime()))
        )
      ),
    runDue: (owner = "embedded") =>
      run(
        Worker.Worker.use((worker) =>
          Effect.flatMap(
            Effect.clockWith((c) => c.currentTimeMillis),
            (now) => worker.runDue({ now, owner, lane: "live" })
          )
        )
      ),
    context: () => runtime.context(),
    close: () => runtime.dispose()
  }
}
