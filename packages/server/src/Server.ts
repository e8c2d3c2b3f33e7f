/**
 * The standalone server: the engine on PGlite (or Postgres), the REST API on Node's HTTP
 * server, the billing worker, the webhook dispatcher, and a demo merchant on first start.
 *
 * @since 0.1.0
 */
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "effect/sql"
import {
  type Billing,
  type Catalog,
  type Charges,
  type Checkout,
  type Customers,
  type CustomerBalances,
  type InvoiceCredits,
  type Declines,
  type Discounts,
  type Schedules,
  type Dunning,
  type Entitlements,
  type InvoicePayments,
  type InvoiceItems,
  type OneOffInvoices,
  type MeterEvents,
  type MeterCorrections,
  type UsageAdjustments,
  type UsageAlerts,
  Merchants,
  type Metering,
  type Payments,
  type PaymentMethods,
  type PaymentSettings,
  type Notifications,
  type Portal,
  type PriceChanges,
  type ItemChanges,
  type PriceMigrations,
  Ports,
  type ProcessorEvents,
  type Reconciliation,
  Redaction,
  type Refunds,
  type Renewals,
  type SentInvoices,
  type InvoiceActions,
  type DraftEdits,
  type SandboxClock,
  type Secrets,
  type SessionPayments,
  type Settings,
  type Store,
  type Subscriptions,
  type TaxRates,
  type BillableMetrics,
  type CreditGrants,
  type WebhookDispatch,
  type Webhooks,
  Worker
} from "@recur/core"
import type { SandboxGateway } from "@recur/payment-sandbox"
import { engineOn } from "@recur/embedded"
import { StripeGateway } from "@recur/payment-stripe"
import { Pg, PoolGauges } from "@recur/sql"
import { Http, Observability } from "@recur/http"
import { Console, Effect, Layer, Logger, Metric, Option, Redacted, References, Tracer } from "effect"
import { FetchHttpClient, HttpMiddleware, HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import { createServer } from "node:http"
import { Dispatcher } from "@recur/webhooks"
import type { LogSettings, ServerConfig } from "./Config.js"

/**
 * The services the server runs on.
 *
 * @since 0.1.0
 */
export type Engine =
  | Store.Storage
  | Customers.Customers
  | CustomerBalances.CustomerBalances
  | InvoiceCredits.InvoiceCredits
  | Catalog.Catalog
  | Discounts.Discounts
  | Schedules.Schedules
  | TaxRates.TaxRates
  | BillableMetrics.BillableMetrics
  | CreditGrants.CreditGrants
  | Portal.Portal
  | Notifications.Notifications
  | PaymentSettings.PaymentSettings
  | Entitlements.Entitlements
  | ProcessorEvents.ProcessorEvents
  | Secrets.Secrets
  | Merchants.Merchants
  | Ports.PaymentGateway
  | Ports.FxRates
  | Ports.TaxCalculator
  | Settings.Settings
  | Billing.Billing
  | Subscriptions.Subscriptions
  | Checkout.Checkout
  | SessionPayments.SessionPayments
  | Payments.Payments
  | Charges.Charges
  | Reconciliation.Reconciliation
  | Declines.Declines
  | Renewals.Renewals
  | InvoiceActions.InvoiceActions
  | DraftEdits.DraftEdits
  | PriceChanges.PriceChanges
  | ItemChanges.ItemChanges
  | PriceMigrations.PriceMigrations
  | PriceMigrations.PriceMigrations
  | Metering.Metering
  | Refunds.Refunds
  | Dunning.Dunning
  | PaymentMethods.PaymentMethods
  | InvoicePayments.InvoicePayments
  | SentInvoices.SentInvoices
  | InvoiceItems.InvoiceItems
  | OneOffInvoices.OneOffInvoices
  | MeterEvents.MeterEvents
  | MeterCorrections.MeterCorrections
  | UsageAdjustments.UsageAdjustments
  | UsageAlerts.UsageAlerts
  | Worker.Worker
  | SandboxClock.SandboxClock
  | SandboxGateway.SandboxControls
  | SqlClient.SqlClient
  | Webhooks.Webhooks
  | WebhookDispatch.WebhookDispatch
  | Ports.WebhookTransport

/**
 * The engine for a configuration: PGlite in the data directory, or Postgres.
 *
 * @since 0.1.0
 */
export const engine = (config: ServerConfig): Layer.Layer<Engine, unknown> =>
  engineOn<Store.Storage | SqlClient.SqlClient, unknown>(
    Option.match(config.databaseUrl, {
      onNone: () => Pg.layerPglite({ dataDir: config.dataDir }),
      onSome: (url) =>
        Pg.layerPgUrl({
          url,
          ...Option.match(config.databaseSchema, { onNone: () => ({}), onSome: (schema) => ({ schema }) })
        })
    }),
    {
      masterKey: Redacted.value(config.masterKey),
      previousMasterKeys: config.previousMasterKeys.map((p) => ({ key: Redacted.value(p.key), until: p.until })),
      publicUrl: config.publicUrl,
      webhooks: { allowPrivateNetwork: config.allowPrivateWebhooks },
      dunning: config.dunning,
      taxRates: config.taxRates,
      portal: config.portal,
      // customer notifications over SMTP when configured (the URL holds the password: never logged)
      ...Option.match(config.smtpUrl, {
        onNone: () => ({}),
        onSome: (url) => ({ notifications: { smtp: { url: Redacted.value(url) } } })
      }),
      fx: config.fxSource,
      fxRates: config.fxRates,
      ...Option.match(config.stripeJsUrl, { onNone: () => ({}), onSome: (stripeJsUrl) => ({ stripeJsUrl }) }),
      // each merchant's own Stripe account once it has set its keys; the sandbox otherwise
      payments: StripeGateway.perMerchant(
        Option.match(config.stripeApiBase, { onNone: () => ({}), onSome: (apiBase) => ({ apiBase }) })
      )
    }
  )

/**
 * Creates the sandbox demo merchant when the store has no merchant yet, and prints its key.
 *
 * @since 0.1.0
 */
export const ensureDemoMerchant = (config: ServerConfig) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`select count(*)::int as n from recur_merchants`
    if ((rows[0]?.n ?? 0) > 0) {
      yield* Console.log(
        "Recur: existing data found; the demo key was printed on first start (keys are shown once). Create another with (the server stopped first: one process per data directory): pnpm recur merchant create --name Demo --currency USD"
      )
      return
    }
    // the demo merchant runs on a frozen sandbox clock, so POST /api/v1/test_helpers/advance_clock can replay months at once
    const created = yield* (yield* Merchants.Merchants).create({
      name: "Demo merchant",
      currency: "USD",
      mode: "sandbox",
      frozen_time: Date.now()
    })
    yield* Console.log(`Demo merchant: ${created.merchant.merchant_id}`)
    yield* Console.log(`Demo API key: ${created.api_key}`)
    yield* Console.log(
      `Try: curl -s ${config.publicUrl}/api/v1/product-categories -H "Authorization: Bearer ${created.api_key}" -H "Request-Id: $(date +%s%N)"`
    )
  })

/**
 * Says at start which live merchants take no payments (no processor account of their own: the
 * sandbox never takes a live merchant's payments), one line each naming the merchant; the others
 * start as usual. Their checkout sessions are refused, and their charges, until their keys are set.
 *
 * @since 0.1.0
 */
export const reportMerchantsWithoutPayments = Effect.gen(function* () {
  const gateway = yield* Ports.PaymentGateway
  if (gateway.refusal === undefined) return
  const sql = yield* SqlClient.SqlClient
  const live = yield* sql<{ id: string }>`select id from recur_merchants where mode = 'live' order by id`
  for (const { id } of live) {
    const refused = yield* gateway.refusal(id)
    if (Option.isSome(refused)) yield* Console.error(`Recur: payments refused: ${refused.value}`)
  }
})

/**
 * The billing worker (renewals, dunning, webhook retries) and the webhook dispatcher (outbox
 * fan-out and first attempts), side by side, forever.
 *
 * @since 0.1.0
 */
export const workers = (owner: string, options: { readonly concurrency?: number } = {}) =>
  Effect.all(
    [
      Worker.Worker.use((b) =>
        b.worker({ owner, ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}) })
      ),
      Dispatcher.run({ owner })
    ],
    { concurrency: 2, discard: true }
  )

/**
 * The configuration with the port actually listened on: the default public URL
 * (`http://localhost:$PORT`) names it; a `RECUR_PUBLIC_URL` of the operator's stays as given.
 *
 * @since 0.1.0
 */
export const withPort = (config: ServerConfig, port: number): ServerConfig =>
  config.publicUrl === `http://localhost:${config.port}`
    ? { ...config, port, publicUrl: `http://localhost:${port}` }
    : { ...config, port }

/**
 * A `node:http` server that answers 503 (`Retry-After: 1`) while the engine starts (migrations,
 * the first worker round): it listens before the routes are attached, and a request in that window
 * (a load balancer's health check, a client that retries) must get an answer, never hang.
 */
const startingServer = () => {
  const server = createServer()
  server.on("request", (_request, response) => {
    // once the API's own handler is attached, it answers
    if (server.listenerCount("request") > 1) return
    response.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
    response.end(JSON.stringify({ code: "service_unavailable", message: "Recur is starting", data: {} }))
  })
  return server
}

/**
 * Everything `serve` runs, as one layer.
 *
 * @since 0.1.0
 */
export const serve = (config: ServerConfig) => {
  // listening comes first: with PORT=0 the system picks the port, and the public URL (unless
  // RECUR_PUBLIC_URL names another) and the first line printed say which one it picked
  const listening = NodeHttpServer.layer(startingServer, { port: config.port })
  const running = Layer.unwrap(
    Effect.map(HttpServer.HttpServer, (server) => {
      const port = server.address._tag === "UnixPathAddress" ? config.port : server.address.port
      const actual = withPort(config, port)
      const engineLive = engine(actual)
      const http = Layer.unwrap(
        Effect.map(SqlClient.SqlClient, (sql) =>
          Http.serve({
            rateLimit: actual.rateLimit,
            maxBodyBytes: actual.maxBodyBytes,
            trustedProxies: actual.trustedProxies,
            observability: {
              log: actual.accessLog,
              metrics: {
                token: Option.getOrUndefined(actual.metricsToken),
                beforeScrape: scrapeGauges(sql)
              }
            }
          })
        )
      )
      const worker = Layer.effectDiscard(
        Effect.forkScoped(workers(`server-${process.pid}`, { concurrency: actual.workerConcurrency }))
      )
      const demo = Layer.effectDiscard(
        Effect.orDie(Effect.andThen(ensureDemoMerchant(actual), reportMerchantsWithoutPayments))
      )
      const ready = Layer.effectDiscard(
        Effect.andThen(
          Console.log(`Recur listening on port ${port}: ${actual.publicUrl} (API docs: ${actual.publicUrl}/docs)`),
          // said once here rather than per message: without a notifier every message is skipped
          Option.isNone(actual.smtpUrl)
            ? Console.log("Customer emails are not sent: RECUR_SMTP_URL is not set (messages are recorded as skipped).")
            : Effect.void
        )
      )
      return Layer.mergeAll(http, worker, demo, ready).pipe(Layer.provide(engineLive))
    })
  ).pipe(Layer.provide(listening))
  // Without RECUR_OTLP_URL no tracing exporter is configured: spans would only cost time (a span
  // per request and per service call). Embedders who export traces keep Effect's default.
  const untraced = <E>(l: Layer.Layer<never, E>) =>
    Option.isSome(config.otlpUrl)
      ? l.pipe(Layer.provide(otlp(config.otlpUrl.value)))
      : config.tracing
        ? l
        : l.pipe(
            Layer.provide(
              Layer.mergeAll(
                Layer.succeed(References.TracerEnabled, false),
                Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)
              )
            )
          )
  return untraced(running)
}

/**
 * Spans sent to an OTLP/HTTP collector (JSON encoding) through Effect's own exporter
 * (`effect/observability`'s `OtlpTracer`): `url` is the collector's base (`/v1/traces` is added)
 * or its full traces URL.
 *
 * @since 0.1.0
 */
export const otlp = (url: string, options: { readonly exportInterval?: number } = {}) =>
  Layer.effect(
    Tracer.Tracer,
    Effect.map(
      OtlpTracer.make({
        url: /\/v1\/traces\/?$/.test(url) ? url : `${url.replace(/\/+$/, "")}/v1/traces`,
        resource: { serviceName: "recur" },
        ...(options.exportInterval !== undefined ? { exportInterval: options.exportInterval } : {})
      }),
      redacting
    )
  ).pipe(
    Layer.provideMerge(OtlpExporter.layerFlusher),
    Layer.provide(OtlpSerialization.layerJson),
    Layer.provide(FetchHttpClient.layer)
  )

/** A string attribute as it may leave the process: redacted as log lines are (`Redaction`). */
const redactedValue = (value: unknown) => (typeof value === "string" ? Redaction.redact(value) : value)

/**
 * A tracer whose spans carry no secret: Effect's HTTP spans record `url.full` and `url.path`, which
 * for a hosted invoice or portal link hold its signature (and a query may hold a client secret);
 * every string attribute, event attribute and span name passes through `Redaction.redact` first.
 */
const redacting = (inner: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    ...(inner.context !== undefined ? { context: inner.context } : {}),
    span(options) {
      const span = inner.span({ ...options, name: Redaction.redact(options.name) })
      const attribute = span.attribute.bind(span)
      span.attribute = (key, value) => attribute(key, redactedValue(value))
      const event = span.event.bind(span)
      span.event = (name, startTime, attributes) =>
        event(
          Redaction.redact(name),
          startTime,
          attributes === undefined
            ? undefined
            : Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, redactedValue(v)]))
        )
      return span
    }
  })

/**
 * The loggers for `RECUR_LOG_FORMAT` and `RECUR_LOG_LEVEL`: JSON lines or logfmt, every secret
 * redacted (`Redaction`), from the level given up.
 *
 * @since 0.1.0
 */
export const logging = (settings: LogSettings) =>
  Layer.mergeAll(
    Logger.layer([settings.format === "json" ? Redaction.jsonLogger : Redaction.logger]),
    Layer.succeed(References.MinimumLogLevel, settings.level)
  )

const queueItems = Metric.gauge("recur_work_queue_items", {
  description: "Work items scheduled, by lane (live, frozen: sandbox clocks, held: set aside) and kind"
})
const queueDue = Metric.gauge("recur_work_queue_due", {
  description: "Live work items due now and not yet done, by kind (the worker's backlog)"
})

/** The work queue's depth, read at each scrape (kinds seen before and gone now read 0). */
const workQueueDepth = (sql: SqlClient.SqlClient) => {
  const seen = new Set<string>()
  return Effect.gen(function* () {
    const now = Date.now()
    const rows = yield* sql<{ lane: string; kind: string; n: number; due: number }>`
      select lane, kind, count(*)::int as n,
        count(*) filter (where lane = 'live' and due_at <= ${now})::int as due
      from recur_work_items group by lane, kind`
    const current = new Map(rows.map((r) => [`${r.lane} ${r.kind}`, r]))
    for (const key of new Set([...seen, ...current.keys()])) {
      seen.add(key)
      const [lane, kind] = key.split(" ") as [string, string]
      const row = current.get(key)
      yield* Metric.update(Metric.withAttributes(queueItems, { lane, kind }), row?.n ?? 0)
      if (lane === "live") yield* Metric.update(Metric.withAttributes(queueDue, { kind }), row?.due ?? 0)
    }
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("work queue depth not read", cause)))
}

/**
 * The gauges read at each scrape: the work queue's depth and the database pool's connections.
 *
 * @since 0.1.0
 */
export const scrapeGauges = (sql: SqlClient.SqlClient): Effect.Effect<void> =>
  Effect.andThen(workQueueDepth(sql), PoolGauges.update(sql))

/**
 * `recur worker`'s own `GET /metrics` on `port` (`RECUR_WORKER_METRICS_PORT`; 0: any free port),
 * behind `RECUR_METRICS_TOKEN` as the server's is, with `GET /healthz`: the worker's renewals,
 * dunning and webhook metrics, the work queue and the pool. Says the port it listens on.
 *
 * @since 0.1.0
 */
export const workerMetrics = (config: ServerConfig, port: number) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const routes = Layer.mergeAll(
        Observability.metricsRoute({
          token: Option.getOrUndefined(config.metricsToken),
          beforeScrape: scrapeGauges(sql)
        }),
        HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))
      )
      const said = Layer.effectDiscard(
        Effect.flatMap(HttpServer.HttpServer, (server) =>
          Console.log(
            `Recur worker metrics on port ${server.address._tag === "UnixPathAddress" ? port : server.address.port}: GET /metrics`
          )
        )
      )
      return Layer.merge(HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }), said)
    })
  ).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })))
