/**
 * What an operator watches of the API: the request log (one structured line per request: method,
 * route template, status, duration, merchant, request id — never a secret), the request metrics
 * (count and latency by route template and status) and `GET /metrics`, the Prometheus text of
 * every metric of the program (the engine's too: renewals, dunning, webhooks). The older
 * {@link accessLog} (Effect's line per response, path redacted) stays for embedders.
 *
 * @since 0.1.0
 */
import { Redaction } from "@recur/core"
import { Clock, Effect, Exit, Metric, Redacted } from "effect"
import { HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import * as Observed from "./internal/observed.js"

/**
 * The access log: Effect's line per response (method, path, status, time), with the path
 * redacted — an invoice or portal link's signature never reaches the log (`Redaction`). The
 * request the routes see is the real one.
 *
 * @since 0.1.0
 */
export const accessLog = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    HttpMiddleware.logger(Effect.provideService(app, HttpServerRequest.HttpServerRequest, request)).pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request.modify({ url: Redaction.redact(request.url) }))
    )
  )

/**
 * A router path as a route template: `/api/v1/subscription/:subscription_id` becomes
 * `/api/v1/subscription/{subscription_id}` (the OpenAPI document's spelling).
 *
 * @since 0.1.0
 */
export const routeTemplate = (path: string): string => path.replace(/:([A-Za-z0-9_]+)\??/g, "{$1}")

/** The route of a request that matched none (refused before routing, or answered by the 404 route). */
const UNMATCHED = "unmatched"

/**
 * The route middleware that tells the request log which route matched (installed on every route
 * of `Http.layerRoutesWith`).
 *
 * @since 0.1.0
 */
export const routeNotes = HttpRouter.middleware((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { route } = yield* HttpRouter.RouteContext
    Observed.noteRoute(request, route.path === "/*" ? UNMATCHED : route.path)
    return yield* app
  })
)

/**
 * Tells the request log which merchant a request authenticated as.
 *
 * @since 0.1.0
 */
export const noteMerchant = Observed.noteMerchant

const requests = Metric.counter("recur_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

const latency = Metric.histogram("recur_http_request_duration_seconds", {
  description: "Time to answer an HTTP request, by method, route template and status",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
})

/**
 * What the request middleware does besides counting.
 *
 * @since 0.1.0
 */
export interface RequestLogOptions {
  /** One log line per request (default true); the metrics are counted either way. */
  readonly log?: boolean
}

/**
 * The request middleware: counts each request in `recur_http_requests_total` and
 * `recur_http_request_duration_seconds` (by method, route template and status) and, unless
 * `log: false`, writes one log line per request, annotated with `http.method`, `http.route` (the
 * template, never the raw path), `http.path` (the path, redacted: no link signature), `http.status`,
 * `duration_ms`, `merchant_id` (when the request authenticated) and `request_id`. Headers, query
 * strings and bodies are never logged. `GET /healthz` is passed straight through: neither logged
 * nor counted. Put it outside the app's own middleware (the status is the one sent).
 *
 * @since 0.1.0
 */
export const requestLog =
  (options: RequestLogOptions = {}) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> => {
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      // the liveness probe is neither logged nor counted: a load balancer polls it every few
      // seconds, and the log line and the two metric updates cost it half its throughput
      request.url === "/healthz" ? app : observed(request)
    )
    function observed(request: HttpServerRequest.HttpServerRequest) {
      return Effect.gen(function* () {
        const started = yield* Clock.currentTimeNanos
        const exit = yield* Effect.exit(app)
        const seconds = Number((yield* Clock.currentTimeNanos) - started) / 1e9
        const status = Exit.isSuccess(exit) ? exit.value.status : Exit.hasInterrupts(exit) ? 499 : 500
        const seen = Observed.of(request)
        const route = routeTemplate(seen.route ?? UNMATCHED)
        const attributes = { method: request.method, route, status: String(status) }
        yield* Metric.update(Metric.withAttributes(requests, attributes), 1)
        yield* Metric.update(Metric.withAttributes(latency, attributes), seconds)
        if (options.log !== false) {
          const path = request.url.split("?", 1)[0]!
          const requestId = Observed.requestIdOf(request)
          yield* Effect.logInfo(`${request.method} ${route} ${status}`).pipe(
            Effect.annotateLogs({
              event: "recur.http.request",
              "http.method": request.method,
              "http.route": route,
              "http.path": Redaction.redact(path),
              "http.status": status,
              duration_ms: Math.round(seconds * 1e6) / 1e3,
              ...(seen.merchantId !== undefined ? { merchant_id: seen.merchantId } : {}),
              request_id: Redaction.redact(requestId)
            })
          )
        }
        return yield* exit
      })
    }
  }

/**
 * Options of {@link metricsRoute}.
 *
 * @since 0.1.0
 */
export interface MetricsOptions {
  /** When set, a scrape must send `Authorization: Bearer <token>` (401 otherwise). */
  readonly token?: Redacted.Redacted<string> | undefined
  /** Run before each scrape, to update gauges read on demand (the work queue's depth). */
  readonly beforeScrape?: Effect.Effect<void> | undefined
}

/** Compares in time independent of where the texts differ. */
const sameText = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0)
  return diff === 0
}

/**
 * The Prometheus text of every metric in the program's registry (Effect's `PrometheusMetrics`).
 *
 * @since 0.1.0
 */
export const scrape = (options: MetricsOptions = {}) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (options.token !== undefined) {
      const sent = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1] ?? ""
      if (!sameText(sent, Redacted.value(options.token)))
        return HttpServerResponse.text("unauthorized\n", {
          status: 401,
          headers: { "www-authenticate": "Bearer" }
        })
    }
    if (options.beforeScrape) yield* options.beforeScrape
    return HttpServerResponse.text(yield* PrometheusMetrics.format(), {
      contentType: "text/plain; version=0.0.4; charset=utf-8",
      headers: { "cache-control": "no-store" }
    })
  })

/**
 * `GET /metrics`: {@link scrape} at the server's root (not under the API's mount).
 *
 * @since 0.1.0
 */
export const metricsRoute = (options: MetricsOptions = {}) => HttpRouter.add("GET", "/metrics", scrape(options))
