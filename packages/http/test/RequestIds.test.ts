/**
 * Every error envelope names its request in `data.request_id`, on every route: the merchant API,
 * a route that does not exist, bodies refused before they are read (413, 415), authentication
 * failures, the hosted pay route's JSON and the processors' webhook route. It is the client's
 * `Request-Id` when one was sent, else an id of the server's (`req_` and 24 hex digits) — the
 * same one the request's log line shows, and never an idempotency key.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BillingClient, createBilling } from "@recur/embedded"
import { Http, Mount, Observability } from "@recur/http"
import { Effect, Logger, Metric } from "effect"
import { HttpServerRequest } from "effect/http"

const SERVER_ID = /^req_[0-9a-f]{24}$/

describe("every error envelope carries its request id", () => {
  let billing: BillingClient
  let recur: Awaited<ReturnType<typeof Mount.fetchHandler>>
  let key: string
  let merchantId: string
  let priceId: string

  beforeAll(async () => {
    billing = await createBilling({ storage: "memory", publicUrl: "http://shop.test" })
    recur = await Mount.fetchHandler(billing, { rateLimit: false, maxBodyBytes: 2048 })
    const merchant = await billing.merchants.create({ name: "Ids", currency: "USD" })
    key = merchant.api_key
    merchantId = merchant.merchant_id
    const product = await billing.catalog.createProduct(merchantId, { product_name: "Pro" })
    priceId = (
      await billing.catalog.createPrice(merchantId, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
    ).id
  }, 120_000)
  afterAll(async () => {
    await recur.close()
    await billing.close()
  })

  const send = async (path: string, init: RequestInit = {}) => {
    const res = await recur.fetch(new Request(`http://shop.test${path}`, init))
    return { status: res.status, body: (await res.json()) as any }
  }
  const session = async () =>
    (
      await billing.checkout.createSession(merchantId, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
    ).session_id

  type Answer = { status: number; body: any }
  /**
   * Each route's error, its status with a Request-Id (and without one, when that differs: the
   * merchant API refuses an authenticated request without one); `id` is the header to send.
   */
  const cases: ReadonlyArray<
    readonly [string, number | readonly [number, number], (id: Record<string, string>) => Promise<Answer>]
  > = [
    ["no such route", 404, (id) => send("/api/v1/nowhere", { headers: { authorization: `Bearer ${key}`, ...id } })],
    ["no such route outside /api", 404, (id) => send("/nowhere", { headers: id })],
    ["no key", 401, (id) => send("/api/v1/products", { headers: id })],
    [
      "an unknown key",
      401,
      (id) => send("/api/v1/products", { headers: { ...id, authorization: "Bearer sk_test_nope" } })
    ],
    [
      "a body over the limit",
      413,
      (id) =>
        send("/api/v1/products", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...id },
          body: JSON.stringify({ product_name: "x".repeat(4000) })
        })
    ],
    [
      "a body that is not JSON",
      415,
      (id) =>
        send("/api/v1/products", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "text/plain", ...id },
          body: "hi"
        })
    ],
    [
      "unreadable JSON",
      400,
      (id) =>
        send("/api/v1/products", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...id },
          body: "{"
        })
    ],
    [
      "a body that does not decode",
      400,
      (id) =>
        send("/api/v1/products", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...id },
          body: JSON.stringify({ product_name: 3 })
        })
    ],
    [
      "an unknown object",
      [404, 400],
      (id) => send("/api/v1/subscription/sub_nope", { headers: { authorization: `Bearer ${key}`, ...id } })
    ],
    ["the hosted pay route: a declined card", 402, async (id) => pay(await session(), "4000000000000002", id)],
    ["the hosted pay route: not a card number", 400, async (id) => pay(await session(), "4242424242424241", id)],
    ["the hosted pay route: no such session", 404, (id) => pay("ses_nope", "4242424242424242", id)],
    [
      "a processor's webhook route that takes none",
      404,
      (id) => send("/webhooks/nobody/mch_x", { method: "POST", headers: id, body: "{}" })
    ]
  ]
  const pay = (sessionId: string, number: string, id: Record<string, string>) =>
    send(`/checkout/${sessionId}/pay`, {
      method: "POST",
      headers: { ...id, accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ card_number: number, exp_month: 12, exp_year: 2099, cvc: "123" })
    })

  it("without a Request-Id: an id of the server's, a new one per request", async () => {
    const seen = new Set<string>()
    const wrong: Array<string> = []
    for (const [name, status, run] of cases) {
      const r = await run({})
      const id = r.body?.data?.request_id
      if (
        r.status !== (typeof status === "number" ? status : status[1]) ||
        typeof id !== "string" ||
        !SERVER_ID.test(id)
      )
        wrong.push(`${name}: ${r.status} ${JSON.stringify(r.body)}`)
      seen.add(id)
    }
    expect(wrong).toEqual([])
    expect(seen.size).toBe(cases.length)
  }, 60_000)

  it("with a Request-Id: that one, on every route", async () => {
    const wrong: Array<string> = []
    for (const [i, [name, status, run]] of cases.entries()) {
      const sent = `client-${i}`
      const r = await run({ "request-id": sent })
      if (r.status !== (typeof status === "number" ? status : status[0]) || r.body?.data?.request_id !== sent)
        wrong.push(`${name}: ${r.status} ${JSON.stringify(r.body)}`)
    }
    expect(wrong).toEqual([])
  }, 60_000)

  it("a Request-Id that is not one (over 255 characters) is refused with 400 naming it, under an id of the server's", async () => {
    const r = await send("/api/v1/products", {
      headers: { authorization: `Bearer ${key}`, "request-id": "x".repeat(256) }
    })
    expect([r.status, r.body.code, r.body.data.param]).toEqual([400, "InvalidParameter", "Request-Id"])
    expect(r.body.data.request_id).toMatch(SERVER_ID)
  })

  it.effect("the request's log line names it by the id its envelope carries", () =>
    Effect.gen(function* () {
      const lines: Array<any> = []
      const capture = Logger.make((options) => {
        lines.push(JSON.parse(Logger.formatJson.log(options)))
      })
      const failing = Effect.die(new Error("boom"))
      const response = yield* Observability.requestLog()(Http.middleware(failing) as never).pipe(
        Effect.provideService(
          HttpServerRequest.HttpServerRequest,
          HttpServerRequest.fromWeb(new Request("http://localhost/api/v1/products"))
        ),
        Effect.provide(Logger.layer([capture])),
        Effect.provideService(Metric.MetricRegistry, new Map())
      ) as Effect.Effect<any>
      const body = JSON.parse(new TextDecoder().decode(response.body.body))
      expect([response.status, body.code]).toEqual([500, "system_error"])
      expect(body.data.request_id).toMatch(SERVER_ID)
      const line = lines.find((l) => l.annotations?.event === "recur.http.request")
      expect(line.annotations.request_id).toBe(body.data.request_id)
    })
  )
})
