import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { MountJourney } from "@recur/testing"
import { createApp } from "../src/app.js"

let app: Awaited<ReturnType<typeof createApp>>
let origin = ""
beforeAll(async () => {
  // a port the system picked, held until Fastify's server takes it over: no race for it
  const { port, handle } = await MountJourney.listener()
  origin = `http://127.0.0.1:${port}`
  app = await createApp({ publicUrl: `${origin}/billing` })
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
