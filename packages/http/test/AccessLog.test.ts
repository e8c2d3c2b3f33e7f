import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Http } from "../src/index.js"

describe("the access log", () => {
  it.effect("logs each hosted link's path with its signature redacted; the route sees the real link", () =>
    Effect.gen(function* () {
      const signature = "kq3_Zx-9aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789a"
      // a plain logger: the access log redacts by itself, whatever logger the host installed
      const lines: Array<string> = []
      const plain = Logger.make((options) => {
        lines.push(Logger.formatLogFmt.log(options))
      })
      for (const path of [
        `/invoice/inv_01/${signature}`,
        `/invoice/inv_01/${signature}/pdf?payment_intent_client_secret=pi_1_secret_abc`,
        `/portal/bps_01/${signature}/subscription/sub_01/cancel`
      ]) {
        let seen = ""
        const route = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
          seen = request.url
          return HttpServerResponse.empty({ status: 204 })
        })
        yield* Http.accessLog(route).pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromWeb(new Request(`http://localhost${path}`))
          ),
          Effect.provide(Logger.layer([plain]))
        )
        expect(seen).toContain(signature)
      }
      expect(lines).toHaveLength(3)
      expect(lines[0]).toContain("http.url=/invoice/inv_01/[redacted]")
      expect(lines[1]).toContain("http.url=/invoice/inv_01/[redacted]/pdf")
      expect(lines[2]).toContain("http.url=/portal/bps_01/[redacted]/subscription/sub_01/cancel")
      for (const line of lines) {
        expect(line).toContain("http.status=204")
        expect(line).not.toContain(signature)
        expect(line).not.toContain("pi_1_secret_abc")
      }
    })
  )
})
