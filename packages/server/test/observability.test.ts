import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { MountJourney } from "@recur/testing"
import { Effect, Layer, Logger, ManagedRuntime, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server as NodeServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Config from "../src/Config.js"
import * as Server from "../src/Server.js"

// The operator's view of a running server: one JSON line per request (route template, status,
// duration, merchant, request id; no secret), per renewal batch and per webhook attempt;
// `GET /metrics` in Prometheus' text format behind RECUR_METRICS_TOKEN; spans over OTLP.

/** A Prometheus text's samples: name, labels and value. */
const samples = (text: string) =>
  text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
      if (!m) throw new Error(`not a Prometheus sample: ${line}`)
      const labels: Record<string, string> = {}
      for (const [, k, v] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!
      return { name: m[1]!, labels, value: Number(m[3]) }
    })

const sum = (all: ReturnType<typeof samples>, name: string, labels: Record<string, string> = {}) =>
  all
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0)

/** A tiny OTLP/HTTP receiver: keeps the JSON bodies posted to /v1/traces. */
const otlpReceiver = async () => {
  const bodies: Array<any> = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (d) => (body += String(d)))
    req.on("end", () => {
      if (req.url === "/v1/traces") bodies.push(JSON.parse(body))
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const spanNames = () =>
    bodies.flatMap((b) =>
      (b.resourceSpans ?? []).flatMap((r: any) =>
        (r.scopeSpans ?? []).flatMap((s: any) => (s.spans ?? []).map((span: any) => String(span.name)))
      )
    )
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spanNames,
    raw: () => JSON.stringify(bodies)
  }
}

/** A merchant's webhook endpoint. */
const webhookReceiver = async () => {
  let received = 0
  const server = createServer((req, res) => {
    req.on("data", () => {})
    req.on("end", () => {
      received++
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received: () => received }
}

const close = (server: NodeServer) => new Promise<void>((resolve) => server.close(() => resolve()))

const until = async (check: () => boolean | Promise<boolean>, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  return false
}

describe("RECUR_LOG_LEVEL", () => {
  it("a level's name in any case; anything else is refused at start", () => {
    expect(Config.parseLogLevel("debug")).toBe("Debug")
    expect(Config.parseLogLevel(" WARNING ")).toBe("Warn")
    expect(Config.parseLogLevel("none")).toBe("None")
    expect(Config.parseLogLevel("loud")).toBeUndefined()
  })
})

describe("the server's request log, /metrics and traces", { timeout: 240_000 }, () => {
  const lines: Array<string> = []
  const printed: Array<string> = []
  const token = `metrics-${randomBytes(12).toString("hex")}`
  let dataDir: string
  let runtime: ManagedRuntime.ManagedRuntime<never, unknown>
  let otlp: Awaited<ReturnType<typeof otlpReceiver>>
  let hooks: Awaited<ReturnType<typeof webhookReceiver>>
  let base: string

  beforeAll(async () => {
    otlp = await otlpReceiver()
    hooks = await webhookReceiver()
    dataDir = mkdtempSync(join(tmpdir(), "recur-observability-"))
    const port = await MountJourney.freePort()
    base = `http://127.0.0.1:${port}`
    const config: Config.ServerConfig = {
      port,
      publicUrl: base,
      dataDir,
      databaseUrl: Option.none(),
      databaseSchema: Option.none(),
      masterKey: Redacted.make(randomBytes(32).toString("hex")),
      previousMasterKeys: [],
      allowPrivateWebhooks: false,
      rateLimit: false,
      maxBodyBytes: 1024 * 1024,
      trustedProxies: [],
      accessLog: true,
      tracing: false,
      workerConcurrency: 1,
      dunning: {
        retryDays: [1, 3, 5, 7],
        finalState: "unpaid",
        onDecline: { hard: "stop", soft: "retry", expired_card: "stop" }
      },
      taxRates: [],
      portal: {},
      smtpUrl: Option.none(),
      fxSource: "static",
      fxRates: {},
      stripeApiBase: Option.none(),
      stripeJsUrl: Option.none(),
      metricsToken: Option.some(Redacted.make(token)),
      otlpUrl: Option.some(otlp.url)
    }
    // the demo merchant's key is printed on the console (once)
    vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
      printed.push(args.map(String).join(" "))
    })
    const capture = Logger.make((options) => {
      lines.push(Logger.formatJson.log(options))
    })
    runtime = ManagedRuntime.make(Server.serve(config).pipe(Layer.provide(Logger.layer([capture]))))
    await runtime.runPromise(Effect.void)
    expect(await until(() => printed.some((l) => l.startsWith("Demo API key: ")), 120_000), printed.join("\n")).toBe(
      true
    )
  }, 180_000)

  afterAll(async () => {
    vi.restoreAllMocks()
    await Promise.all([close(otlp.server), close(hooks.server)])
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("a journey, a renewal and a webhook show in the log lines and in /metrics; spans reach the OTLP receiver", async () => {
    const merchantId = printed.find((l) => l.startsWith("Demo merchant: "))!.slice("Demo merchant: ".length)
    const key = printed.find((l) => l.startsWith("Demo API key: "))!.slice("Demo API key: ".length)
    let n = 0
    const api = async (method: string, path: string, body?: unknown, requestId = `obs-${++n}`) => {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: {
          "request-id": requestId,
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {})
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
      })
      return { status: r.status, body: (await r.json()) as any }
    }
    const endpoint = await api("POST", "/api/v2/webhook/endpoints", { url: hooks.url, all_events: true })
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200)
    // the journey: a product and its price, a session paid on the hosted page, the subscription
    expect((await fetch(`${base}/api/v1/product-categories`)).status).toBe(401)
    expect((await fetch(`${base}/no-such-route`)).status).toBe(404)
    const product = await api("POST", "/api/v1/products", { product_name: "Watched plan" })
    expect(product.status).toBe(200)
    const price = await api("POST", "/api/v1/prices", {
      name: "Watched monthly",
      product_id: product.body.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" }
    })
    expect(price.status).toBe(200)
    const session = await api("POST", "/api/v1/session", {
      payer_id: "payer-1",
      line_items: [{ price_id: price.body.data.price_id }]
    })
    expect(session.status).toBe(200)
    const paid = await fetch(`${base}/checkout/${session.body.data.session_id}/pay`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ card_number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc: "123" })
    })
    expect(paid.status).toBe(200)
    const subscriptions = await api("GET", "/api/v1/subscription?status=active")
    const subscription_id: string = subscriptions.body.data.list[0].id
    expect((await api("GET", `/api/v1/subscription/${subscription_id}`)).body.data.subscription.status).toBe("active")
    const read = await api("GET", `/api/v1/subscription/${subscription_id}`, undefined, "obs-read-subscription")
    expect(read.status).toBe(200)
    // a signed invoice link: its signature never reaches a log line or a label
    const invoice = (await api("GET", "/api/v1/invoices")).body.data.list[0]
    const invoicePath = new URL(invoice.hosted_invoice_url).pathname
    const signature = invoicePath.split("/")[3]!
    expect((await fetch(`${base}${invoicePath}`)).status).toBe(200)
    // the next cycle, billed by the worker on the sandbox clock
    const clock = await api("GET", "/api/v1/test_helpers/clock")
    const next = new Date(Date.parse(clock.body.data.frozen_time) + 40 * 86_400_000).toISOString()
    const advanced = await api("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: next })
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200)
    expect(await until(() => hooks.received() > 0, 30_000)).toBe(true)

    // /metrics: the token is required
    expect((await fetch(`${base}/metrics`)).status).toBe(401)
    expect((await fetch(`${base}/metrics`, { headers: { authorization: "Bearer wrong-token-0000000" } })).status).toBe(
      401
    )
    const scrape = async () => {
      const r = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      expect(r.status).toBe(200)
      expect(r.headers.get("content-type")).toContain("text/plain")
      return samples(await r.text())
    }
    let metrics = await scrape()
    expect(
      await until(async () => {
        metrics = await scrape()
        // under load the clock's advance may finish in the background (complete: false)
        return (
          sum(metrics, "recur_webhook_attempts_total", { outcome: "delivered" }) > 0 &&
          sum(metrics, "recur_renewals_total", { outcome: "billed" }) > 0
        )
      }, 60_000)
    ).toBe(true)
    const requests = (labels: Record<string, string>) => sum(metrics, "recur_http_requests_total", labels)
    expect(requests({ method: "POST", route: "/api/v1/products", status: "200" })).toBe(1)
    expect(requests({ method: "POST", route: "/api/v1/session", status: "200" })).toBe(1)
    expect(
      requests({ method: "GET", route: "/api/v1/subscription/{subscription_id}", status: "200" })
    ).toBeGreaterThanOrEqual(2)
    expect(requests({ method: "GET", route: "/api/v1/product-categories", status: "401" })).toBe(1)
    expect(requests({ method: "GET", route: "/invoice/{invoice_id}/{token}", status: "200" })).toBe(1)
    expect(requests({ route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1)
    expect(
      sum(metrics, "recur_http_request_duration_seconds_count", { method: "POST", route: "/api/v1/products" })
    ).toBe(1)
    expect(metrics.some((s) => s.name === "recur_http_request_duration_seconds_bucket" && s.labels.le === "+Inf")).toBe(
      true
    )
    expect(sum(metrics, "recur_renewals_total", { outcome: "billed" })).toBeGreaterThanOrEqual(1)
    expect(sum(metrics, "recur_webhook_delivery_lag_seconds_count")).toBeGreaterThan(0)
    expect(metrics.some((s) => s.name === "recur_work_queue_items")).toBe(true)
    // the pool: PGlite's one session, idle or running the scrape's own query, and its queue
    expect(sum(metrics, "recur_db_pool_max", { storage: "pglite" })).toBe(1)
    expect(
      sum(metrics, "recur_db_pool_connections", { storage: "pglite", state: "active" }) +
        sum(metrics, "recur_db_pool_connections", { storage: "pglite", state: "idle" })
    ).toBe(1)
    expect(metrics.some((s) => s.name === "recur_db_pool_waiting" && s.labels.storage === "pglite")).toBe(true)
    for (const s of metrics) expect(Object.values(s.labels).join(" ")).not.toContain(signature)

    // the log: one JSON line per request, with the route's template and no secret
    const parsed = lines.map((line) => JSON.parse(line) as { message: string; level: string; annotations: any })
    const line = parsed.find((l) => l.annotations.request_id === "obs-read-subscription")
    expect(line).toBeDefined()
    expect(line!.level).toBe("INFO")
    expect(line!.annotations).toMatchObject({
      event: "recur.http.request",
      "http.method": "GET",
      "http.route": "/api/v1/subscription/{subscription_id}",
      "http.path": `/api/v1/subscription/${subscription_id}`,
      "http.status": 200,
      merchant_id: merchantId
    })
    expect(typeof line!.annotations.duration_ms).toBe("number")
    const invoiceLine = parsed.find((l) => l.annotations["http.route"] === "/invoice/{invoice_id}/{token}")
    expect(invoiceLine?.annotations["http.path"]).toBe(`/invoice/${invoice.invoice_id}/[redacted]`)
    const batch = parsed.find((l) => l.annotations.event === "recur.renewal.batch")
    expect(batch?.annotations).toMatchObject({ merchant_id: merchantId, failed: 0 })
    expect(batch?.annotations.billed).toBeGreaterThanOrEqual(1)
    const attempt = parsed.find((l) => l.annotations.event === "recur.webhook.attempt")
    expect(attempt?.annotations).toMatchObject({
      merchant_id: merchantId,
      endpoint_id: endpoint.body.data.endpoint_id ?? endpoint.body.data.id,
      status_code: 200,
      outcome: "delivered",
      attempt: 1
    })
    const all = lines.join("\n")
    expect(all).not.toContain(signature)
    expect(all).not.toContain(key)
    expect(all).not.toContain(token)

    // traces: the spans are sent to the collector (the last ones when the server stops)
    await runtime.dispose()
    expect(await until(() => otlp.spanNames().length > 0, 30_000)).toBe(true)
    const names = otlp.spanNames()
    // the request's span (named by its method) and the services' spans under it
    expect(names, [...new Set(names)].join(", ")).toContain("POST")
    expect(names).toContain("Checkout.createSession")
    expect(names).toContain("RenewalBatches.renewMany")
    // the invoice link's request was traced, with its path redacted: no signature leaves in a span
    expect(
      await until(() => otlp.raw().includes(`${invoicePath.split("/").slice(0, 3).join("/")}/[redacted]`), 30_000)
    ).toBe(true)
    expect(otlp.raw()).not.toContain(signature)
    expect(otlp.raw()).not.toContain(key)
  })
})
