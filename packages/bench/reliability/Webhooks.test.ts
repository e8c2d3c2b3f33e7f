import { afterAll, describe, expect, it } from "@effect/vitest"
import { Catalog, Entities, Merchants, SandboxClock, Store, WebhookDispatch, Webhooks } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { Effect, Fiber, ManagedRuntime } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { report, size, storage } from "./harness.js"

// A receiver failing half its requests with 5xx, sometimes hanging past the 10 s timeout, and
// down for 30 minutes of the merchant's clock; dispatchers killed again and again. In the end
// every event is delivered or failed for good — none lost.

const rt = ManagedRuntime.make(engineOn(storage(), { publicUrl: "http://localhost:4000" }))
afterAll(() => rt.dispose())
const MIN = 60_000

describe("webhooks under faults", () => {
  it("50 % 5xx, timeouts, a 30-minute outage, dispatchers killed: outbox = delivered + failed, 0 lost", async () => {
    const n = size(400, 10_000)
    const seen = new Map<string, number>()
    let up = true
    let hangs = 0
    const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
      let body = ""
      req.on("data", (c) => (body += String(c)))
      req.on("end", () => {
        const roll = Math.random()
        if (roll < 0.005) return void hangs++ // never answers: the sender's 10 s timeout
        if (roll < 0.5) return void res.writeHead(503).end()
        const id = JSON.parse(body).id as string
        seen.set(id, (seen.get(id) ?? 0) + 1)
        res.writeHead(200).end()
      })
    }
    // "down" keeps the port (closing it and listening again later could lose it to another
    // process) and resets every connection at once, as a crashed receiver's host does
    const server: Server = createServer(handler)
    server.on("connection", (socket) => {
      if (!up) socket.destroy()
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const port = (server.address() as AddressInfo).port
    const stop = async () => {
      up = false
      server.closeAllConnections()
    }
    const start = async () => {
      up = true
    }

    const t0 = Date.parse("2026-08-01T00:00:00Z")
    const { merchantId } = await rt.runPromise(
      Effect.gen(function* () {
        const m = yield* (yield* Merchants.Merchants).create({ name: "Faults", currency: "USD", frozen_time: t0 })
        yield* (yield* Webhooks.Webhooks).create(m.merchant.merchant_id, {
          url: `http://127.0.0.1:${port}/hooks`,
          all_events: true
        })
        yield* (yield* Catalog.Catalog).createProduct(m.merchant.merchant_id, { product_name: "x" })
        const storage = yield* Store.Storage
        for (let i = 0; i < n; i += 500) {
          yield* storage.withTransaction(
            storage.outbox.append(
              Array.from({ length: Math.min(500, n - i) }, (_, k) => {
                const id = `evt_fault${String(i + k).padStart(6, "0")}`
                return {
                  id,
                  merchant_id: m.merchant.merchant_id,
                  type: "v2.invoice.paid",
                  business_id: `inv_${i + k}`,
                  sequence: 1,
                  created_at: t0,
                  content: JSON.stringify({
                    id,
                    type: "v2.invoice.paid",
                    created: "2026-08-01T00:00:00Z",
                    sequence: 1,
                    data: { n: i + k }
                  })
                }
              })
            )
          )
        }
        return { merchantId: m.merchant.merchant_id }
      })
    )
    // dispatchers killed mid-batch, again and again
    for (let k = 0; k < size(5, 20); k++) {
      const fiber = rt.runFork(
        WebhookDispatch.WebhookDispatch.use((w) => w.dispatcher({ owner: `doomed-${k}`, leaseMs: 1_000, limit: 50 }))
      )
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 400))
      await rt.runPromise(Fiber.interrupt(fiber))
    }
    await new Promise((r) => setTimeout(r, 1_100))
    const drain = async () => {
      while (
        (await rt.runPromise(
          WebhookDispatch.WebhookDispatch.use((w) => w.dispatchOnce({ owner: "survivor", limit: 200 }))
        )) > 0
      ) {
        /* more */
      }
    }
    await drain()
    // a 30-minute outage on the merchant's clock, then two days for the retries
    await stop()
    const advance = (to: number) => rt.runPromise(SandboxClock.SandboxClock.use((b) => b.advanceClock(merchantId, to)))
    for (let m = 1; m <= 30; m += 5) await advance(t0 + m * MIN)
    await start()
    await advance(t0 + 3 * 24 * 60 * MIN)

    const counts = await rt.runPromise(
      Effect.gen(function* () {
        const storage = yield* Store.Storage
        const deliveries = storage.repository(Entities.webhookDelivery)
        const byStatus = new Map<string, number>()
        let cursor: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(deliveries.list(merchantId, { limit: 100, starting_after: cursor }))
          for (const d of page.list) byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1)
          if (!page.has_more) break
          cursor = page.list.at(-1)!.id
        }
        return Object.fromEntries(byStatus) as Record<string, number>
      })
    )
    const delivered = counts.succeeded ?? 0
    const failed = counts.failed ?? 0
    const lost = Array.from({ length: n }, (_, i) => `evt_fault${String(i).padStart(6, "0")}`).filter(
      (id) => !seen.has(id)
    )
    const duplicates = [...seen.values()].reduce((a, c) => a + c - 1, 0)
    report(
      `webhooks under faults: ${n} events; deliveries ${JSON.stringify(counts)}; received ${seen.size} distinct (${duplicates} duplicates), ${hangs} hung requests, receiver up=${up}; lost ${lost.length - failed}`
    )
    expect(delivered + failed).toBe(n)
    expect(counts.pending ?? 0).toBe(0)
    expect(counts.retrying ?? 0).toBe(0)
    // every event not failed for good reached the receiver
    expect(lost.length).toBe(failed)
    server.close()
  })
})
