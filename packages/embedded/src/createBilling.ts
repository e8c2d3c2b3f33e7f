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
  Catalog,
  CheckoutSession,
  Customer,
  Customers,
  DunningPolicy,
  Engine,
  Invoice,
  Merchants,
  Ports,
  Price,
  Product,
  Refund,
  Requests,
  Secrets,
  Settings,
  type Store,
  Subscription,
  Subscriptions,
  Trade,
  Usage,
  Webhooks
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { HttpTransport } from "@recur/webhooks"
import { Pg } from "@recur/sql"
import { MemoryStorage } from "@recur/memory"
import { Effect, Layer, ManagedRuntime, Option, Redacted, Schema } from "effect"

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
  /** Only the sandbox gateway ships today. */
  readonly payments?: "sandbox"
  /** 32 bytes as 64 hex characters; encrypts stored API keys. Default: a fresh random key (fine for tests). */
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
 * The engine as a Layer (for Effect users who want the same composition).
 *
 * @since 0.1.0
 */
export const layer = (options: BillingOptions = {}) => engineOn(storageLayer(options.storage), options)

/**
 * The engine on a storage layer of your own (its other outputs, such as a `SqlClient`, stay
 * available).
 *
 * @since 0.1.0
 */
export const engineOn = <A, E>(
  storage: Layer.Layer<A | Store.Storage, E>,
  options: Omit<BillingOptions, "storage"> = {}
) =>
  Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        storage,
        Secrets.layer(Redacted.make(options.masterKey ?? randomHex())),
        // the 3-D Secure challenge lives beside the checkout pages, under the public URL (and its mount prefix)
        SandboxGateway.layer(
          options.publicUrl ? { challengeBaseUrl: `${options.publicUrl.replace(/\/+$/, "")}/sandbox/3ds` } : {}
        ),
        Ports.fxStatic(options.fxRates ?? {}),
        Ports.taxNone,
        options.webhooks !== undefined && "transport" in options.webhooks
          ? options.webhooks.transport
          : HttpTransport.layer(options.webhooks ?? {}),
        Settings.layer({
          ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
          webhookPrivateNetwork:
            options.webhooks !== undefined && "allowPrivateNetwork" in options.webhooks
              ? options.webhooks.allowPrivateNetwork === true
              : false
        }),
        DunningPolicy.layerDefault(dunningPolicy(options.dunning))
      )
    )
  )

/** The facade's `dunning` option as a policy (the standard one where it is silent). */
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

/**
 * Builds the engine and returns its Promise API. Call `close()` to release the database.
 *
 * @since 0.1.0
 */
export const createBilling = async (options: BillingOptions = {}) => {
  const runtime = ManagedRuntime.make(layer(options))
  await runtime.runPromise(Effect.void)
  const run = <A, E>(effect: Effect.Effect<A, E, Services>): Promise<A> => runtime.runPromise(effect)
  const billing = <A, E>(f: (b: Billing.Billing["Service"]) => Effect.Effect<A, E>) => run(Billing.Billing.use(f))
  const subs = <A, E>(f: (s: Subscriptions.Subscriptions["Service"]) => Effect.Effect<A, E>) =>
    run(Subscriptions.Subscriptions.use(f))
  // Results are the JSON the REST API returns (timestamps as RFC 3339 strings), not Effect values.
  const json =
    <A, I>(schema: Schema.Codec<A, I>) =>
    (a: A): I =>
      Schema.encodeSync(schema)(a)
  const payment = (r: Billing.PaymentResult) => ({
    status: r.status,
    trade: json(Trade.Trade)(r.trade),
    subscription: Option.match(r.subscription, { onNone: () => null, onSome: json(Subscription.Subscription) }),
    redirect_url: Option.getOrNull(r.redirect_url),
    error: Option.getOrNull(r.error)
  })
  return {
    merchants: {
      /** Creates a merchant; returns its id and its API key (shown once). */
      create: (input: Merchants.CreateMerchant) =>
        run(
          Effect.map(
            Merchants.Merchants.use((m) => m.create(input)),
            (r) => ({ merchant_id: r.merchant.merchant_id, api_key: r.api_key })
          )
        )
    },
    catalog: {
      createProduct: (merchantId: string, input: Catalog.CreateProduct) =>
        run(
          Effect.map(
            Catalog.Catalog.use((c) => c.createProduct(merchantId, input)),
            json(Product.Product)
          )
        ),
      createPrice: (merchantId: string, input: Parameters<Catalog.Catalog["Service"]["createPrice"]>[1]) =>
        run(
          Effect.map(
            Catalog.Catalog.use((c) => c.createPrice(merchantId, input)),
            json(Price.PriceVersion)
          )
        )
    },
    customers: {
      create: (merchantId: string, input: Customers.CreateCustomer) =>
        run(
          Effect.map(
            Customers.Customers.use((c) => c.create(merchantId, input)),
            (r) => json(Customer.Customer)(Customers.toCustomer(r))
          )
        )
    },
    checkout: {
      createSession: (merchantId: string, input: Billing.SessionInput) =>
        billing((b) => Effect.map(b.createSession(merchantId, input), json(CheckoutSession.CheckoutSession))),
      pay: (merchantId: string, sessionId: string, card: Ports.CardInput) =>
        billing((b) => Effect.map(b.paySession(merchantId, sessionId, card), payment))
    },
    subscriptions: {
      get: (merchantId: string, id: string) =>
        billing((b) => Effect.map(b.getSubscription(merchantId, id), json(Subscription.Subscription))),
      previewChange: (merchantId: string, id: string, input: Requests.ChangeRequest) =>
        subs((s) => Effect.flatMap(Requests.changeCommand(id, input), (c) => s.previewChange(merchantId, c))),
      change: (merchantId: string, id: string, input: Requests.ChangeRequest) =>
        subs((s) => Effect.flatMap(Requests.changeCommand(id, input), (c) => s.changePrice(merchantId, c))),
      cancel: (merchantId: string, id: string, input?: { cancel_type?: string; cancel_reason?: string }) =>
        subs((s) =>
          Effect.map(
            Effect.flatMap(Requests.cancelCommand(id, input), (c) => s.cancel(merchantId, c)),
            json(Subscription.Subscription)
          )
        ),
      pause: (merchantId: string, id: string) =>
        subs((s) => Effect.map(s.pause(merchantId, id), json(Subscription.Subscription))),
      resume: (merchantId: string, id: string) =>
        subs((s) => Effect.map(s.resume(merchantId, id), json(Subscription.Subscription))),
      usage: (merchantId: string, id: string, cycleIndex?: number) =>
        subs((s) => Effect.map(s.usageSummary(merchantId, id, cycleIndex), json(Usage.UsageSummary))),
      recordUsage: (merchantId: string, id: string, input: { usage_count: number; event_id?: string }) =>
        subs((s) => Effect.flatMap(Requests.usageEvent(id, input), (e) => s.recordUsage(merchantId, e))),
      /** Up to 1,000 usage events of any subscriptions in one transaction; re-sent event ids come back as duplicates. */
      recordUsageBatch: (merchantId: string, records: ReadonlyArray<Requests.UsageRequest>) =>
        subs((s) => Effect.flatMap(Requests.usageEvents(records), (e) => s.recordUsageBatch(merchantId, e)))
    },
    invoices: {
      list: (merchantId: string, filter: { subscription_id?: string; limit?: number } = {}) =>
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
    refunds: {
      create: (merchantId: string, input: { trade_id: string; amount?: string; reason?: string }) =>
        subs((s) =>
          Effect.map(
            Effect.flatMap(Requests.refundCommand(input), (c) => s.refund(merchantId, c)),
            json(Refund.Refund)
          )
        )
    },
    webhooks: {
      /** Creates a webhook endpoint; returns its id and its `whsec_` secret (shown once). */
      createEndpoint: (merchantId: string, input: Webhooks.EndpointInput) =>
        run(Webhooks.Webhooks.use((w) => w.create(merchantId, input))),
      /** Delivers what is in the outbox now (fan-out + first attempts); returns how many events it took. */
      dispatch: (owner = "embedded") => run(Webhooks.Webhooks.use((w) => w.dispatchOnce({ owner })))
    },
    /** Moves a sandbox merchant's frozen clock forward, running everything due on the way. */
    advanceClock: (merchantId: string, to: Date) =>
      billing((b) => Effect.asVoid(b.advanceClock(merchantId, to.getTime()))),
    /** Runs due work once (call from your own scheduler, or use `startWorker`). */
    runDue: (owner = "embedded") =>
      billing((b) =>
        Effect.flatMap(
          Effect.clockWith((c) => c.currentTimeMillis),
          (now) => b.runDue({ now, owner, lane: "live" })
        )
      ),
    close: () => runtime.dispose()
  }
}

/**
 * The client returned by {@link createBilling}.
 *
 * @since 0.1.0
 */
export type BillingClient = Awaited<ReturnType<typeof createBilling>>
