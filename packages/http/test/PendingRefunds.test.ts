import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SandboxGateway } from "@recur/payment-sandbox"
import { backends, serve } from "./client.js"

// A refund the processor accepts but settles later: answered `pending`, its amount reserved on
// the trade, then settled by the worker's `refund_settle` item (asked again a minute later) with
// the same events and documents as a refund settled at once.
for (const [name, storage] of backends()) {
  describe(`pending refunds (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    it("pending, reserved, then settled by the worker: the trade, the invoice, a credit note and the events", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, { payer_id: "ada", line_items: [{ price_id: priceId }] })
      const sessionId = (s.body as any).data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      const tradeId = (paid.body as any).data.trade_id as string
      await api.runtime.runPromise(SandboxGateway.SandboxControls.use((c) => c.pendNextRefunds(1)))
      const r = await api.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "10.00" })
      expect([r.status, (r.body as any).data.refund_status]).toEqual([200, "pending"])
      const refundId = (r.body as any).data.refund_id as string
      const trade = async () => ((await api.call("GET", `/api/v1/trade/${tradeId}`, k)).body as any).data.trade
      // reserved: a second refund cannot take the same money
      expect((await trade()).total_refunded_amount).toBe("10.00")
      expect((await api.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "25.00" })).status).toBe(400)
      const events = async () =>
        (
          (await api.call("GET", `/api/v2/webhook/events?business_ids=${refundId}&limit=10`, k)).body as any
        ).data.list.map((e: any) => e.event_type)
      expect(await events()).toEqual([])
      // a minute later the worker asks again: settled
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-01T00:02:00Z" })
      const settled = ((await api.call("GET", `/api/v1/refund/${refundId}`, k)).body as any).data.refund
      expect(settled.refund_status).toBe("succeeded")
      expect(await events()).toEqual(["v2.refunds.succeeded"])
      expect(await trade()).toMatchObject({ refund_status: "partially_refunded", total_refunded_amount: "10.00" })
      const invoices = ((await api.call("GET", `/api/v1/invoices?limit=10`, k)).body as any).data.list as Array<any>
      expect(invoices.find((i) => i.invoice_type === "refund")).toMatchObject({
        amount: "10.00",
        number: "INV-CN-000001"
      })
    })

    it("a downgrade's owed refund counts only settled refunds: one that ends failed is credited to the balance, never lost", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const small = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: "bea",
        line_items: [{ price_id: big.priceId }]
      })
      const sessionId = (s.body as any).data.session_id as string
      await api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      const subId = ((await api.call("GET", `/api/v1/session/${sessionId}`, k)).body as any).data.session
        .subscription_id as string
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T00:00:00Z" })
      // the downgrade's refund is accepted pending, then refused by the bank
      await api.runtime.runPromise(SandboxGateway.SandboxControls.use((c) => c.pendNextRefunds(1)))
      const changed = await api.call("POST", `/api/v1/subscription/${subId}`, k, { price_id: small.priceId })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      const refunds = async () =>
        ((await api.call("GET", `/api/v1/refunds?limit=10`, k)).body as any).data.list as Array<any>
      expect((await refunds()).map((r) => r.refund_status)).toEqual(["pending"])
      const owed = (await refunds())[0].refund_amount as string
      await api.runtime.runPromise(SandboxGateway.SandboxControls.use((c) => c.failNextRefunds(1)))
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T00:05:00Z" })
      expect((await refunds()).map((r) => r.refund_status)).toEqual(["failed"])
      // what the failed refund did not give back is the customer's credit
      const sub = ((await api.call("GET", `/api/v1/subscription/${subId}`, k)).body as any).data.subscription
      expect(sub.credit_balance).toBe(owed)
    })
  })
}
