import { Billing, Catalog, Checkout, Merchants, type PriceRules, SessionPayments } from "@recur/core"
import { engineOn } from "../src/index.js"
import { Pg } from "@recur/sql"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** One request the receiver got. */
export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly event: { id: string; type: string; created: string; sequence: number; data: any }
}

/**
 * A real HTTP receiver on 127.0.0.1: records every request and answers with `answer(path, n)`
 * (n = how many requests that path has had, this one included).
 */
export const receiver = async (answer: (path: string, n: number) => number = () => 200) => {
  const received: Array<Received> = []
  const counts = new Map<string, number>()
  let respond = answer
  const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    let body = ""
    req.on("data", (c) => (body += String(c)))
    req.on("end", () => {
      const path = req.url ?? "/"
      const n = (counts.get(path) ?? 0) + 1
      counts.set(path, n)
      received.push({ path, headers: req.headers, body, event: JSON.parse(body) })
      const status = respond(path, n)
      if (status >= 300 && status < 400) res.writeHead(status, { location: "/redirected" }).end()
      else res.writeHead(status, { "content-type": "text/plain" }).end("ok")
    })
  }
  // "down" keeps the port (closing it and listening again later could lose it to another process)
  // and resets every connection at once, as a crashed receiver's host does
  let down = false
  const server: Server = createServer(handler)
  server.on("connection", (socket) => {
    if (down) socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    setAnswer: (f: (path: string, n: number) => number) => {
      respond = f
    },
    /** Stops answering (every connection reset at once) until `start`. */
    stop: async () => {
      down = true
      server.closeAllConnections()
    },
    start: async () => {
      down = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The engine with the real HttpClient transport, on PGlite or PostgreSQL. */
export const engineRuntime = (storage: Layer.Layer<any, unknown>) =>
  ManagedRuntime.make(engineOn(storage, { publicUrl: "http://localhost:4000" }))

/** The storages the delivery suites run on: PGlite always, PostgreSQL when configured. */
export const backends = (): ReadonlyArray<readonly [string, () => Layer.Layer<any, unknown>]> => {
  const url = process.env.RECUR_TEST_DATABASE_URL
  return [
    ["PGlite", () => Pg.layerPglite()],
    ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
  ]
}

/** A sandbox merchant on a frozen clock with a monthly price; returns its id, key and price. */
export const merchantWithPrice = (
  start: string,
  price: Partial<PriceRules.PriceInput> = {},
  mode: "sandbox" | "live" = "sandbox"
) =>
  Effect.gen(function* () {
    const created = yield* (yield* Merchants.Merchants).create({
      name: "Hooks",
      currency: "USD",
      mode,
      ...(mode === "sandbox" ? { frozen_time: Date.parse(start) } : {})
    })
    const catalog = yield* Catalog.Catalog
    const product = yield* catalog.createProduct(created.merchant.merchant_id, { product_name: "Pro" })
    const pv = yield* catalog.createPrice(created.merchant.merchant_id, {
      name: "Pro monthly",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" },
      ...price
    })
    return {
      merchantId: created.merchant.merchant_id,
      apiKey: created.api_key,
      productId: product.product_id,
      priceId: pv.id
    }
  })

/** Subscribes a fresh customer with a test card. */
export const subscribe = (merchantId: string, priceId: string, number = "4242424242424242", discountCode?: string) =>
  Effect.gen(function* () {
    const _billing = yield* Billing.Billing
    const sessionPayments = yield* SessionPayments.SessionPayments
    const checkout = yield* Checkout.Checkout
    const session = yield* checkout.createSession(
      merchantId,
      Checkout.sessionOf(priceId, { payerId: `payer-${Math.random().toString(36).slice(2)}` }, { discountCode })
    )
    const result = yield* sessionPayments.paySession(merchantId, session.session_id, {
      number,
      exp_month: 12,
      exp_year: 2099,
      cvc: "123"
    })
    return result
  })
