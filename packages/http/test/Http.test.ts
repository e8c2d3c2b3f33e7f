import { afterAll, describe, expect, it } from "@effect/vitest"
import { Merchants } from "@recur/core"
import { layer as engineLayer } from "@recur/embedded"
import { Http } from "@recur/http"
import { Effect, Layer, ManagedRuntime } from "effect"

const memoMap = Effect.runSync(Layer.makeMemoMap)
const engine = engineLayer({ storage: "memory", publicUrl: "http://localhost:4000" })
const runtime = ManagedRuntime.make(engine, { memoMap })
const { dispose, handler } = Http.toWebHandler(engine, memoMap)
afterAll(async () => {
  await dispose()
  await runtime.dispose()
})

let n = 0
const call = async (
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const h: Record<string, string> = { "content-type": "application/json", "request-id": `req-${++n}` }
  if (key !== null) h.authorization = `Bearer ${key}`
  Object.assign(h, headers)
  const res = await handler(
    new Request(`http://localhost${path}`, {
      method,
      headers: h,
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
    })
  )
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) }
}
const merchant = () =>
  runtime.runPromise(
    Merchants.Merchants.use((m) =>
      m.create({ name: "Acme", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
    )
  )

describe("REST adapter", () => {
  it("answers in the envelope, and every auth failure with the documented 401", async () => {
    const { api_key } = await merchant()
    const ok = await call("GET", "/api/v1/product-categories", api_key)
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ code: "success", message: "success", data: { total: 1 } })
    for (const [key, extra] of [
      [null, {}],
      ["sk_test_unknownkeyunknownkey1234", {}],
      [api_key, { authorization: `Bearer  ${api_key}` }],
      [api_key, { authorization: `bearer ${api_key}` }],
      [api_key, { authorization: api_key }]
    ] as const) {
      const r = await call("GET", "/api/v1/product-categories", key, undefined, extra)
      expect(r.status).toBe(401)
      expect(r.body.code).toBe("unauthorizedError")
      expect(r.body.message).toContain("ApiKey authentication is required")
      expect(r.headers.get("www-authenticate")).toBe("Bearer")
    }
    const noRequestId = await call("GET", "/api/v1/product-categories", api_key, undefined, { "request-id": "" })
    expect([noRequestId.status, noRequestId.body.code, noRequestId.body.data.param]).toEqual([
      400,
      "InvalidParameter",
      "Request-Id"
    ])
  })

  it("customers end to end: create, duplicate, get, list with filters, update, delete", async () => {
    const { api_key } = await merchant()
    const created = await call("POST", "/api/v1/front/customer/create", api_key, {
      payer_id: "u-1",
      name: "Ada",
      access_no: "ignored"
    })
    expect(created.status).toBe(200)
    const id = created.body.data.customer_id
    const dup = await call("POST", "/api/v1/front/customer/create", api_key, { payer_id: "u-1" })
    expect([dup.status, dup.body.code, dup.body.data.param]).toEqual([409, "duplicate_resource", "payer_id"])
    const got = await call("GET", `/api/v1/front/customer/${id}`, api_key)
    expect(got.body.data.customer).toMatchObject({ id, payer_id: "u-1", name: "Ada" })
    const listed = await call("GET", "/api/v1/front/customer?payer_ids=u-1,u-2&limit=5", api_key)
    expect(listed.body.data).toMatchObject({ has_more: false, list: [{ id }] })
    const both = await call("GET", "/api/v1/front/customer?starting_after=a&ending_before=b", api_key)
    expect([both.status, both.body.code]).toEqual([400, "invalid_request_error"])
    const badLimit = await call("GET", "/api/v1/front/customer?limit=101", api_key)
    expect([badLimit.status, badLimit.body.code, badLimit.body.data.param]).toEqual([400, "InvalidParameter", "limit"])
    await call("POST", "/api/v1/front/customer/update", api_key, { payer_id: "u-1", phone: "+1" })
    expect((await call("GET", `/api/v1/front/customer/${id}`, api_key)).body.data.customer.phone).toBe("+1")
    expect((await call("POST", "/api/v1/front/customer/delete", api_key, { customer_id: id })).body).toEqual({
      code: "success",
      message: "success",
      data: {}
    })
    const gone = await call("GET", `/api/v1/front/customer/${id}`, api_key)
    expect([gone.status, gone.body.code]).toEqual([404, "resource_not_found"])
    // another merchant's customer is 404, never 403
    const other = await merchant()
    expect((await call("GET", `/api/v1/front/customer/${id}`, other.api_key)).status).toBe(404)
  })

  it("maps decode errors, invalid JSON and unknown routes into the envelope", async () => {
    const { api_key } = await merchant()
    const decode = await call("POST", "/api/v1/front/customer/create", api_key, { email: 42 })
    expect([decode.status, decode.body.code, decode.body.data.param]).toEqual([400, "InvalidParameter", "email"])
    const badJson = await call("POST", "/api/v1/front/customer/create", api_key, "{not json")
    expect([badJson.status, badJson.body.code]).toEqual([400, "invalid_request_error"])
    // found by the fuzzer: NUL characters and impossible dates are bad input, never a 500
    const nulPath = await call("GET", "/api/v1/front/customer/%00", api_key)
    expect([nulPath.status, nulPath.body.code, nulPath.body.data.param]).toEqual([400, "InvalidParameter", "path"])
    const nulBody = await call("POST", "/api/v1/front/customer/create", api_key, { payer_id: "a\u0000b" })
    // the field that holds it
    expect([nulBody.status, nulBody.body.data.param]).toEqual([400, "payer_id"])
    const month13 = await call("POST", "/api/v1/test_helpers/advance_clock", api_key, {
      frozen_time: "2026-13-45T99:99:99Z"
    })
    expect([month13.status, month13.body.data.param]).toEqual([400, "frozen_time"])
    const feb30 = await call("GET", "/api/v1/front/customer?created_at.gt=2026-02-30T00:00:00Z", api_key)
    expect([feb30.status, feb30.body.data.param]).toEqual([400, "created_at.gt"])
    const missing = await call("GET", "/api/v1/nowhere", api_key)
    expect([missing.status, missing.body.code]).toEqual([404, "resource_not_found"])
  })

  it("Request-Id makes POSTs idempotent: replay, conflict on a different body", async () => {
    const { api_key } = await merchant()
    const first = await call(
      "POST",
      "/api/v1/front/customer/create",
      api_key,
      { payer_id: "idem" },
      { "request-id": "same-id" }
    )
    const replay = await call(
      "POST",
      "/api/v1/front/customer/create",
      api_key,
      { payer_id: "idem" },
      { "request-id": "same-id" }
    )
    expect(replay.status).toBe(200)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body).toEqual(first.body)
    const conflict = await call(
      "POST",
      "/api/v1/front/customer/create",
      api_key,
      { payer_id: "other" },
      { "request-id": "same-id" }
    )
    expect([conflict.status, conflict.body.code]).toEqual([409, "idempotency_conflict"])
    const list = await call("GET", "/api/v1/front/customer?payer_ids=idem", api_key)
    expect(list.body.data.list).toHaveLength(1)
  })

  it("the money path over HTTP: product, price, session, subscription, clock, invoices, refund", async () => {
    const { api_key } = await merchant()
    const product = await call("POST", "/api/v1/products", api_key, { product_name: "Pro" })
    const price = await call("POST", "/api/v1/prices", api_key, {
      name: "Pro monthly",
      product_id: product.body.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
    })
    expect(price.status).toBe(200)
    const bad = await call("POST", "/api/v1/prices", api_key, {
      name: "X",
      product_id: product.body.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      merchant_price_id: "has space",
      price_plan: { billing_cycle_unit: "month", base_price_val: "1" }
    })
    expect([bad.status, bad.body.code, bad.body.data.param]).toEqual([400, "InvalidParameter", "merchant_price_id"])
    const badTier = await call("POST", "/api/v1/prices", api_key, {
      name: "X",
      product_id: product.body.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "1", price_plan_tiers: [{ period_count: 1 }] }
    })
    expect([badTier.status, badTier.body.code, badTier.body.data.param, badTier.body.message]).toEqual([
      400,
      "InvalidParameter",
      "price_plan.price_plan_tiers[0].due_price",
      "price_plan.price_plan_tiers[0].due_price: is required unless discount_type and discount_value are given"
    ])
    const session = await call("POST", "/api/v1/session", api_key, {
      payer_id: "buyer",
      line_items: [{ price_id: price.body.data.price_id }]
    })
    expect(session.body.data.session_url).toBe(`http://localhost:4000/checkout/${session.body.data.session_id}`)
    const version = await call("GET", `/api/v1/prices/version/${price.body.data.price_version_id}`, api_key)
    expect(version.body.data.price_plan.base_price_val).toBe("30.00")
    const clock = await call("POST", "/api/v1/test_helpers/advance_clock", api_key, {
      frozen_time: "2026-01-02T00:00:00Z"
    })
    expect(clock.body.data.frozen_time).toBe("2026-01-02T00:00:00Z")
    const back = await call("POST", "/api/v1/test_helpers/advance_clock", api_key, {
      frozen_time: "2025-01-01T00:00:00Z"
    })
    expect(back.status).toBe(400)
    const invoices = await call("GET", "/api/v1/invoices?limit=10&invoice_types=initial,renewal", api_key)
    expect(invoices.body.data).toEqual({ has_more: false, list: [] })
  })
})

describe("hosted checkout page", () => {
  const form = (data: Record<string, string>) => new URLSearchParams(data).toString()
  const card = { exp_month: "12", exp_year: "2030", cvc: "123", name: "Ada" }

  it("under a mount prefix, every form action and redirect stays under it", async () => {
    // a host that mounts the API at /billing and strips the prefix (as Express's app.use does)
    const mountedEngine = engineLayer({ storage: "memory", publicUrl: "http://localhost:4000/billing" })
    const mountedMemo = Effect.runSync(Layer.makeMemoMap)
    const mountedRuntime = ManagedRuntime.make(mountedEngine, { memoMap: mountedMemo })
    const mounted = Http.toWebHandler(mountedEngine, mountedMemo)
    const host = (url: string, init?: RequestInit) => {
      const u = new URL(url, "http://localhost:4000")
      if (!u.pathname.startsWith("/billing/")) return Promise.resolve(new Response(null, { status: 404 }))
      u.pathname = u.pathname.slice("/billing".length)
      return mounted.handler(new Request(u, init))
    }
    const actionOf = async (response: Response, pageUrl: string) => {
      const html = await response.text()
      const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!
      return new URL(action.replace(/&amp;/g, "&"), pageUrl).toString()
    }
    try {
      const { api_key } = await mountedRuntime.runPromise(
        Merchants.Merchants.use((m) =>
          m.create({ name: "Mounted", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
        )
      )
      const api = async (method: string, path: string, body?: unknown) => {
        const r = await host(`/billing${path}`, {
          method,
          headers: {
            authorization: `Bearer ${api_key}`,
            "request-id": `m-${Math.random()}`,
            "content-type": "application/json"
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {})
        })
        return (await r.json()) as any
      }
      const product = await api("POST", "/api/v1/products", { product_name: "Pro" })
      const price = await api("POST", "/api/v1/prices", {
        name: "Pro",
        product_id: product.data.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const session = await api("POST", "/api/v1/session", {
        payer_id: "mounted",
        line_items: [{ price_id: price.data.price_id }]
      })
      const pageUrl = session.data.session_url as string
      expect(pageUrl).toBe(`http://localhost:4000/billing/checkout/${session.data.session_id}`)
      // the checkout page's form posts under the prefix
      const payUrl = await actionOf(await host(pageUrl), pageUrl)
      expect(payUrl).toBe(`${pageUrl}/pay`)
      // a decline answers the form again: it still posts under the prefix
      const declined = await host(payUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({ card_number: "4000000000000002", ...card })
      })
      expect(declined.status).toBe(402)
      expect(await actionOf(declined, payUrl)).toBe(payUrl)
      // 3-D Secure redirects under the prefix, and its forms post there too
      const challenge = await host(payUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({ card_number: "4000000000003220", ...card }),
        redirect: "manual"
      })
      const location = challenge.headers.get("location")!
      expect(location).toMatch(/^http:\/\/localhost:4000\/billing\/sandbox\/3ds\/trd_/)
      const challengePage = await host(location)
      expect(challengePage.status).toBe(200)
      const approveUrl = await actionOf(challengePage, location)
      expect(approveUrl).toBe(location)
      const approved = await host(approveUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "approve=1"
      })
      expect(approved.status).toBe(200)
      expect(await approved.text()).toContain("Payment complete")
    } finally {
      await mounted.dispose()
      await mountedRuntime.dispose()
    }
  })

  it("serves the page, pays with 4242 and redirects to return_url; a decline shows the message; 3-D Secure goes through the challenge", async () => {
    const { api_key } = await merchant()
    const product = await call("POST", "/api/v1/products", api_key, { product_name: "Pro" })
    const price = await call("POST", "/api/v1/prices", api_key, {
      name: "Pro",
      product_id: product.body.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
    })
    const session = async () =>
      (
        await call("POST", "/api/v1/session", api_key, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: price.body.data.price_id }],
          return_url: "https://shop.example/thanks"
        })
      ).body.data.session_id as string
    const s1 = await session()
    const html = await handler(new Request(`http://localhost/checkout/${s1}`))
    const text = await html.text()
    expect(html.status).toBe(200)
    expect(text).toContain("$30.00")
    expect(text).toContain('<label for="card_number">')
    const declined = await handler(
      new Request(`http://localhost/checkout/${s1}/pay`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({ card_number: "4000 0000 0000 0002", ...card })
      })
    )
    expect(declined.status).toBe(402)
    expect(await declined.text()).toContain("Your card was declined.")
    const paid = await handler(
      new Request(`http://localhost/checkout/${s1}/pay`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({ card_number: "4242424242424242", ...card }),
        redirect: "manual"
      })
    )
    expect(paid.status).toBe(303)
    expect(paid.headers.get("location")).toBe("https://shop.example/thanks")
    // posting the paid session again: no form, no charge — where a paid checkout goes, or a 409 for code
    const again = await handler(
      new Request(`http://localhost/checkout/${s1}/pay`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({ card_number: "4242424242424242", ...card }),
        redirect: "manual"
      })
    )
    expect([again.status, again.headers.get("location")]).toEqual([303, "https://shop.example/thanks"])
    const againJson = await handler(
      new Request(`http://localhost/checkout/${s1}/pay`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ card_number: "4242424242424242", ...card })
      })
    )
    expect([againJson.status, ((await againJson.json()) as { code: string }).code]).toEqual([409, "state_conflict"])
    const subs = await call("GET", "/api/v1/subscription?status=active", api_key)
    expect(subs.body.data.list).toHaveLength(1)
    const trades = await call("GET", "/api/v1/trades?trade_status=succeeded", api_key)
    expect(trades.body.data.list).toHaveLength(1)

    const s2 = await session()
    const challenge = await handler(
      new Request(`http://localhost/checkout/${s2}/pay`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ card_number: "4000000000003220", ...card })
      })
    )
    expect(challenge.status).toBe(303)
    const location = challenge.headers.get("location")!
    expect(location).toMatch(/^http:\/\/localhost:4000\/sandbox\/3ds\/trd_/)
    const approve = await handler(
      new Request(new URL(location, "http://localhost"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "approve=1"
      })
    )
    expect([approve.status, approve.headers.get("location")]).toEqual([303, "https://shop.example/thanks"])
    expect((await call("GET", "/api/v1/subscription?status=active", api_key)).body.data.list).toHaveLength(2)
    expect((await handler(new Request("http://localhost/checkout/ses_missing"))).status).toBe(404)
  })

  it("serves OpenAPI 3.1 and Swagger UI", async () => {
    const spec = await handler(new Request("http://localhost/openapi.json"))
    const doc = (await spec.json()) as {
      openapi: string
      paths: Record<string, unknown>
      components: { securitySchemes: Record<string, { type: string; scheme: string }> }
    }
    expect(doc.openapi).toMatch(/^3\.1/)
    // the API key is a bearer scheme every operation requires
    expect(doc.components.securitySchemes.bearer?.type).toBe("http")
    expect(doc.components.securitySchemes.bearer?.scheme.toLowerCase()).toBe("bearer")
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/front/customer/create",
        "/api/v1/invoices",
        "/api/v1/subscription/{subscription_id}/revoke-price-change"
      ])
    )
    expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
    expect((doc.components as { parameters?: Record<string, unknown> }).parameters?.RequestId).toMatchObject({
      name: "Request-Id",
      in: "header",
      required: true
    })
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(
        ops as Record<string, { responses: Record<string, unknown>; security: unknown }>
      )) {
        expect([path, Object.keys(op.responses)]).toEqual([
          path,
          expect.arrayContaining(["200", "400", "401", "429", "500"])
        ])
        expect([path, op.security]).toEqual([path, [{ bearer: [] }]])
        // the header every call needs is declared on every operation
        expect([path, (op as { parameters?: Array<unknown> }).parameters]).toEqual([
          path,
          expect.arrayContaining([{ $ref: "#/components/parameters/RequestId" }])
        ])
      }
    }
    expect((await handler(new Request("http://localhost/docs"))).status).toBe(200)
  })

  it("the OpenAPI document says what the server requires and accepts", async () => {
    const doc = (await (await handler(new Request("http://localhost/openapi.json"))).json()) as any
    // the served document names the engine's public URL (mount prefix included)
    expect(doc.servers).toEqual([expect.objectContaining({ url: "http://localhost:4000" })])
    expect(doc.info.description).toMatch(/Request-Id/)
    const body = (path: string) => doc.paths[path].post.requestBody.content["application/json"].schema
    expect(body("/api/v1/prices").required).toEqual(["name", "product_id", "currency", "billing_type", "price_type"])
    expect(body("/api/v1/prices").properties.billing_type).toEqual({ $ref: "#/components/schemas/BillingType" })
    expect(doc.components.schemas.BillingType).toEqual({ type: "string", enum: ["one_time", "recurring"] })
    expect(body("/api/v1/prices").properties.price_plan.properties.billing_cycle_unit).toEqual({
      $ref: "#/components/schemas/BillingCycleUnit"
    })
    expect(doc.components.schemas.BillingCycleUnit.enum).toContain("month")
    // an absent field is absent, never null; unknown fields are accepted
    expect(body("/api/v1/products").properties.product_name).toEqual({ type: "string" })
    expect(JSON.stringify(body("/api/v1/session"))).not.toContain('"additionalProperties":false')
    const usage = doc.paths["/api/v1/subscription/{subscription_id}/usage"].get.parameters
    expect(usage.find((p: any) => p.name === "merchant_id").required).toBe(true)
    // list filters name their allowed values (others are 400, naming the filter)
    const status = doc.paths["/api/v1/subscription"].get.parameters.find((p: any) => p.name === "status")
    expect(status).toMatchObject({ style: "form", explode: true })
    expect(status.schema).toEqual({ type: "array", items: { $ref: "#/components/schemas/SubscriptionStatus" } })
    expect(doc.components.schemas.SubscriptionStatus.enum).toContain("past_due")
    const limit = doc.paths["/api/v1/products"].get.parameters.find((p: any) => p.name === "limit")
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    const data = doc.paths["/api/v1/front/customer/delete"].post.responses["200"].content["application/json"].schema
    expect(data.properties.data).toEqual({ type: "object", properties: {}, additionalProperties: false })
    for (const ops of Object.values(doc.paths) as Array<Record<string, any>>)
      for (const op of Object.values(ops))
        expect([op.operationId, typeof op.description]).toEqual([op.operationId, "string"])
    // what the document refuses, the server refuses: a JSON null, and a non-finite number
    const { api_key } = await merchant()
    const refused = await call("POST", "/api/v1/products", api_key, { product_name: null })
    expect([refused.status, refused.body.data.param]).toEqual([400, "product_name"])
    const infinite = await call("POST", "/api/v1/subscription/sub_x/usage", api_key, { usage_count: "Infinity" })
    expect([infinite.status, infinite.body.data.param]).toEqual([400, "usage_count"])
  })
})

describe("rate limit", () => {
  it("answers 429 with Retry-After past the key's burst", async () => {
    // the same engine (already built), behind a second handler with a tight limit
    const built = await runtime.context()
    const limited = Http.toWebHandler(Layer.succeedContext(built), undefined, { rateLimit: { perSecond: 1, burst: 3 } })
    const { api_key } = await merchant()
    const statuses: Array<number> = []
    let retryAfter: string | null = null
    for (let i = 0; i < 5; i++) {
      const r = await limited.handler(
        new Request("http://localhost/api/v1/product-categories", {
          headers: { authorization: `Bearer ${api_key}`, "request-id": `rl-${i}` }
        })
      )
      statuses.push(r.status)
      if (r.status === 429) {
        retryAfter = r.headers.get("retry-after")
        expect(((await r.json()) as { code: string }).code).toBe("rate_limit_exceeded")
      }
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    await limited.dispose()
  })
})

describe("health and unlimited keys", () => {
  it("GET /healthz answers without credentials or a database; rateLimit: false never answers 429", async () => {
    const health = await handler(new Request("http://localhost/healthz"))
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok" })
    // HEAD is answered as GET (an uptime monitor's probe, a link checker): same status, no 404
    expect((await handler(new Request("http://localhost/healthz", { method: "HEAD" }))).status).toBe(200)
    const { api_key: headKey } = await merchant()
    const headers = { authorization: `Bearer ${headKey}`, "request-id": "head-1" }
    const get = await handler(new Request("http://localhost/api/v1/product-categories", { headers }))
    const head = await handler(
      new Request("http://localhost/api/v1/product-categories", {
        method: "HEAD",
        headers: { ...headers, "request-id": "head-2" }
      })
    )
    expect([head.status, head.headers.get("content-type")]).toEqual([get.status, get.headers.get("content-type")])
    await get.arrayBuffer()
    await head.arrayBuffer()
    expect((await handler(new Request("http://localhost/api/v1/product-categories", { method: "HEAD" }))).status).toBe(
      401
    )
    expect((await handler(new Request("http://localhost/no/such/route", { method: "HEAD" }))).status).toBe(404)
    const built = await runtime.context()
    const open = Http.toWebHandler(Layer.succeedContext(built), undefined, { rateLimit: false })
    const { api_key } = await merchant()
    const statuses = new Set<number>()
    for (let i = 0; i < 250; i++) {
      const r = await open.handler(
        new Request("http://localhost/api/v1/product-categories", {
          headers: { authorization: `Bearer ${api_key}`, "request-id": `nl-${i}` }
        })
      )
      statuses.add(r.status)
      await r.arrayBuffer()
    }
    expect([...statuses]).toEqual([200])
    await open.dispose()
  })
})
