import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createBilling } from "@recur/embedded"
import { Mount } from "@recur/http"
import { MountJourney } from "@recur/testing"
import { createServer, type Server } from "node:http"

// A mounted API counts pay attempts per client address as the standalone server does: the client
// is the connection's peer, or — only behind a proxy named in `trustedProxies` — the address the
// proxy forwards in X-Forwarded-For. (The per-address limiter is per process: each case uses
// addresses of its own.)

describe("client addresses of a mounted API", { timeout: 120_000 }, () => {
  let billing: Awaited<ReturnType<typeof createBilling>>
  beforeAll(async () => {
    billing = await createBilling({ storage: "memory", publicUrl: "http://shop.test/billing" })
  }, 120_000)
  afterAll(() => billing.close())
  const createMerchant = () => billing.merchants.create({ name: "Mounted shop", currency: "USD" })

  it("fetchHandler: 40 declined cards from one peer address give 30 402s, then 429", async () => {
    const recur = await Mount.fetchHandler(billing, { prefix: "/billing" })
    try {
      const statuses = await MountJourney.cardTesting({
        base: "http://shop.test/billing",
        createMerchant,
        fetch: (url, init) => recur.fetch(new Request(url, init), { remoteAddress: "198.51.100.7" })
      })
      expect(statuses).toEqual(MountJourney.limitedCardTesting)
    } finally {
      await recur.close()
    }
  })

  it("X-Forwarded-For is ignored by default: a tester who varies it is still one client", async () => {
    const recur = await Mount.fetchHandler(billing, { prefix: "/billing" })
    try {
      let n = 0
      const statuses = await MountJourney.cardTesting({
        base: "http://shop.test/billing",
        createMerchant,
        fetch: (url, init) => {
          const request = new Request(url, init)
          request.headers.set("x-forwarded-for", `203.0.113.${++n % 250}`)
          return recur.fetch(request, { remoteAddress: "198.51.100.8" })
        }
      })
      expect(statuses).toEqual(MountJourney.limitedCardTesting)
    } finally {
      await recur.close()
    }
  })

  it("behind a trusted proxy, the forwarded client is counted: one client is limited, the proxy itself is not", async () => {
    const recur = await Mount.fetchHandler(billing, { prefix: "/billing", trustedProxies: ["10.0.0.0/8"] })
    try {
      const viaProxy = (client: () => string) => (url: string, init: RequestInit) => {
        const request = new Request(url, init)
        request.headers.set("x-forwarded-for", client())
        return recur.fetch(request, { remoteAddress: "10.1.2.3" })
      }
      const one = await MountJourney.cardTesting({
        base: "http://shop.test/billing",
        createMerchant,
        fetch: viaProxy(() => "198.51.100.9")
      })
      expect(one).toEqual(MountJourney.limitedCardTesting)
      // forty clients behind the same proxy: each within its limit
      let n = 0
      const many = await MountJourney.cardTesting({
        base: "http://shop.test/billing",
        createMerchant,
        fetch: viaProxy(() => `198.51.100.${100 + (++n % 100)}`)
      })
      expect(many).toEqual(Array(40).fill(402))
    } finally {
      await recur.close()
    }
  })

  it("nodeHandler passes each connection's peer (here behind a proxy on loopback)", async () => {
    const recur = await Mount.nodeHandler(billing, { prefix: "/billing", trustedProxies: ["127.0.0.1", "::1"] })
    const server: Server = createServer((req, res) => recur.handle(req, res))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const statuses = await MountJourney.cardTesting({
        base: `http://127.0.0.1:${port}/billing`,
        createMerchant,
        headers: { "x-forwarded-for": "198.51.100.10" }
      })
      expect(statuses).toEqual(MountJourney.limitedCardTesting)
    } finally {
      await new Promise((resolve) => server.close(resolve))
      await recur.close()
    }
  })

  it("a trusted proxy that is not an address or a network is refused at mount", async () => {
    await expect(Mount.fetchHandler(billing, { trustedProxies: ["10.0.0.0/99"] })).rejects.toThrow(/trustedProxies/)
    await expect(Mount.fetchHandler(billing, { trustedProxies: ["proxy.internal"] })).rejects.toThrow(/trustedProxies/)
  })
})
