import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Metric, Redacted } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Observability } from "../src/index.js"

const requestOf = (path: string, headers: Record<string, string> = {}) =>
  HttpServerRequest.fromWeb(new Request(`http://localhost${path}`, { headers }))

describe("Observability", () => {
  it("a router path as its route template", () => {
    expect(Observability.routeTemplate("/api/v1/subscription/:subscription_id")).toBe(
      "/api/v1/subscription/{subscription_id}"
    )
    expect(Observability.routeTemplate("/invoice/:invoice_id/:token/pdf")).toBe("/invoice/{invoice_id}/{token}/pdf")
    expect(Observability.routeTemplate("/healthz")).toBe("/healthz")
  })

  it.effect(
    "the request log: one line with the route's template and the redacted path; no header, no query, no signature",
    () =>
      Effect.gen(function* () {
        const signature = "kq3_Zx-9aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789a"
        const lines: Array<string> = []
        const capture = Logger.make((options) => {
          lines.push(Logger.formatJson.log(options))
        })
        const route = Effect.succeed(HttpServerResponse.empty({ status: 204 }))
        yield* Observability.requestLog()(route).pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            requestOf(`/invoice/inv_01/${signature}?payment_intent_client_secret=pi_1_secret_abc`, {
              authorization: "Bearer sk_test_AuthorizationHeader123",
              "request-id": "req-42"
            })
          ),
          Effect.provide(Logger.layer([capture])),
          Effect.provideService(Metric.MetricRegistry, new Map())
        )
        expect(lines).toHaveLength(1)
        const line = JSON.parse(lines[0]!)
        expect(line.annotations).toMatchObject({
          event: "recur.http.request",
          "http.method": "GET",
          // no route noted it (no router here): the request matched none
          "http.route": "unmatched",
          "http.path": "/invoice/inv_01/[redacted]",
          "http.status": 204,
          request_id: "req-42"
        })
        expect(typeof line.annotations.duration_ms).toBe("number")
        expect(lines[0]).not.toContain(signature)
        expect(lines[0]).not.toContain("pi_1_secret_abc")
        expect(lines[0]).not.toContain("AuthorizationHeader123")
      }),
    30_000
  )

  it.effect(
    "GET /healthz is neither logged nor counted (a probe polled every few seconds); other requests are",
    () =>
      Effect.gen(function* () {
        const lines: Array<string> = []
        const capture = Logger.make((options) => {
          lines.push(Logger.formatJson.log(options))
        })
        const registry = new Map()
        const ok = Effect.succeed(HttpServerResponse.empty({ status: 200 }))
        const run = (path: string) =>
          Observability.requestLog()(ok).pipe(
            Effect.provideService(HttpServerRequest.HttpServerRequest, requestOf(path)),
            Effect.provide(Logger.layer([capture])),
            Effect.provideService(Metric.MetricRegistry, registry)
          )
        expect((yield* run("/healthz")).status).toBe(200)
        expect(lines).toEqual([])
        expect(registry.size).toBe(0)
        yield* run("/healthz?probe=1")
        expect(lines).toHaveLength(1)
        expect(registry.size).toBeGreaterThan(0)
      }),
    30_000
  )

  it.effect(
    "GET /metrics: Prometheus text of the request counters; with a token, 401 without it",
    () =>
      Effect.gen(function* () {
        const registry = new Map()
        const ok = Effect.succeed(HttpServerResponse.empty({ status: 200 }))
        yield* Observability.requestLog({ log: false })(ok).pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, requestOf("/api/v1/products")),
          Effect.provideService(Metric.MetricRegistry, registry)
        )
        const token = Redacted.make("a-token-of-sixteen-chars")
        const scrape = (headers: Record<string, string>) =>
          Observability.scrape({ token }).pipe(
            Effect.provideService(HttpServerRequest.HttpServerRequest, requestOf("/metrics", headers)),
            Effect.provideService(Metric.MetricRegistry, registry)
          )
        expect((yield* scrape({})).status).toBe(401)
        expect((yield* scrape({ authorization: "Bearer a-token-of-sixteen-charX" })).status).toBe(401)
        const answer = yield* scrape({ authorization: "Bearer a-token-of-sixteen-chars" })
        expect(answer.status).toBe(200)
        const text = answer.body._tag === "Uint8Array" ? new TextDecoder().decode(answer.body.body) : ""
        expect(text).toContain("# TYPE recur_http_requests_total counter")
        expect(text).toContain('recur_http_requests_total{method="GET",route="unmatched",status="200"} 1')
        expect(text).toContain(
          'recur_http_request_duration_seconds_bucket{method="GET",route="unmatched",status="200",le="+Inf"} 1'
        )
      }),
    30_000
  )
})
