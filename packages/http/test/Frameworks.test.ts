// The framework glue (@recur/http/fastify, /express, /hono, /node), each app serving Recur at
// /billing over one engine: a JSON write, the hosted page's form post and a processor webhook
// signed over its exact bytes reach Recur intact, and a body a middleware of the host read and
// kept nowhere is answered 400 in the envelope, saying so (never a hang, never a 500).
import { serve } from "@hono/node-server"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { keepRawBody, recurExpress } from "@recur/http/express"
import { recurFastify } from "@recur/http/fastify"
import { recurHono } from "@recur/http/hono"
import { recurNode } from "@recur/http/node"
import { Mount } from "@recur/http"
import express from "express"
import Fastify from "fastify"
import { Hono } from "hono"
import { createServer, request, type Server } from "node:http"
import { Readable } from "node:stream"
import * as F from "./fixtures/frameworks.js"

describe("framework glue at /billing", { timeout: 120_000 }, () => {
  let billing: Awaited<ReturnType<typeof F.engine>>
  const closing: Array<() => Promise<unknown>> = []
  beforeAll(async () => {
    billing = await F.engine()
  }, 120_000)
  afterAll(async () => {
    for (const close of closing.reverse()) await close()
    await billing.close()
  })
  const served = async (server: Server) => {
    closing.push(() => new Promise((resolve) => server.close(resolve)))
    return F.listen(server)
  }
  const expectConsumed = (answer: Awaited<ReturnType<typeof F.consumedWrite>>) => {
    expect(answer.status).toBe(400)
    expect(answer.body.code).toBe("invalid_request_error")
    expect(answer.body.message).toMatch(F.consumedPattern)
    expect(answer.body.data).toMatchObject({ request_id: "fw-consumed", param: "body" })
  }

  it("Fastify: the plugin under a prefix takes JSON, forms and raw webhooks beside the app's own JSON routes", async () => {
    const app = Fastify()
    // the host's own routes keep Fastify's JSON parser
    app.post("/echo", async (request) => ({ got: request.body }))
    await app.register(recurFastify, { billing, prefix: "/billing" })
    closing.push(() => app.close())
    await app.listen({ port: 0, host: "127.0.0.1" })
    const address = app.server.address()
    const origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject(F.intact(out.merchant_id))
    const echo = await fetch(`${origin}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}'
    })
    expect(await echo.json()).toEqual({ got: { a: 1 } })
    // a form on an /api route is still Recur's 415, not Fastify's
    const form = await fetch(`${origin}/billing/api/v1/products`, {
      method: "POST",
      headers: { authorization: `Bearer ${out.api_key}`, "content-type": "application/x-www-form-urlencoded" },
      body: "product_name=Form"
    })
    expect([form.status, ((await form.json()) as { code: string }).code]).toEqual([415, "unsupported_media_type"])
    // and a body over the limit is Recur's 413 in its envelope, not Fastify's bodyLimit error
    const large = await fetch(`${origin}/billing/api/v1/products`, {
      method: "POST",
      headers: { authorization: `Bearer ${out.api_key}`, "content-type": "application/json" },
      body: JSON.stringify({ product_name: "x".repeat(2_000_000) })
    })
    expect([large.status, ((await large.json()) as { code: string }).code]).toEqual([413, "payload_too_large"])
    expect((await fetch(`${origin}/billing/healthz`)).status).toBe(200)
  })

  it("Fastify: a rawBody a raw-body hook of the app kept (as fastify-raw-body does) is what Recur reads", async () => {
    const app = Fastify()
    app.addHook("preParsing", async (request, _reply, payload) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of payload) chunks.push(chunk as Buffer)
      ;(request as { rawBody?: Buffer }).rawBody = Buffer.concat(chunks)
      return Readable.from([])
    })
    await app.register(recurFastify, { billing, prefix: "/billing" })
    closing.push(() => app.close())
    await app.listen({ port: 0, host: "127.0.0.1" })
    const address = app.server.address()
    const origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject(F.intact(out.merchant_id))
  })

  it("Fastify: a body a hook of the app read is answered 400 saying so", async () => {
    const app = Fastify()
    app.addHook("onRequest", async (request) => {
      if (request.method === "POST") for await (const _ of request.raw);
    })
    await app.register(recurFastify, { billing, prefix: "/billing" })
    closing.push(() => app.close())
    await app.listen({ port: 0, host: "127.0.0.1" })
    const address = app.server.address()
    const origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const { api_key } = await billing.merchants.create({ name: "Hooked shop", currency: "USD" })
    expectConsumed(await F.consumedWrite(origin, api_key))
  })

  it("Express: mounted before the body parsers, every body is read by Recur", async () => {
    const app = express()
    const recur = await recurExpress(billing)
    closing.push(recur.close)
    app.use("/billing", recur)
    app.use(express.json())
    const origin = await served(createServer(app))
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject(F.intact(out.merchant_id))
  })

  it("Express: behind express.json({ verify: keepRawBody }) and urlencoded(), bodies and signatures survive", async () => {
    const app = express()
    app.use(express.json({ verify: keepRawBody }))
    app.use(express.urlencoded({ extended: false }))
    const recur = await recurExpress(billing)
    closing.push(recur.close)
    app.use("/billing", recur)
    const origin = await served(createServer(app))
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject(F.intact(out.merchant_id))
  })

  it("Express: behind plain express.json(), JSON and forms work; a webhook whose bytes are lost is told so", async () => {
    const app = express()
    app.use(express.json())
    app.use(express.urlencoded({ extended: false }))
    const recur = await recurExpress(billing)
    closing.push(recur.close)
    app.use("/billing", recur)
    const origin = await served(createServer(app))
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject({ product: [200, true], paid: true, active: 1, forged: 400 })
    expect(out.webhook[0]).toBe(400)
    expect(out.webhook[1]).toMatchObject({ code: "invalid_request_error", data: { param: "body" } })
    expect((out.webhook[1] as { message: string }).message).toMatch(/signature cannot be checked.*keepRawBody/)
  })

  it("Express: a body a middleware read and kept nowhere is answered 400 saying so", async () => {
    const app = express()
    app.use((req, _res, next) => {
      req.on("data", () => {})
      req.on("end", () => next())
    })
    const recur = await recurExpress(billing)
    closing.push(recur.close)
    app.use("/billing", recur)
    const origin = await served(createServer(app))
    const { api_key } = await billing.merchants.create({ name: "Drained shop", currency: "USD" })
    expectConsumed(await F.consumedWrite(origin, api_key))
  })

  it("Hono: the handler under /billing, with the client address from @hono/node-server", async () => {
    const app = new Hono()
    // a middleware that read the body through c.req: Hono keeps it, Recur reads it from there
    app.use("/billing/api/*", async (c, next) => {
      if (c.req.method === "POST") await c.req.json()
      await next()
    })
    const recur = await recurHono(billing, { prefix: "/billing", trustedProxies: ["127.0.0.1"] })
    closing.push(recur.close)
    recur.register(app)
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server
    closing.push(() => new Promise((resolve) => server.close(resolve)))
    await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())))
    const address = server.address()
    const origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject(F.intact(out.merchant_id))
  })

  it("Hono: the card-testing guard sees the connection's address (trusted proxy on loopback)", async () => {
    const { MountJourney } = await import("@recur/testing")
    const app = new Hono()
    const recur = await recurHono(billing, { prefix: "/billing", trustedProxies: ["127.0.0.1"] })
    closing.push(recur.close)
    app.all("/billing/*", recur.handler)
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server
    closing.push(() => new Promise((resolve) => server.close(resolve)))
    await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())))
    const address = server.address()
    const origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const statuses = await MountJourney.cardTesting({
      base: `${origin}/billing`,
      createMerchant: () => billing.merchants.create({ name: "Tested shop", currency: "USD" }),
      headers: { "x-forwarded-for": "198.51.100.61" }
    })
    expect(statuses).toEqual(MountJourney.limitedCardTesting)
  })

  it("Hono: a body read from c.req.raw and kept nowhere is answered 400 saying so", async () => {
    const app = new Hono()
    app.use("/billing/*", async (c, next) => {
      if (c.req.method === "POST") await c.req.raw.text()
      await next()
    })
    const recur = await recurHono(billing, { prefix: "/billing" })
    closing.push(recur.close)
    recur.register(app)
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server
    closing.push(() => new Promise((resolve) => server.close(resolve)))
    await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())))
    const address = server.address()
    const origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const { api_key } = await billing.merchants.create({ name: "Raw shop", currency: "USD" })
    expectConsumed(await F.consumedWrite(origin, api_key))
  })

  it("node:http: the listener under /billing", async () => {
    const recur = await recurNode(billing, { prefix: "/billing" })
    closing.push(recur.close)
    const origin = await served(createServer(recur.listener))
    const out = await F.exercise(billing, origin)
    expect(out).toMatchObject(F.intact(out.merchant_id))
    expect((await fetch(`${origin}/elsewhere`)).status).toBe(404)
    // HEAD is answered as GET, with no body on the wire (an uptime monitor's probe)
    const head = await fetch(`${origin}/billing/healthz`, { method: "HEAD" })
    expect([head.status, await head.text()]).toEqual([200, ""])
    expect((await fetch(`${origin}/billing/no/such/route`, { method: "HEAD" })).status).toBe(404)
    // a raw `.` or `..` segment (fetch would resolve it away; node:http sends it as written) is a
    // 400 naming the path, never resolved into another route (the customer list, here)
    for (const raw of ["/billing/api/v1/front/customer/.", "/billing/api/v1/front/customer/%2E%2E?limit=1"]) {
      const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        // a path given apart from the URL goes on the wire as written (a URL string would be resolved)
        const { hostname, port } = new URL(origin)
        const headers = { authorization: `Bearer ${out.api_key}` }
        const req = request({ hostname, port, path: raw, headers }, (res) => {
          let text = ""
          res.on("data", (c) => (text += c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
        })
        req.on("error", reject)
        req.end()
      })
      expect([answer.status, answer.body.code, answer.body.data.param], raw).toEqual([400, "InvalidParameter", "path"])
    }
  })

  it("node:http: a body the host's code read first is answered 400 saying so", async () => {
    const recur = await recurNode(billing, { prefix: "/billing" })
    closing.push(recur.close)
    const origin = await served(
      createServer(async (req, res) => {
        for await (const _ of req);
        recur.handle(req, res)
      })
    )
    const { api_key } = await billing.merchants.create({ name: "Read shop", currency: "USD" })
    expectConsumed(await F.consumedWrite(origin, api_key))
  })

  it("fetchHandler: a Request whose body a fetch server's middleware used is answered 400 saying so", async () => {
    const recur = await Mount.fetchHandler(billing, { prefix: "/billing" })
    closing.push(recur.close)
    const request = new Request("http://shop.test/billing/api/v1/products", {
      method: "POST",
      headers: { "content-type": "application/json", "request-id": "fw-consumed" },
      body: JSON.stringify({ product_name: "Never read" })
    })
    await request.text()
    const response = await recur.fetch(request)
    expectConsumed({
      status: response.status,
      body: (await response.json()) as { code: string; message: string; data: any }
    })
  })
})
