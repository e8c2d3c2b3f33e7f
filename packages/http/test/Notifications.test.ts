import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`customer notification settings over REST (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    it("none at first; set, changed field by field, refused when wrong, reset; the outbox lists what a payment wrote", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const read = async () => ((await api.call("GET", "/api/v1/notification_settings", k)).body as any).data
      expect(await read()).toEqual({ notification_settings: null })
      expect(refusal(await api.call("POST", "/api/v1/notification_settings", k, { enabled: true }))).toEqual([
        400,
        expect.any(String),
        "sender"
      ])
      const set = await api.call("POST", "/api/v1/notification_settings", k, {
        sender: "Acme <billing@acme.test>",
        messages: ["payment_receipt", "payment_failed"],
        language: "de"
      })
      expect(set.status).toBe(200)
      expect((set.body as any).data.notification_settings).toEqual({
        enabled: true,
        sender: "Acme <billing@acme.test>",
        reply_to: null,
        messages: ["payment_receipt", "payment_failed"],
        language: "de"
      })
      await api.call("POST", "/api/v1/notification_settings", k, { reply_to: "help@acme.test" })
      expect((await read()).notification_settings).toMatchObject({ reply_to: "help@acme.test", language: "de" })
      for (const [body, param] of [
        [{ language: "es" }, "language"],
        [{ messages: ["newsletter"] }, "messages"],
        [{ reply_to: "x" }, "reply_to"],
        [{ sender: "a@b.test\nBcc: c@d.test" }, "sender"]
      ] as const)
        expect(refusal(await api.call("POST", "/api/v1/notification_settings", k, body))).toEqual([
          400,
          expect.any(String),
          param
        ])
      // a paid checkout writes its receipt to the outbox
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        email: "eve@example.com",
        line_items: [{ price_id: priceId }]
      })
      const id = (s.body as any).data.session_id as string
      await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      const list = ((await api.call("GET", "/api/v1/notifications", k)).body as any).data.list
      expect(list.map((n: any) => n.kind)).toEqual(["payment_receipt"])
      expect(list[0].cause_key).toMatch(/^payment_receipt:inv_/)
      const reset = await api.call("POST", "/api/v1/notification_settings", k, { reset: true })
      expect((reset.body as any).data).toEqual({ notification_settings: null })
    })
  })
}
