import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { MountJourney } from "@recur/testing"
import { createApp } from "../src/app.js"

let app: Awaited<ReturnType<typeof createApp>>
let origin = ""
beforeAll(async () => {
  // a port the system picked, held until the app's server takes it over: no race for it
  const { port, handle } = await MountJourney.listener()
  origin = `http://127.0.0.1:${port}`
  // as behind a reverse proxy on this machine: its X-Forwarded-For names the client
  app = await createApp({ publicUrl: `${origin}/billing`, trustedProxies: ["127.0.0.1"] })
  await new Promise<void>((resolve) => app.server.listen(handle, resolve))
})
afterAll(() => app.close())

it("node:http: the host's routes, and Recur's API, hosted checkout and facade over one engine under /billing", async () => {
  expect(await (await fetch(`${origin}/health`)).text()).toBe("ok")
  await MountJourney.run({
    base: `${origin}/billing`,
    createMerchant: () => app.billing.merchants.create({ name: "Host shop", currency: "USD" }),
    subscriptionStatus: async (m, id) => (await app.billing.subscriptions.get(m, id)).status
  })
  expect((await fetch(`${origin}/billing/openapi.json`)).status).toBe(200)
})

it("node:http: 40 declined cards from one client address give 402s, then 429, as the standalone server does", async () => {
  const statuses = await MountJourney.cardTesting({
    base: `${origin}/billing`,
    createMerchant: () => app.billing.merchants.create({ name: "Tested shop", currency: "USD" }),
    headers: { "x-forwarded-for": "198.51.100.31" }
  })
  expect(statuses).toEqual(MountJourney.limitedCardTesting)
})
