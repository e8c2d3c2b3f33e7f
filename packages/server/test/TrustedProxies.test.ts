import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { NodeHttpServer } from "@effect/platform-node"
import { Merchants } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { Http } from "@recur/http"
import { Pg } from "@recur/sql"
import { MountJourney } from "@recur/testing"
import { Effect, Layer, ManagedRuntime, Result } from "effect"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as Config from "../src/Config.js"

// The standalone server's RECUR_TRUSTED_PROXIES: X-Forwarded-For names the client only from a
// trusted proxy (the card-testing guard counts pay attempts per client address).

describe("RECUR_TRUSTED_PROXIES", { timeout: 180_000 }, () => {
  it("comma-separated addresses or CIDR networks, or none; anything else is refused at start", () => {
    expect(Config.parseTrustedProxies("")).toEqual(Result.succeed([]))
    expect(Config.parseTrustedProxies(" 10.0.0.0/8, 127.0.0.1 ,::1")).toEqual(
      Result.succeed(["10.0.0.0/8", "127.0.0.1", "::1"])
    )
    for (const bad of ["proxy.internal", "10.0.0.0/33", "10.0.0"]) {
      const parsed = Config.parseTrustedProxies(bad)
      expect(Result.isFailure(parsed) && parsed.failure).toMatch(/^RECUR_TRUSTED_PROXIES: /)
    }
  })

  /** The standalone server's HTTP layer on a free port of 127.0.0.1, over PGlite. */
  const started = (trustedProxies: ReadonlyArray<string>) => {
    const runtime = ManagedRuntime.make(
      Layer.provideMerge(
        Http.serve({ trustedProxies }),
        Layer.mergeAll(
          NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }),
          engineOn(Pg.layerPglite(), { publicUrl: "http://127.0.0.1" })
        )
      )
    )
    const base = runtime.runPromise(
      HttpServer.HttpServer.use((server) =>
        Effect.succeed(`http://127.0.0.1:${(server.address as { readonly port: number }).port}`)
      )
    )
    const createMerchant = () =>
      runtime
        .runPromise(Merchants.Merchants.use((m) => m.create({ name: "Served shop", currency: "USD" })))
        .then((made) => ({ merchant_id: made.merchant.merchant_id, api_key: made.api_key }))
    return { runtime, base, createMerchant }
  }

  let trusting: ReturnType<typeof started>
  let plain: ReturnType<typeof started>
  beforeAll(async () => {
    trusting = started(["127.0.0.1"])
    plain = started([])
    await Promise.all([trusting.base, plain.base])
  }, 180_000)
  afterAll(() => Promise.all([trusting.runtime.dispose(), plain.runtime.dispose()]))

  it("behind a trusted proxy: 40 declined cards from one forwarded client give 30 402s, then 429", async () => {
    const statuses = await MountJourney.cardTesting({
      base: await trusting.base,
      createMerchant: trusting.createMerchant,
      headers: { "x-forwarded-for": "198.51.100.41" }
    })
    expect(statuses).toEqual(MountJourney.limitedCardTesting)
  })

  it("by default X-Forwarded-For is not believed: the client is the peer (here loopback, the operator's own machine)", async () => {
    const statuses = await MountJourney.cardTesting({
      base: await plain.base,
      createMerchant: plain.createMerchant,
      headers: { "x-forwarded-for": "198.51.100.42" }
    })
    expect(statuses).toEqual(Array(40).fill(402))
  })
})
