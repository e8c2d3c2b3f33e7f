import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { MountJourney } from "@recur/testing"
import { createApp } from "../src/app.js"

let app: Awaited<ReturnType<typeof createApp>>
let origin = ""
beforeAll(async () => {
  // a port the system picked, held until Fastify's server takes it over: no race for it
  const { port, handle } = await MountJourney.listener()
  origin = `http://127.0.0.1:${port}`
  // as behind a reverse proxy on this machine: its X-Forwarded-For names the client
  app = await createApp({ publicUrl: `${origin}/billing`, trustedProxies: ["127.0.0.1"] })
  await app.app.ready()
  await new Promise<void>((resolve) => app.app.server.listen(handle, resolve))
})
afterAll(() => app.close())

it("Fastify: API, hosted checkout and facade over one engine under /billing", async () => {
  expect(await (await fetch(`${origin}/health`)).text()).toBe("ok")
  await MountJourney.run({
    base: `${origin}/billing`,
    createMerchant: () => app.billing.merchants.create({ name: "Fastify shop", currency: "USD" }),
    subscriptionStatus: async (m, id) => (await app.billing.subscriptions.get(m, id)).status
  })
})

it("Fastify: 40 declined cards from one client address give 402s, then 429, as the standalone server does", async () => {
  const statuses = await MountJourney.cardTesting({
    base: `${origin}/billing`,
    createMerchant: () => app.billing.merchants.create({ name: "Tested shop", currency: "USD" }),
    headers: { "x-forwarded-for": "198.51.100.33" }
  })
  expect(statuses).toEqual(MountJourney.limitedCardTesting)
})
