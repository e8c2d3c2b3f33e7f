/**
 * One charge in flight per invoice: a written-off invoice whose page payment waits for 3-D Secure
 * refuses a second payment (409); the approval pays it once (docs/decisions.md, "Issue 34 —
 * payments in flight on invoices that change").
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const path = (url: string) => new URL(url).pathname
const card = { exp_month: "12", exp_year: "2030", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`one page payment in flight per invoice (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const subscribe = async (k: string) => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        email: "a@example.com",
        line_items: [{ price_id: priceId }]
      })
      const id = (s.body as any).data.session_id as string
      await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: "4242424242424242", ...card },
        { accept: "application/json" }
      )
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const invoicesOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data
        .list as Array<any>
    const payOnPage = (url: string, number: string) =>
      api.handler(
        new Request(`http://localhost${path(url)}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form({ card_number: number, ...card })
        })
      )

    it("uncollectible invoice: a 3-D Secure payment in flight, then another card on the page: charged once", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const sub = await subscribe(k)
      expect(
        (
          await api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, {
            collection_method: "send_invoice",
            days_until_due: 30
          })
        ).status
      ).toBe(200)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:10Z" })
      const [renewal] = (await invoicesOf(k, sub)).filter((i) => i.invoice_type === "renewal")
      expect((await api.call("POST", `/api/v1/invoices/${renewal.invoice_id}/mark_uncollectible`, k)).status).toBe(200)
      const challenge = await payOnPage(renewal.hosted_invoice_url, "4000000000003220")
      expect(challenge.status).toBe(303)
      const location = challenge.headers.get("location")!
      const second = await payOnPage(renewal.hosted_invoice_url, "4242424242424242")
      const approve = await api.handler(
        new Request(new URL(location, "http://localhost"), {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "approve=1"
        })
      )
      // the second card is refused while the first one's charge is in flight
      expect(second.status).toBe(409)
      expect(approve.status).toBeLessThan(500)
      const after = (await invoicesOf(k, sub)).find((i) => i.invoice_id === renewal.invoice_id)
      const trades = ((await api.call("GET", `/api/v1/trades?limit=100`, k)).body as any).data.list as Array<any>
      expect(after.biz_status).toBe("success")
      // the checkout's trade and one renewal payment: exactly two succeeded trades, none left processing
      expect(trades.filter((t) => t.trade_status === "succeeded").length).toBe(2)
      expect(trades.filter((t) => t.trade_status === "processing")).toEqual([])
    })
  })
}
