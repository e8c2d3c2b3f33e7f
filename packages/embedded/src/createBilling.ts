/**
 * Recur behind Promises, for applications that do not use Effect: one call composes the
 * storage, the payment gateway and the engine, and returns async methods.
 *
 * @example
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, payments: "sandbox" })
 * const { merchant_id } = await billing.merchants.create({ name: "Acme", currency: "USD" })
 * @since 0.1.0
 */
import * as EcbRates from "./fx/EcbRates.js"
import {
  Common,
  DunningPolicy,
  Engine,
  Entities,
  Errors,
  PaymentSettings,
  Portal,
  Ports,
  Redaction,
  SandboxClock,
  Secrets,
  Settings,
  Store,
  TaxRates,
  Worker
} from "@recur/core"
import { ErrorReplies } from "@recur/contract"
import { SandboxGateway } from "@recur/payment-sandbox"
import { HttpTransport } from "@recur/webhooks"
import { MasterKey, Pg } from "@recur/sql"
import { MemoryStorage } from "@recur/memory"
import {
  DateTime,
  Effect,
  Exit,
  Layer,
  type LogLevel,
  ManagedRuntime,
  Option,
  Redacted,
  References,
  Result
} from "effect"
import * as FacadeErrors from "./Errors.js"
import * as CatalogGroups from "./facade/Catalog.js"
import type { BillingClient } from "./facade/Client.js"
import type { Kit } from "./facade/Kit.js"
import * as PaymentGroups from "./facade/Payments.js"
import * as InvoiceItemGroups from "./facade/InvoiceItems.js"
import * as MeterEventGroups from "./facade/MeterEvents.js"
import * as UsageAdjustmentGroups from "./facade/UsageAdjustments.js"
import * as SubscriptionGroups from "./facade/Subscriptions.js"
import * as ScheduleGroups from "./facade/Schedules.js"
import * as ItemGroups from "./facade/Items.js"

export type { BillingClient } from "./facade/Client.js"
export * from "./facade/Types.js"
import * as EntitlementGroups from "./facade/Entitlements.js"
import * as BalanceGroups from "./facade/Balances.js"
import * as MetricGroups from "./facade/BillableMetrics.js"
import * as CreditGroups from "./facade/CreditGrants.js"
import * as UsageAlertGroups from "./facade/UsageAlerts.js"
import * as NotificationGroups from "./facade/Notifications.js"
import * as SmtpNotifier from "./notify/SmtpNotifier.js"

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
  /**
   * The least severe of the engine's own log lines printed to the console (the worker's renewal
   * batches and retries, webhook attempts): default `"warn"` — what needs your attention, not each
   * batch; `"info"` for a line per batch and attempt; `"none"` for silence. Secrets are redacted.
   */
  readonly logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "none"
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
  /**
   * The master keys `masterKey` replaced (newest first), after a rotation: they still decrypt
   * what was stored under them, and verify invoice and portal links signed under them until
   * `until` (Unix ms; none: as long as they are listed). With `{ pglite: dir }` and no `masterKey`,
   * the ones kept in `dir` (`master.key.previous`, and an interrupted rotation's `master.key.next`).
   */
  readonly previousMasterKeys?: ReadonlyArray<{ readonly key: string; readonly until?: number | undefined }>
  /**
   * Exchange rates for `target_currency` without a `merchant_rate`, e.g. `{ "USD:EUR": "0.92" }`:
   * the only rates by default; with `fx: "ecb"`, the fallback for pairs the ECB does not quote
   * or when its rates are stale or unreachable.
   */
  readonly fxRates?: Readonly<Record<string, string>>
  /**
   * Where "the rate of the day" comes from: `"static"` (default: `fxRates` only), `"ecb"` (the
   * European Central Bank's daily euro reference rates, fetched at most once per publishing day
   * and kept in storage, `fxRates` as fallback — see `EcbRates`), the ECB adapter's options
   * (another feed URL, your own fetch), or an `FxRates` Layer of your own.
   */
  readonly fx?: "static" | "ecb" | EcbRates.EcbOptions | Layer.Layer<Ports.FxRates, never, Store.Storage>
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
   * The default dunning policy (merchants may set their own): retries `retryDays` after the first
   * failed renewal (default 1, 3, 5, 7), then `finalState` (default `unpaid`); `onDecline` says
   * what each class of decline does, `retry` on the schedule or `stop` at once and wait for a new
   * payment method (default `{ hard: "stop", soft: "retry", expired_card: "stop" }`; the classes
   * given replace the default's).
   */
  readonly dunning?: {
    readonly retryDays?: ReadonlyArray<number>
    readonly finalState?: "unpaid" | "canceled"
    readonly onDecline?: Partial<Record<"hard" | "soft" | "expired_card", "retry" | "stop">>
  }
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
  /**
   * How customer notifications are sent: over SMTP (`{ smtp: { url: "smtps://user:pass@host" } }`,
   * nodemailer), or through a `Notifier` Layer of your own. Default: none — messages merchants
   * turn on wait in the outbox, retried, until a notifier is configured.
   */
  readonly notifications?:
    | { readonly smtp: SmtpNotifier.SmtpOptions }
    | { readonly notifier: Layer.Layer<Ports.Notifier> }
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
const masterKeyOf = (
  options: BillingOptions
): Effect.Effect<Pick<BillingOptions, "masterKey" | "previousMasterKeys">, unknown> => {
  if (options.masterKey !== undefined) return Effect.succeed(options)
  const storage = options.storage
  if (storage !== undefined && storage !== "memory" && "postgres" in storage)
    throw new RangeError(
      new MasterKey.MasterKeyRequired({ setting: "masterKey", storage: "{ postgres } storage" }).message
    )
  const dir = storage !== undefined && storage !== "memory" ? storage.pglite : undefined
  return dir === undefined || dir.includes("://")
    ? Effect.sync(() => ({ masterKey: randomHex() }))
    : Effect.map(MasterKey.ringInDataDir(dir), (ring) => ({
        masterKey: Redacted.value(ring.current),
        previousMasterKeys: ring.previous.map((p) => ({ key: Redacted.value(p.key), until: p.until }))
      }))
}

/**
 * The engine as a Layer (for Effect users who want the same composition).
 *
 * @since 0.1.0
 */
export const layer = (options: BillingOptions = {}) => {
  const masterKey = masterKeyOf(options)
  return Layer.unwrap(Effect.map(masterKey, (keys) => engineOn(storageLayer(options.storage), { ...options, ...keys })))
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
  const secrets = Secrets.layer(
    Redacted.make(options.masterKey ?? randomHex()),
    (options.previousMasterKeys ?? []).map((p) => ({ key: Redacted.make(p.key), until: p.until }))
  )
  return Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        secrets,
        paymentsLayer(options, secrets),
        fxLayer(options),
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
        DunningPolicy.layerDefault(dunningPolicy(options.dunning)),
        notifierLayer(options)
      )
    ),
    Layer.provideMerge(storage)
  )
}

/** The notifier as `notifications` says; none (an empty layer) by default. */
const notifierLayer = (options: Omit<BillingOptions, "storage">): Layer.Layer<never> | Layer.Layer<Ports.Notifier> =>
  options.notifications === undefined
    ? Layer.empty
    : "smtp" in options.notifications
      ? SmtpNotifier.layer(options.notifications.smtp)
      : options.notifications.notifier

/** The FX port as `fx` says: the static table, the ECB's daily rates over it, or the embedder's own. */
const fxLayer = (options: Omit<BillingOptions, "storage">): Layer.Layer<Ports.FxRates, never, Store.Storage> => {
  const fx = options.fx ?? "static"
  if (fx === "static") return Ports.fxStatic(options.fxRates ?? {})
  if (fx === "ecb") return EcbRates.layer({ fallback: options.fxRates ?? {} })
  if (Layer.isLayer(fx)) return fx as Layer.Layer<Ports.FxRates, never, Store.Storage>
  const ecb = fx as EcbRates.EcbOptions
  return EcbRates.layer({ ...ecb, fallback: ecb.fallback ?? options.fxRates ?? {} })
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

/** The configured portal settings, checked: a bad one is a RangeError naming it. */
const portalDefaults = (option: BillingOptions["portal"]) => {
  const checked = Portal.configured(option ?? {})
  if (Result.isFailure(checked))
    throw new RangeError(
      `portal.${ErrorReplies.paramName(checked.failure.param, checked.failure.entry)} ${checked.failure.reason}`
    )
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
    finalState: option?.finalState ?? DunningPolicy.standard.finalState,
    onDecline: { ...DunningPolicy.standardRules, ...declineRules(option?.onDecline) }
  }
}

/** The classes of decline an `onDecline` option sets, checked. */
const declineRules = (
  rules: NonNullable<BillingOptions["dunning"]>["onDecline"]
): Partial<DunningPolicy.DeclineRules> => {
  const set: Partial<Record<keyof DunningPolicy.DeclineRules, DunningPolicy.DeclineAction>> = {}
  for (const [key, action] of Object.entries(rules ?? {})) {
    if (action === undefined) continue
    if (!(key in DunningPolicy.standardRules))
      throw new RangeError(`dunning.onDecline.${key} is not a decline class (hard, soft or expired_card)`)
    if (action !== "retry" && action !== "stop") throw new RangeError(`dunning.onDecline.${key} must be retry or stop`)
    set[key as keyof DunningPolicy.DeclineRules] = action
  }
  return set
}

/**
 * The engine's services, as {@link layer} provides them.
 *
 * @since 0.1.0
 */
export type Services = Layer.Success<ReturnType<typeof layer>>

/**
 * Builds the engine and returns its Promise API. Call `close()` to release the database.
 *
 * @since 0.1.0
 */
export const createBilling = async (options: BillingOptions = {}): Promise<BillingClient> => {
  // the engine's own log lines (worker and webhook errors) never show a secret, and come from
  // the level asked for up (warnings and errors by default: an embedder's stdout is its own)
  const level = options.logLevel ?? "warn"
  const logging = Layer.merge(
    Redaction.layer,
    Layer.succeed(References.MinimumLogLevel, (level.charAt(0).toUpperCase() + level.slice(1)) as LogLevel.LogLevel)
  )
  const runtime = ManagedRuntime.make(layer(options).pipe(Layer.provideMerge(logging)))
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
  const kit: Kit<Services> = { run }
  return {
    entitlements: EntitlementGroups.entitlements(kit),
    merchants: CatalogGroups.merchants(kit),
    catalog: CatalogGroups.catalog(kit),
    customers: { ...CatalogGroups.customers(kit), autoTopUp: CreditGroups.autoTopUp(kit) },
    creditGrants: CreditGroups.creditGrants(kit),
    checkout: SubscriptionGroups.checkout(kit),
    subscriptions: SubscriptionGroups.subscriptions(kit),
    invoices: PaymentGroups.invoices(kit),
    trades: PaymentGroups.trades(kit),
    refunds: PaymentGroups.refunds(kit),
    discounts: PaymentGroups.discounts(kit),
    schedules: ScheduleGroups.schedules(kit),
    items: ItemGroups.items(kit),
    taxRates: PaymentGroups.taxRates(kit),
    billableMetrics: MetricGroups.billableMetrics(kit),
    usageAlerts: UsageAlertGroups.usageAlerts(kit),
    invoiceItems: InvoiceItemGroups.invoiceItems(kit),
    meterEvents: MeterEventGroups.meterEvents(kit),
    usageAdjustments: UsageAdjustmentGroups.usageAdjustments(kit),
    portal: PaymentGroups.portal(kit),
    notifications: NotificationGroups.notifications(kit),
    balances: BalanceGroups.balances(kit),
    webhooks: PaymentGroups.webhooks(kit),
    clock: (merchantId) =>
      run(
        SandboxClock.SandboxClock.use((sandboxClock) =>
          Effect.gen(function* () {
            const c = yield* sandboxClock.clockOf(merchantId)
            // test helpers are for sandbox merchants, as over REST
            if (c.merchant.mode !== "sandbox")
              return yield* new Errors.StateConflict({
                resource: "merchant",
                id: merchantId,
                state: "live",
                reason: "test helpers need a sandbox key"
              })
            return {
              frozen_time:
                c.merchant.frozen_time === null
                  ? null
                  : Common.formatInstant(DateTime.toEpochMillis(c.merchant.frozen_time)),
              target_time: Option.match(c.target, { onNone: () => null, onSome: Common.formatInstant }),
              advancing: Option.isSome(c.target)
            }
          })
        )
      ),
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
