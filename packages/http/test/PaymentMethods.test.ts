import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}
const card = (number: string) => ({ card_number: number, exp_month: 12, exp_year: 2030, cvc: "123" })

for (const [name, storage] of backends()) {
  describe(`payment methods (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const subscribe = async (k: string, number: string) => {
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
      expect(paid.status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const statusOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status as string
    const update = (k: string, sub: string, body: Record<string, unknown>) =>
      api.call("POST", `/api/v1/subscription/${sub}/payment_method`, k, body)
    const invoices = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data.list
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index)
        .map((i: any) => [i.cycle_index, i.biz_status])

    it("a new card on a past-due subscription retries its invoice at once: paid, active, and renewals charge the new card", async () => {
      const k = await fresh()
      // this card pays the checkout, then declines every renewal
      const sub = await subscribe(k, "4000000000000341")
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T12:00:00Z" })
      expect(await statusOf(k, sub)).toBe("past_due")
      // a refused card changes nothing
      const declined = await update(k, sub, card("4000000000000002"))
      expect(refusal(declined)).toEqual([400, "InvalidParameter", "card_number"])
      expect((declined.body as any).message).toContain("declined")
      expect(await statusOf(k, sub)).toBe("past_due")
      const r = await update(k, sub, card("4242 4242 4242 4242"))
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data).toMatchObject({
        subscription_id: sub,
        status: "active",
        payment_method: { brand: "visa", last4: "4242", exp_month: 12, exp_year: 2030 },
        retry: { trade_status: "succeeded" }
      })
      expect(await invoices(k, sub)).toEqual([
        [0, "success"],
        [1, "success"]
      ])
      // the next renewal charges the new card, not the old one
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T12:00:00Z" })
      expect(await statusOf(k, sub)).toBe("active")
      expect((await invoices(k, sub)).at(-1)).toEqual([2, "success"])
    })

    it("an unpaid subscription comes back: its failed invoice is reopened and paid with the new card, renewals resume", async () => {
      const k = await fresh()
      const sub = await subscribe(k, "4000000000000341")
      // the renewal fails, and every dunning retry after it (1, 3, 5, 7 days)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-20T00:00:00Z" })
      expect(await statusOf(k, sub)).toBe("unpaid")
      expect(await invoices(k, sub)).toEqual([
        [0, "success"],
        [1, "failed"]
      ])
      // a card that saves but declines charges: the late payment fails, nothing recovers
      const again = await update(k, sub, card("4000000000000341"))
      expect((again.body as any).data).toMatchObject({ status: "unpaid", retry: { trade_status: "closed" } })
      expect(await invoices(k, sub)).toEqual([
        [0, "success"],
        [1, "failed"]
      ])
      const r = await update(k, sub, card("4242424242424242"))
      expect((r.body as any).data).toMatchObject({ status: "active", retry: { trade_status: "succeeded" } })
      expect(await invoices(k, sub)).toEqual([
        [0, "success"],
        [1, "success"]
      ])
      // renewals resume on the subscription's schedule, with the new card
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T12:00:00Z" })
      expect(await statusOf(k, sub)).toBe("active")
      expect((await invoices(k, sub)).at(-1)).toEqual([2, "success"])
      // every attempt is a trade of its own: the first failed one stays as history
      const trades = ((await api.call("GET", "/api/v1/trades?limit=100", k)).body as any).data.list.map(
        (t: any) => t.trade_status
      )
      expect(trades.filter((t: string) => t === "closed")).toHaveLength(2)
    })

    it("on an active subscription: saved, nothing charged; bad input and other states refused; other merchants see nothing", async () => {
      const k = await fresh()
      const sub = await subscribe(k, "4242424242424242")
      const before = await invoices(k, sub)
      const r = await update(k, sub, card("5555555555554444"))
      expect((r.body as any).data).toEqual({
        subscription_id: sub,
        status: "active",
        payment_method: { brand: "mastercard", last4: "4444", exp_month: 12, exp_year: 2030 },
        retry: null
      })
      expect(await invoices(k, sub)).toEqual(before)
      for (const [body, param] of [
        [{ ...card("4242424242424242"), card_number: undefined }, "card_number"],
        [{ ...card("4242424242424242"), cvc: undefined }, "cvc"],
        [card("4242424242424241"), "card_number"],
        [{ ...card("4242424242424242"), exp_month: 13 }, "card_number"],
        [{ ...card("4242424242424242"), exp_month: "12" }, "exp_month"]
      ] as const)
        expect(refusal(await update(k, sub, body as Record<string, unknown>))).toEqual([400, "InvalidParameter", param])
      expect((await update(k, "sub_01jd0000000000000000000000", card("4242424242424242"))).status).toBe(404)
      const other = await fresh()
      expect((await update(other, sub, card("4242424242424242"))).status).toBe(404)
      await api.call("POST", `/api/v1/subscription/${sub}/cancel`, k, {})
      expect(refusal(await update(k, sub, card("4242424242424242")))).toEqual([409, "state_conflict", undefined])
    })
  })
}
