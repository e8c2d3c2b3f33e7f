import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { MountJourney } from "@recur/testing"
import type { Server } from "node:http"
import { createApp } from "../src/app.js"

let app: Awaited<ReturnType<typeof createApp>>
let server: Server
let origin = ""
beforeAll(async () => {
  // the port first (publicUrl names it), then the app
  server = (await import("node:http")).createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  // as behind a reverse proxy on this machine: its X-Forwarded-For names the client
  app = await createApp({ publicUrl: `${origin}/billing`, trustedProxies: ["127.0.0.1"] })
  server.on("request", app.app)
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  await app.close()
})

it("Express behind express.json() and express.urlencoded(): API, hosted checkout and facade over one engine", async () => {
  expect(await (await fetch(`${origin}/health`)).text()).toBe("ok")
  await MountJourney.run({
    base: `${origin}/billing`,
    createMerchant: () => app.billing.merchants.create({ name: "Express shop", currency: "USD" }),
    subscriptionStatus: async (m, id) => (await app.billing.subscriptions.get(m, id)).status
  })
  // a body the JSON parser refused never reaches Recur; one it parsed is checked by Recur's own limits
  const deep = JSON.stringify({ product_name: "x", metadata: { a: "x".repeat(6000) } })
  const refused = await fetch(`${origin}/billing/api/v1/products`, {
    method: "POST",
    headers: { "content-type": "application/json", "request-id": "deep-1", authorization: "Bearer sk_test_x" },
    body: deep
  })
  expect(refused.status).toBe(400)
})

it("Express: 40 declined cards from one client address give 402s, then 429, as the standalone server does", async () => {
  const statuses = await MountJourney.cardTesting({
    base: `${origin}/billing`,
    createMerchant: () => app.billing.merchants.create({ name: "Tested shop", currency: "USD" }),
    headers: { "x-forwarded-for": "198.51.100.32" }
  })
  expect(statuses).toEqual(MountJourney.limitedCardTesting)
})
