import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Ports } from "@recur/core"
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
      // the messages say what is expected once, and a body that is no object as billing_settings says it
      const wrongType = await api.call("POST", "/api/v1/notification_settings", k, { reply_to: 123 })
      expect([refusal(wrongType), (wrongType.body as any).message]).toEqual([
        [400, "InvalidParameter", "reply_to"],
        "reply_to: Expected string | null"
      ])
      for (const path of ["/api/v1/notification_settings", "/api/v1/billing_settings"]) {
        const notObject = await api.call("POST", path, k, [1])
        expect([refusal(notObject), (notObject.body as any).message], path).toEqual([
          [400, "InvalidParameter", undefined],
          "body: Expected object"
        ])
      }
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

for (const [name, storage] of backends()) {
  describe(`a declined renewal's email leads to a recovered subscription (${name})`, { timeout: 120_000 }, () => {
    const sent: Array<Ports.OutgoingMessage> = []
    const api = serve(storage(), { notifications: { notifier: Ports.recording(sent) } })
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
    const card = (number: string) => ({ card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" })

    it("the card-update link of the email opens the portal's card form; a new card there makes it active again", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      await api.call("POST", "/api/v1/notification_settings", k, {
        sender: "billing@acme.test",
        messages: ["payment_failed"]
      })
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        email: "gus@example.com",
        line_items: [{ price_id: priceId }]
      })
      const sessionId = (s.body as any).data.session_id as string
      await api.call("POST", `/checkout/${sessionId}/pay`, null, card("4000000000000341"), {
        accept: "application/json"
      })
      const subscriptionId = ((await api.call("GET", `/api/v1/session/${sessionId}`, k)).body as any).data.session
        .subscription_id as string
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:10Z" })
      const statusOf = async () =>
        ((await api.call("GET", `/api/v1/subscription/${subscriptionId}`, k)).body as any).data.subscription.status
      expect(await statusOf()).toBe("past_due")
      const mail = sent.filter((m) => m.to === "gus@example.com")
      expect(mail.map((m) => m.subject)).toEqual(["Acme: your payment of 30.00 USD failed"])
      const link = /Update your card: (http:\/\/localhost:4000(\/portal\/card\/[^\s]+))/.exec(mail[0]!.text)
      expect(link).not.toBeNull()
      // the same link in the HTML part
      expect(mail[0]!.html).toContain(`href="${link![1]}"`)
      const follow = (p: string) => api.handler(new Request(`http://localhost${p}`, { redirect: "manual" }))
      // read two days later: the link still works, minting a fresh portal session on the card form
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-03T00:00:10Z" })
      const followed = await follow(link![2]!)
      expect(followed.status).toBe(303)
      const portal = /^http:\/\/localhost:4000(\/portal\/bps_[0-9a-z]{26}\/[^\s/?]+)$/.exec(
        followed.headers.get("location") ?? ""
      )
      expect(portal, followed.headers.get("location") ?? "").not.toBeNull()
      const path = portal![1]!
      // a tampered link is refused as an expired one, whatever part is changed
      // signature, merchant, customer, invoice, expiry (a later one)
      const parts = link![2]!.slice("/portal/card/".length).split("/")
      expect(parts).toHaveLength(5)
      for (const i of [0, 1, 2, 3, 4]) {
        const changed = parts.map((p, j) => (j === i ? (i === 4 ? String(Number(p) + 86_400) : `${p}x`) : p))
        expect((await follow(`/portal/card/${changed.join("/")}`)).status, `part ${i}`).toBe(404)
      }
      const page = await api.handler(new Request(`http://localhost${path}`))
      expect(page.status).toBe(200)
      expect(await page.text()).toContain(subscriptionId)
      const saved = await api.handler(
        new Request(`http://localhost${path}/subscription/${subscriptionId}/payment_method`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(card("4242424242424242"))
        })
      )
      expect(saved.status).toBe(303)
      expect(await statusOf()).toBe("active")
      // it works for 60 days from the email on the merchant's clock, then is refused
      const expires = Number(parts[4]) * 1000
      expect(expires - Date.parse("2026-02-01T00:00:00Z")).toBeGreaterThanOrEqual(60 * 86_400_000)
      const at = (ms: number) => ({ frozen_time: new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z") })
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, at(expires - 1000))
      expect((await follow(link![2]!)).status).toBe(303)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, at(expires))
      expect((await follow(link![2]!)).status).toBe(404)
    })
  })
}
