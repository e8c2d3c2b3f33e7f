/**
 * The dunning policy that reads the decline, over REST (issue 34, item 6): what each class of
 * decline does in the billing settings (`dunning_on_decline`), refused by field when out of
 * range, and `POST /api/v1/dunning/preview`, the timeline of a failed renewal on the merchant's
 * sandbox clock under its policy or a proposed one.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string; request_id?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`dunning policy and preview (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key

    it("dunning_on_decline: the default, a class changed, others kept, null back to the default, bad input refused by field", async () => {
      const k = await fresh()
      const settings = async () => ((await api.call("GET", "/api/v1/billing_settings", k)).body as any).data
      expect((await settings()).dunning_on_decline).toBeNull()
      const set = await api.call("POST", "/api/v1/billing_settings", k, { dunning_on_decline: { soft: "stop" } })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      expect((set.body as any).data.dunning_on_decline).toEqual({ hard: "stop", soft: "stop", expired_card: "stop" })
      const more = await api.call("POST", "/api/v1/billing_settings", k, {
        dunning_on_decline: { hard: "retry" },
        dunning_retry_days: [2, 4]
      })
      expect((more.body as any).data).toMatchObject({
        dunning_retry_days: [2, 4],
        dunning_on_decline: { hard: "retry", soft: "stop", expired_card: "stop" }
      })
      for (const [body, param] of [
        [{ dunning_on_decline: { hard: "later" } }, "dunning_on_decline.hard"],
        [{ dunning_on_decline: { expired_card: 1 } }, "dunning_on_decline.expired_card"],
        [{ dunning_on_decline: "stop" }, "dunning_on_decline"],
        [{ dunning_on_decline: ["stop"] }, "dunning_on_decline"],
        // a typo in a policy is refused, naming the key, never dropped
        [{ dunning_on_decline: { expired: "stop" } }, "dunning_on_decline.expired"],
        [{ dunning_on_decline: { hard: "stop", Soft: "retry" } }, "dunning_on_decline.Soft"]
      ] as const) {
        const r = await api.call("POST", "/api/v1/billing_settings", k, body)
        expect(refusal(r), JSON.stringify(body)).toEqual([400, "InvalidParameter", param])
        // the documented envelope: the request's id beside the field
        expect(typeof (r.body as any).data.request_id).toBe("string")
        expect((r.body as any).message).toEqual(expect.any(String))
      }
      const typo = await api.call("POST", "/api/v1/billing_settings", k, { dunning_on_decline: { expired: "stop" } })
      expect((typo.body as any).message).toBe(
        "dunning_on_decline.expired: is not a class of decline: hard, soft or expired_card"
      )
      const list = await api.call("POST", "/api/v1/billing_settings", k, { dunning_on_decline: [] })
      expect((list.body as any).message).toBe("dunning_on_decline: Expected object | null")
      // nothing refused was saved
      expect((await settings()).dunning_on_decline).toEqual({ hard: "retry", soft: "stop", expired_card: "stop" })
      const back = await api.call("POST", "/api/v1/billing_settings", k, { dunning_on_decline: null })
      expect((back.body as any).data.dunning_on_decline).toBeNull()
    })

    it("the preview: the merchant's policy on its frozen clock, a proposed one, nothing saved, bad input refused", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-05T08:00:00Z" })
      const preview = async (body: unknown) => api.call("POST", "/api/v1/dunning/preview", k, body)
      const soft = await preview({ decline_class: "soft" })
      expect(soft.status, JSON.stringify(soft.body)).toBe(200)
      const data = (soft.body as any).data
      expect(data).toMatchObject({
        decline_class: "soft",
        action: "retry",
        dunning_retry_days: [1, 3, 5, 7],
        dunning_final_state: "unpaid",
        dunning_on_decline: { hard: "stop", soft: "retry", expired_card: "stop" },
        failed_at: "2026-01-05T08:00:00Z",
        ends_at: "2026-01-12T08:00:00Z",
        final_status: "unpaid",
        next_action: "new_payment_method"
      })
      expect(data.steps.map((s: any) => [s.kind, s.at, s.attempt])).toEqual([
        ["failed", "2026-01-05T08:00:00Z", 0],
        ["retry", "2026-01-06T08:00:00Z", 1],
        ["retry", "2026-01-08T08:00:00Z", 2],
        ["retry", "2026-01-10T08:00:00Z", 3],
        ["retry", "2026-01-12T08:00:00Z", 4],
        ["exhausted", "2026-01-12T08:00:00Z", 4]
      ])
      const hard = (await preview({ decline_class: "hard" })).body as any
      expect(hard.data.steps).toEqual([
        {
          kind: "failed",
          at: "2026-01-05T08:00:00Z",
          attempt: 0,
          subscription_status: "past_due",
          invoice_status: "failed"
        },
        {
          kind: "stop",
          at: "2026-01-05T08:00:00Z",
          attempt: 0,
          subscription_status: "unpaid",
          invoice_status: "failed"
        }
      ])
      // a proposed policy, before the merchant switches it on
      const proposed = (
        await preview({
          decline_class: "expired_card",
          failed_at: "2026-02-01T00:00:00Z",
          dunning_retry_days: [3],
          dunning_final_state: "canceled",
          dunning_on_decline: { expired_card: "retry" }
        })
      ).body as any
      expect(proposed.data.steps.map((s: any) => [s.kind, s.at])).toEqual([
        ["failed", "2026-02-01T00:00:00Z"],
        ["retry", "2026-02-04T00:00:00Z"],
        ["exhausted", "2026-02-04T00:00:00Z"]
      ])
      expect([proposed.data.final_status, proposed.data.next_action]).toEqual(["canceled", "none"])
      // the latest failure taken: every date of the answer is still a four-digit year
      const latest = await preview({ decline_class: "soft", failed_at: "9999-01-01T00:00:00Z" })
      expect(latest.status, JSON.stringify(latest.body)).toBe(200)
      for (const s of (latest.body as any).data.steps) expect(s.at).toMatch(/^9999-\d{2}-\d{2}T/)
      expect((latest.body as any).data.ends_at).toMatch(/^9999-/)
      const settings = ((await api.call("GET", "/api/v1/billing_settings", k)).body as any).data
      expect([settings.dunning_retry_days, settings.dunning_on_decline]).toEqual([null, null])
      for (const [body, param] of [
        [{}, "decline_class"],
        [{ decline_class: "medium" }, "decline_class"],
        [{ decline_class: "soft", dunning_retry_days: [4, 2] }, "dunning_retry_days"],
        [{ decline_class: "soft", dunning_retry_days: [61] }, "dunning_retry_days"],
        [{ decline_class: "soft", dunning_on_decline: { soft: "maybe" } }, "dunning_on_decline.soft"],
        [{ decline_class: "soft", dunning_final_state: "paused" }, "dunning_final_state"],
        [{ decline_class: "soft", failed_at: "yesterday" }, "failed_at"],
        // a NUL character is refused naming the field that holds it
        [{ decline_class: "hard\u0000" }, "decline_class"],
        [{ decline_class: "soft", dunning_on_decline: { expired: "stop" } }, "dunning_on_decline.expired"],
        // beyond the anchor's bound: the timeline would leave RFC 3339's four-digit years
        [{ decline_class: "soft", failed_at: "9999-12-31T23:59:59Z" }, "failed_at"],
        [{ decline_class: "soft", failed_at: "9999-01-01T00:00:01Z" }, "failed_at"]
      ] as const)
        expect(refusal(await preview(body)), JSON.stringify(body)).toEqual([400, "InvalidParameter", param])
    })

    it("the preview follows the merchant's own settings", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, {
        dunning_retry_days: [2],
        dunning_on_decline: { hard: "retry" },
        dunning_final_state: "canceled"
      })
      const data = ((await api.call("POST", "/api/v1/dunning/preview", k, { decline_class: "hard" })).body as any).data
      expect(data.steps.map((s: any) => [s.kind, s.at])).toEqual([
        ["failed", "2026-01-01T00:00:00Z"],
        ["retry", "2026-01-03T00:00:00Z"],
        ["exhausted", "2026-01-03T00:00:00Z"]
      ])
      expect([data.action, data.final_status]).toEqual(["retry", "canceled"])
    })

    it("a renewal on a card that attaches then declines hard (…0358) or expired (…0366) stops dunning at once", async () => {
      for (const [number, decline_class, code] of [
        ["4000000000000358", "hard", "stolen_card"],
        ["4000000000000366", "expired_card", "expired_card"]
      ] as const) {
        const k = await fresh()
        const { priceId } = await api.priceOf(k)
        const s = await api.call("POST", "/api/v1/session", k, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: priceId }]
        })
        const id = (s.body as any).data.session_id as string
        const paid = await api.call(
          "POST",
          `/checkout/${id}/pay`,
          null,
          { card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
        expect(paid.status, JSON.stringify(paid.body)).toBe(200)
        const sub = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
          .subscription_id as string
        // the renewal (2026-02-01) declines: no retry a day later, the end state at once
        await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T12:00:00Z" })
        const status = ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status
        expect(status, number).toBe("unpaid")
        const invoices = ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any)
          .data.list
        const renewal = invoices.find((i: any) => i.cycle_index === 1)
        expect(renewal.biz_status, number).toBe("failed")
        expect(renewal.dunning, number).toMatchObject({
          decline_code: code,
          decline_class,
          next_action: "new_payment_method",
          next_retry_at: null,
          ended_by: "decline"
        })
      }
    })

    it("a saved card's expiry is read on the merchant's sandbox clock: paid while valid, declined expired_card once it passes", async () => {
      // the merchant's clock is 2026-01-01; the card expires at the end of 02/2026 (long past in real time)
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
      const id = (s.body as any).data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "2", exp_year: "2026", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const sub = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id
      const invoicesOf = async () =>
        ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data.list.sort(
          (a: any, b: any) => a.cycle_index - b.cycle_index
        )
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T12:00:00Z" })
      expect((await invoicesOf()).map((i: any) => i.biz_status)).toEqual(["success", "success"])
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T12:00:00Z" })
      const renewal = (await invoicesOf())[2]
      expect(renewal.biz_status).toBe("failed")
      expect(renewal.dunning).toMatchObject({ decline_code: "expired_card", decline_class: "expired_card" })
      const status = ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status
      expect(status).toBe("unpaid")
    })
  })
}
