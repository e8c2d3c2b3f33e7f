/**
 * The API as a running HTTP app: handlers, the envelope for every error path (decode errors,
 * unknown routes, invalid JSON, defects), `Request-Id` idempotency for POSTs, OpenAPI at
 * `/openapi.json` and Swagger UI at `/docs`, and a web handler a host mounts in its own server.
 *
 * @since 0.1.0
 */
import {
  type Billing,
  type Catalog,
  type Customers,
  type CustomerBalances,
  type Discounts,
  type Schedules,
  Merchants,
  Secrets,
  Store,
  type Subscriptions,
  type Webhooks
} from "@recur/core"
import { type Ports, Settings } from "@recur/core"
import { ErrorReplies, RequestBodies } from "@recur/contract"
import { Cause, Clock, Context, Effect, Layer, Option, Result, type SchemaIssue } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { IpNetwork } from "effect/net"
import { HttpApiBuilder, HttpApiMiddleware, HttpApiSwagger, OpenApi } from "effect/http-api"
import { BillingApi, DecodeErrors, SwaggerApi } from "./Api.js"
import * as ApiErrors from "./Errors.js"
import * as Pages from "./pages/index.js"
import * as Observability from "./Observability.js"
import * as ProcessorWebhooks from "./ProcessorWebhooks.js"
import * as AuthMemo from "./internal/authMemo.js"
import * as Limiter from "./internal/limiter.js"
import * as Observed from "./internal/observed.js"
import * as Refusal from "./internal/refusal.js"
import * as OpenApiForGenerators from "./internal/openapiForGenerators.js"
import { authenticationLive, handlers } from "./Handlers.js"

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers })

const envelope = (status: number, code: string, message: string, requestId: string, param?: string) =>
  json(
    status,
    { code, message, data: { request_id: requestId, ...(param !== undefined ? { param } : {}) } },
    status === 401 ? { "www-authenticate": "Bearer" } : {}
  )

const bodyText = (response: HttpServerResponse.HttpServerResponse): string | undefined =>
  response.body._tag === "Uint8Array"
    ? new TextDecoder().decode(response.body.body)
    : response.body._tag === "Raw" && typeof response.body.body === "string"
      ? response.body.body
      : undefined

/** Every 401 names its scheme. */
const normalize = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 401 && response.headers["www-authenticate"] === undefined
    ? HttpServerResponse.setHeader(response, "www-authenticate", "Bearer")
    : response

const statusOf = (e: ApiErrors.ApiError): number =>
  e instanceof ApiErrors.InvalidParameter || e instanceof ApiErrors.InvalidRequest
    ? 400
    : e instanceof ApiErrors.Unauthorized
      ? 401
      : e instanceof ApiErrors.PaymentFailed
        ? 402
        : e instanceof ApiErrors.NotFound
          ? 404
          : e instanceof ApiErrors.Conflict
            ? 409
            : e instanceof ApiErrors.RateLimited
              ? 429
              : 500

const isApiError = (e: unknown): e is ApiErrors.ApiError => ApiErrors.all.some((error) => e instanceof error)

/** The issues of a request that does not decode, as `InvalidParameter` naming the first field. */
const decodeFailure = (requestId: string, issue: SchemaIssue.Issue) => {
  const issues = RequestBodies.issuesOf(issue)
  const message = issues.map((i) => `${i.field || "body"}: ${i.message}`).join("; ") || "Invalid request"
  const param = issues[0]?.field ?? ""
  return new ApiErrors.InvalidParameter({
    code: "InvalidParameter",
    message,
    data: { request_id: requestId, ...(param !== "" ? { param } : {}) }
  })
}

/**
 * `DecodeErrors`: a path, query or body that does not decode is answered as `InvalidParameter`.
 *
 * @since 0.1.0
 */
export const decodeErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(DecodeErrors, (error) =>
  HttpServerRequest.HttpServerRequest.use((request) =>
    Effect.fail(decodeFailure(Observed.requestIdOf(request), error.cause.issue))
  )
)

/** Every failure of the app as an envelope response: typed errors, unreadable bodies, defects (unknown paths have their own route, bodies that do not decode the `DecodeErrors` middleware). */
const recover = (requestId: string) => (cause: Cause.Cause<unknown>) => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value as { _tag?: string; reason?: { _tag?: string } }
    if (isApiError(e)) {
      const status = statusOf(e)
      return Effect.succeed(
        json(
          status,
          { code: e.code, message: e.message, data: e.data ?? { request_id: requestId } },
          status === 401 ? { "www-authenticate": "Bearer" } : {}
        )
      )
    }
    if (e._tag === "HttpServerError" && e.reason?._tag === "RequestParseError")
      return Effect.succeed(
        envelope(400, "invalid_request_error", "The request body could not be read as JSON.", requestId)
      )
  }
  const defect = Cause.findDefect(cause)
  if (defect._tag === "Success") {
    const d = defect.success as { _tag?: string; reason?: { _tag?: string } }
    if (d._tag === "HttpServerError" && d.reason?._tag === "RequestParseError")
      return Effect.succeed(
        envelope(400, "invalid_request_error", "The request body could not be read as JSON.", requestId)
      )
  }
  // a lost race (a store's version conflict, a database's serialization failure…) changed
  // nothing: 409 state_conflict, retry — never a 500
  const race = ErrorReplies.lostRace(cause)
  if (race !== undefined) {
    const { code, httpStatus } = ErrorReplies.replyTo(race)
    return Effect.succeed(envelope(httpStatus, code, race.message, requestId))
  }
  return Effect.as(
    Effect.logError("unexpected failure", cause),
    envelope(500, "system_error", "An unexpected error occurred. Retry later.", requestId)
  )
}

const pathOf = Refusal.pathOf

/** Request-Id idempotency: the first completed answer to a POST is replayed for 7 days. */
const IDEMPOTENCY_TTL_MS = 7 * 86_400_000
/**
 * A request marked in progress holds its Request-Id this long: if the server dies mid-request,
 * a retry after the lock takes over (the services make that retry safe: a refund is keyed by
 * its Request-Id, a session's payment reuses its trade, a price change converges).
 */
const IN_PROGRESS_LOCK_MS = 60_000
const BEARER = /^Bearer (\S+)$/

const idempotent = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
) =>
  Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const secrets = yield* Secrets.Secrets
    const m = BEARER.exec(request.headers.authorization ?? "")
    if (!m || requestId === "") return Option.none()
    const auth = yield* Effect.option(merchants.authenticate(m[1]!))
    if (Option.isNone(auth)) return Option.none()
    AuthMemo.remember(request, m[1]!, auth.value)
    const merchantId = auth.value.merchant.merchant_id
    Observability.noteMerchant(request, merchantId)
    const body = yield* Effect.orElseSucceed(request.text, () => "")
    const fingerprint = `${request.method} ${pathOf(request.url)} ${yield* Secrets.sha256Hex(body)}`
    const now = yield* Clock.currentTimeMillis
    const begun = yield* storage.idempotency.begin({
      merchant_id: merchantId,
      request_id: requestId,
      fingerprint,
      state: "in_progress",
      status: null,
      response: null,
      created_at: now,
      expires_at: now + IN_PROGRESS_LOCK_MS
    })
    if (!begun.created) {
      const existing = begun.existing
      if (existing.fingerprint !== fingerprint)
        return Option.some(
          envelope(409, "idempotency_conflict", "This Request-Id was used with a different request.", requestId)
        )
      if (existing.state === "in_progress")
        return Option.some(
          envelope(409, "request_in_progress", "A request with this Request-Id is still running.", requestId)
        )
      const stored = existing.response ?? "{}"
      // answers are stored encrypted (they can hold a webhook signing secret); rows written
      // before that are plain JSON
      const text = stored.startsWith("{") ? stored : yield* secrets.decrypt(stored)
      return Option.some(json(existing.status ?? 200, JSON.parse(text), { "idempotent-replayed": "true" }))
    }
    // a lost race changed nothing: its 409 is not kept, so a retry with this Request-Id runs again
    let lost = false
    const response = yield* app.pipe(
      Effect.catchCause((cause) => {
        lost = ErrorReplies.lostRace(cause) !== undefined
        return recover(requestId)(cause)
      }),
      Effect.map(normalize),
      Effect.onInterrupt(() => storage.idempotency.release(merchantId, requestId))
    )
    const text = bodyText(response)
    if (response.status >= 500 || text === undefined || lost) yield* storage.idempotency.release(merchantId, requestId)
    else
      yield* storage.idempotency.complete(
        merchantId,
        requestId,
        response.status,
        yield* secrets.encrypt(text),
        now + IDEMPOTENCY_TTL_MS
      )
    return Option.some(response)
  })

/**
 * The per-key rate limit: a token bucket of `burst` tokens refilled at `perSecond`.
 *
 * @since 0.1.0
 */
export interface RateLimit {
  readonly perSecond: number
  readonly burst: number
}

/**
 * Default: 100 requests per second per key, bursts of 200.
 *
 * @since 0.1.0
 */
export const defaultRateLimit: RateLimit = { perSecond: 100, burst: 200 }

/**
 * The address of the client as the host's own server saw it (the TCP peer), for a request that
 * reaches the API through a mount ({@link toWebHandler}'s handler, given per request in its
 * context): a fetch-style `Request` carries none. The standalone server knows it itself.
 *
 * @since 0.1.0
 */
export class PeerAddress extends Context.Service<PeerAddress, string>()("@recur/http/PeerAddress") {}

/**
 * Where the API takes a client's address from (the card-testing guard of the hosted pay routes
 * counts attempts per address).
 *
 * @since 0.1.0
 */
export interface ClientAddresses {
  /**
   * The proxies in front of the API (`"10.0.0.0/8"`, `"127.0.0.1"`: networks in CIDR notation or
   * single addresses) whose `X-Forwarded-For` is believed: for a request from one of them, the
   * client is the rightmost address of `X-Forwarded-For` that is not itself a trusted proxy.
   * Default none: `X-Forwarded-For` is ignored (anyone can send it) and the client is the TCP peer.
   */
  readonly trustedProxies?: ReadonlyArray<string>
}

/**
 * The networks of {@link ClientAddresses.trustedProxies}; throws on one that is not an address
 * or a network, so a typo fails at start rather than trusting nothing (or everyone).
 *
 * @since 0.1.0
 */
export const trustedNetworks = (proxies: ReadonlyArray<string>): ReadonlyArray<IpNetwork.IpNetwork> =>
  proxies.map((proxy) => {
    const cidr = proxy.includes("/") ? proxy : `${proxy}/${proxy.includes(":") ? 128 : 32}`
    const network = IpNetwork.fromString(cidr)
    if (Result.isFailure(network))
      throw new Error(`trustedProxies: "${proxy}" is not an IP address or a network in CIDR notation`)
    return network.success
  })

/**
 * The request's client address: the mount's {@link PeerAddress} when the server gave none, then
 * `X-Forwarded-For` when the peer is a trusted proxy.
 */
const withClientAddress = (addresses: ClientAddresses) => {
  const trusted = trustedNetworks(addresses.trustedProxies ?? [])
  const forwarded = trusted.length > 0 ? HttpMiddleware.xForwardedHeaders({ trustedProxies: trusted }) : undefined
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> => {
    const inner = forwarded
      ? forwarded(
          app as Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>
        )
      : app
    return Effect.flatMap(Effect.serviceOption(PeerAddress), (peer) =>
      Option.isNone(peer)
        ? inner
        : Effect.updateService(inner, HttpServerRequest.HttpServerRequest, (request) =>
            Option.isSome(request.remoteAddress) ? request : request.modify({ remoteAddress: peer })
          )
    )
  }
}

/**
 * `HEAD` answered as `GET` (RFC 9110 §9.3.2: the same status and headers; the server writes no
 * body): an uptime monitor's `HEAD /healthz`, a link checker's `HEAD` of a hosted page. The
 * router's own fallback from `HEAD` to `GET` never ran, since the envelope's 404 route matches
 * every method first. The request the routes see says `GET`; Node's response to the `HEAD` it
 * received still sends no body. Innermost, around the router alone: a `modify` of the request
 * (the client's address) would make a new one from the original, `HEAD` again.
 */
const headAsGet = <A, E, R>(
  app: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.method !== "HEAD"
      ? app
      : Effect.provideService(
          app,
          HttpServerRequest.HttpServerRequest,
          new Proxy(request, {
            get: (target, key) => (key === "method" ? "GET" : Reflect.get(target, key, target))
          })
        )
  )

/** An app behind the middleware: it answers every failure itself, and needs the engine's keys and store. */
type Guarded<R> = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  R | Store.Storage | Merchants.Merchants | Secrets.Secrets | HttpServerRequest.HttpServerRequest
>

/**
 * The app-level middleware with a rate limit of its own.
 *
 * @since 0.1.0
 */
export const makeMiddleware = (
  limit: RateLimit | false = defaultRateLimit,
  limits: RequestLimits = {},
  addresses: ClientAddresses = {}
) => {
  const take = limit === false ? undefined : Limiter.make(limit)
  const checked = middlewareWith(limits)
  const addressed = withClientAddress(addresses)
  const guarded = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>): Guarded<R> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // the liveness probe reads nothing and can fail in no way: nothing to guard
      if (request.url === "/healthz") return yield* Effect.orDie(app)
      const auth = request.headers.authorization
      if (take !== undefined && auth !== undefined && pathOf(request.url).startsWith("/api/")) {
        const wait = take(auth, yield* Clock.currentTimeMillis)
        if (wait > 0)
          return HttpServerResponse.setHeader(
            envelope(429, "rate_limit_exceeded", "Too many requests for this API key.", Observed.requestIdOf(request)),
            "retry-after",
            String(wait)
          )
      }
      return yield* checked(app)
    })
  return <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>): Guarded<R> =>
    addressed(guarded(headAsGet(app)))
}

/**
 * Limits on what a request may carry.
 *
 * @since 0.1.0
 */
export interface RequestLimits {
  /** Largest request body in bytes; a larger one is refused with 413 before it is read. Default 1 MiB. */
  readonly maxBodyBytes?: number
}

/**
 * Default: request bodies up to 1 MiB.
 *
 * @since 0.1.0
 */
export const defaultMaxBodyBytes = 1024 * 1024

/**
 * The app-level middleware: envelope for every error path, idempotency for POSTs, and the
 * request checks no schema makes (size, media type, NUL, nesting, string length and encoding).
 *
 * @since 0.1.0
 */
export const middlewareWith =
  (limits: RequestLimits = {}) =>
  <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>): Guarded<R> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // the envelope's id (the client's Request-Id, or one of the server's when none was sent) and
      // the idempotency key (only ever the client's own)
      const requestId = Observed.requestIdOf(request)
      const key = Observed.clientRequestId(request) ?? ""
      const refused = yield* Refusal.refusal(request, limits.maxBodyBytes ?? defaultMaxBodyBytes)
      if (refused !== undefined) return envelope(refused[0], refused[1], refused[2], requestId, refused[3])
      if (request.method === "POST" && pathOf(request.url).startsWith("/api/")) {
        const handled = yield* idempotent(app, request, key).pipe(
          Effect.catchCause(recover(requestId)),
          Effect.map((r) => (HttpServerResponse.isHttpServerResponse(r) ? Option.some(r) : r))
        )
        if (Option.isSome(handled)) return handled.value
      }
      return yield* app.pipe(Effect.catchCause(recover(requestId)), Effect.map(normalize))
    })

/**
 * {@link middlewareWith} with the default limits.
 *
 * @since 0.1.0
 */
export const middleware = middlewareWith()

/**
 * `GET /healthz`: liveness. Answers `{"status":"ok"}` without touching the database or the
 * key store, so a load balancer's probe costs nothing and never queues behind SQL.
 *
 * @since 0.1.0
 */
export const healthRoute = HttpRouter.add(
  "GET",
  "/healthz",
  Effect.sync(() => HttpServerResponse.jsonUnsafe({ status: "ok" }, { headers: { "cache-control": "no-store" } }))
)

/**
 * {@link makeMiddleware} on every route of the router. It answers every failure itself (the
 * envelope), which the router's types cannot express: it is typed by what it needs.
 */
const globalMiddleware = (
  limit: RateLimit | false | undefined,
  limits: RequestLimits,
  addresses: ClientAddresses
): Layer.Layer<never, never, HttpRouter.HttpRouter | Store.Storage | Merchants.Merchants | Secrets.Secrets> =>
  HttpRouter.middleware(makeMiddleware(limit, limits, addresses) as never, { global: true }) as never

/**
 * `GET /openapi.json`: the API's OpenAPI document, whose `servers` names the engine's
 * `publicUrl` — the address clients reach the API at, mount prefix included — so a generated
 * client's base URL is right standalone and under a mount (the document built without a
 * server, `OpenApi.fromApi(BillingApi)`, says `/`).
 */
const openApiRoute = HttpRouter.add(
  "GET",
  "/openapi.json",
  Effect.gen(function* () {
    const settings = yield* Effect.serviceOption(Settings.Settings)
    const spec = OpenApi.fromApi(BillingApi) as unknown as Record<string, unknown>
    return HttpServerResponse.jsonUnsafe(
      Option.isSome(settings) ? OpenApiForGenerators.withServer(spec, settings.value.publicUrl) : spec
    )
  })
)

/** Any other path: the envelope's 404. */
const notFoundRoute = HttpRouter.add("*", "/*", (request) =>
  Effect.succeed(envelope(404, "resource_not_found", "No such route.", Observed.requestIdOf(request)))
)

/**
 * The API's routes: handlers, OpenAPI at `/openapi.json`, Swagger UI at `/docs`, `/healthz`, the
 * hosted checkout pages, and the app-level middleware ({@link makeMiddleware}): the envelope on
 * every error path, `Request-Id` idempotency and the per-key rate limit (requires the engine
 * services). Serve it with {@link serve}, or mount it with {@link toWebHandler}.
 *
 * @since 0.1.0
 */
export const layerRoutesWith = (
  options: { readonly rateLimit?: RateLimit | false } & RequestLimits & ClientAddresses = {}
) =>
  Layer.mergeAll(
    Layer.mergeAll(
      HttpApiBuilder.layer(BillingApi).pipe(
        Layer.provide(handlers.pipe(Layer.provide([authenticationLive, decodeErrorsLive])))
      ),
      HttpApiSwagger.layer(SwaggerApi, { path: "/docs" }),
      openApiRoute,
      healthRoute,
      Pages.routes,
      ProcessorWebhooks.routes,
      notFoundRoute
    ).pipe(Layer.provide(Observability.routeNotes.layer)),
    globalMiddleware(options.rateLimit, options, options)
  )

/**
 * The API's routes with the default rate limit.
 *
 * @since 0.1.0
 */
export const layerRoutes = layerRoutesWith()

/**
 * What the API needs from the engine.
 *
 * @since 0.1.0
 */
export type EngineServices =
  | Store.Storage
  | Secrets.Secrets
  | Merchants.Merchants
  | Customers.Customers
  | CustomerBalances.CustomerBalances
  | Catalog.Catalog
  | Discounts.Discounts
  | Schedules.Schedules
  | Billing.Billing
  | Subscriptions.Subscriptions
  | Webhooks.Webhooks
  | Ports.PaymentGateway

/**
 * The access log (moved to {@link Observability.accessLog}; the same middleware).
 *
 * @since 0.1.0
 */
export const accessLog = Observability.accessLog

/**
 * The API as a server layer on the `HttpServer` in context (for example `NodeHttpServer.layer`);
 * `disableLogger: false` adds the {@link accessLog}. `observability` instead counts every request
 * and writes one structured line per request ({@link Observability.requestLog}) and, with
 * `metrics`, serves `GET /metrics` ({@link Observability.metricsRoute}).
 *
 * @since 0.1.0
 */
export const serve = (
  options: {
    readonly rateLimit?: RateLimit | false
    readonly disableLogger?: boolean
    readonly observability?: Observability.RequestLogOptions & {
      readonly metrics?: Observability.MetricsOptions | false
    }
  } & RequestLimits &
    ClientAddresses = {}
) => {
  const observability = options.observability
  const routes =
    observability?.metrics !== undefined && observability.metrics !== false
      ? Layer.merge(
          layerRoutesWith(options),
          Observability.metricsRoute(observability.metrics).pipe(Layer.provide(Observability.routeNotes.layer))
        )
      : layerRoutesWith(options)
  return HttpRouter.serve(routes, {
    disableListenLog: true,
    disableLogger: true,
    ...(observability !== undefined
      ? { middleware: Observability.requestLog(observability) }
      : options.disableLogger === false
        ? { middleware: accessLog }
        : {})
  })
}

/**
 * A `Request => Promise<Response>` handler for hosts that mount the API in their own server. A
 * `Request` carries no client address: pass the TCP peer's as {@link PeerAddress} in the
 * handler's context (`handler(request, Context.make(Http.PeerAddress, "203.0.113.7"))`), as the
 * `Mount` helpers do, or the card-testing guard cannot count attempts per client address.
 *
 * @example
 * const { handler, dispose } = Http.toWebHandler(engineLayer)
 * const response = await handler(new Request("http://localhost/api/v1/product-categories", { headers }))
 * @since 0.1.0
 */
export const toWebHandler = <A extends EngineServices, E>(
  engine: Layer.Layer<A, E>,
  memoMap?: Layer.MemoMap,
  options: { readonly rateLimit?: RateLimit | false } & RequestLimits & ClientAddresses = {}
) =>
  HttpRouter.toWebHandler(
    layerRoutesWith(options).pipe(Layer.provideMerge(engine), Layer.provideMerge(HttpServer.layerServices)) as never,
    {
      disableLogger: true,
      ...(memoMap ? { memoMap } : {})
    }
  ) as {
    readonly handler: (request: Request, context?: Context.Context<PeerAddress>) => Promise<Response>
    readonly dispose: () => Promise<void>
  }
