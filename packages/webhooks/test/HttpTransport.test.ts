import { describe, expect, it } from "@effect/vitest"
import { HttpTransport } from "@recur/webhooks"
import { Ports } from "@recur/core"
import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const request = (url: string, overrides: Partial<Ports.WebhookRequest> = {}): Ports.WebhookRequest => ({
  url,
  headers: { "x-test": "1" },
  body: '{"a":1}',
  timeoutMs: 2_000,
  allowPrivateNetwork: true,
  ...overrides
})

const send = (req: Ports.WebhookRequest, options: HttpTransport.Options = {}) =>
  Ports.WebhookTransport.use((t) => Effect.result(t.send(req))).pipe(Effect.provide(HttpTransport.layer(options)))

describe("HttpTransport", () => {
  it("classifies private, loopback, link-local and reserved addresses", () => {
    for (const ip of [
      "127.0.0.1",
      "10.0.0.8",
      "172.20.1.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:10.0.0.1",
      "::ffff:127.0.0.1"
    ]) {
      expect([ip, HttpTransport.isPrivateAddress(ip)]).toEqual([ip, true])
    }
    for (const ip of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::6810:85e5"]) {
      expect([ip, HttpTransport.isPrivateAddress(ip)]).toEqual([ip, false])
    }
  })

  it.live(
    "posts the body and headers as given; answers the status; a redirect is not followed; refuses private targets unless allowed; times out",
    () =>
      Effect.gen(function* () {
        const seen: Array<{ url: string; body: string; header: string | undefined }> = []
        const server = createServer((req, res) => {
          let body = ""
          req.on("data", (c) => (body += String(c)))
          req.on("end", () => {
            seen.push({ url: req.url ?? "", body, header: req.headers["x-test"] as string | undefined })
            if (req.url === "/hang") return // never answers
            if (req.url === "/moved") return res.writeHead(307, { location: "/elsewhere" }).end()
            res.writeHead(204).end()
          })
        })
        yield* Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)))
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        expect(yield* send(request(`${base}/ok`))).toMatchObject({ _tag: "Success", success: { status: 204 } })
        expect(seen[0]).toEqual({ url: "/ok", body: '{"a":1}', header: "1" })
        expect(yield* send(request(`${base}/moved`))).toMatchObject({ _tag: "Success", success: { status: 307 } })
        expect(seen.map((s) => s.url)).not.toContain("/elsewhere")
        const refused = yield* send(request(`${base}/ok`, { allowPrivateNetwork: false }))
        expect(refused).toMatchObject({ _tag: "Failure", failure: { reason: "forbidden" } })
        expect(
          yield* send(request(`${base}/ok`, { allowPrivateNetwork: false }), { allowPrivateNetwork: true })
        ).toMatchObject({ _tag: "Success" })
        const localhost = yield* send(
          request(`http://localhost:${(server.address() as AddressInfo).port}/ok`, { allowPrivateNetwork: false })
        )
        expect(localhost).toMatchObject({ _tag: "Failure", failure: { reason: "forbidden" } })
        const hung = yield* send(request(`${base}/hang`, { timeoutMs: 300 }))
        expect(hung).toMatchObject({ _tag: "Failure", failure: { reason: "timeout" } })
        server.closeAllConnections()
        yield* Effect.promise(() => new Promise<void>((r) => server.close(() => r())))
        expect(yield* send(request(`${base}/ok`))).toMatchObject({ _tag: "Failure", failure: { reason: "network" } })
      })
  )

  it.live(
    "refuses loopback in every IPv6 spelling and names resolving to it, at connect; reads only the head of an endless answer",
    () =>
      Effect.gen(function* () {
        const seen: Array<string> = []
        const server = createServer((req, res) => {
          seen.push(req.url ?? "")
          if (req.url === "/endless") {
            res.writeHead(200, { "content-type": "application/octet-stream" })
            const chunk = Buffer.alloc(64 * 1024, 120)
            const pump = () => {
              while (!res.destroyed && res.write(chunk)) {}
              if (!res.destroyed) res.once("drain", pump)
            }
            res.on("close", () => res.removeAllListeners("drain"))
            return pump()
          }
          res.writeHead(204).end()
        })
        yield* Effect.promise(() => new Promise<void>((r) => server.listen(0, "::", r)))
        const port = (server.address() as AddressInfo).port
        for (const host of [
          "[::ffff:127.0.0.1]",
          "[::ffff:7f00:1]",
          "[0:0:0:0:0:ffff:127.0.0.1]",
          "[::1]",
          "[64:ff9b::7f00:1]",
          "127.1",
          "0x7f000001",
          "localhost"
        ]) {
          const refused = yield* send(request(`http://${host}:${port}/x`, { allowPrivateNetwork: false }))
          expect([host, refused]).toMatchObject([host, { _tag: "Failure", failure: { reason: "forbidden" } }])
        }
        expect(seen).toEqual([])
        // an answer that never ends: its status is taken from the first bytes, the rest is dropped
        const endless = yield* send(request(`http://127.0.0.1:${port}/endless`, { timeoutMs: 10_000 }))
        expect(endless).toMatchObject({ _tag: "Success", success: { status: 200 } })
        server.closeAllConnections()
        yield* Effect.promise(() => new Promise<void>((r) => server.close(() => r())))
      }),
    30_000
  )
})
