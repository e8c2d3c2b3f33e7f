/**
 * What only the facade could set or see before (issue 32, the reverse half of facade↔REST
 * parity), now over REST: the merchant's billing settings (proration, dunning), the discount
 * terms in a subscription's answer, and the credit note in a refund's.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`billing settings, discount terms, credit notes (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const subscribe = async (k: string, priceId: string, code?: string) => {
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }],
        ...(code ? { discount_code: code } : {})
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      expect((await pay(id)).status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const subscription = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/subscription/${id}`, k)).body as any).data.subscription

    it("billing settings: the defaults, a partial change, out-of-range values refused by field, a replay", async () => {
      const k = await fresh()
      const read = await api.call("GET", "/api/v1/billing_settings", k)
      expect(read.status).toBe(200)
      expect(read.body).toEqual({
        code: "success",
        message: "success",
        data: {
          proration_policy: "per_second",
          proration_credit: "refund",
          dunning_final_state: "unpaid",
          dunning_retry_days: null,
          dunning_on_decline: null,
          invoice_draft_grace_seconds: 0,
          usage_adjustments: "automatic"
        }
      })
      const set = await api.call("POST", "/api/v1/billing_settings", k, {
        proration_policy: "fixed_days(30)",
        dunning_retry_days: [1, 3, 7]
      })
      expect((set.body as any).data).toEqual({
        proration_policy: "fixed_days(30)",
        proration_credit: "refund",
        dunning_final_state: "unpaid",
        dunning_retry_days: [1, 3, 7],
        dunning_on_decline: null,
        invoice_draft_grace_seconds: 0,
        usage_adjustments: "automatic"
      })
      // the fields not given keep their value; null returns the retries to the engine's policy
      const more = await api.call("POST", "/api/v1/billing_settings", k, {
        proration_credit: "credit_balance",
        dunning_final_state: "canceled",
        dunning_retry_days: null
      })
      expect((more.body as any).data).toEqual({
        proration_policy: "fixed_days(30)",
        proration_credit: "credit_balance",
        dunning_final_state: "canceled",
        dunning_retry_days: null,
        dunning_on_decline: null,
        invoice_draft_grace_seconds: 0,
        usage_adjustments: "automatic"
      })
      for (const [body, param] of [
        [{ proration_policy: "weekly" }, "proration_policy"],
        [{ proration_policy: "fixed_days(0)" }, "proration_policy"],
        [{ proration_credit: "cash" }, "proration_credit"],
        [{ dunning_final_state: "paused" }, "dunning_final_state"],
        [{ dunning_retry_days: [3, 1] }, "dunning_retry_days"],
        [{ dunning_retry_days: [0.5] }, "dunning_retry_days"],
        [{ dunning_retry_days: [] }, "dunning_retry_days"]
      ] as const)
        expect(refusal(await api.call("POST", "/api/v1/billing_settings", k, body)), JSON.stringify(body)).toEqual([
          400,
          "InvalidParameter",
          param
        ])
      // nothing refused was saved
      expect(((await api.call("GET", "/api/v1/billing_settings", k)).body as any).data.proration_policy).toBe(
        "fixed_days(30)"
      )
      // a retry with the same Request-Id is the stored answer, performing nothing
      const headers = { "request-id": "billing-settings-once" }
      const first = await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: "per_day" }, headers)
      await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: "per_second" })
      const again = await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: "per_day" }, headers)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body).toEqual(first.body)
      expect(((await api.call("GET", "/api/v1/billing_settings", k)).body as any).data.proration_policy).toBe(
        "per_second"
      )
      // another merchant's settings are its own
      const other = await fresh()
      expect(((await api.call("GET", "/api/v1/billing_settings", other)).body as any).data.proration_policy).toBe(
        "per_second"
      )
    })

    it("the proration policy set over REST is the one the next quote uses", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const bigger = (
        await api.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } },
          {
            product: "Max",
            price: "Max monthly"
          }
        )
      ).priceId
      const sub = await subscribe(k, priceId)
      // half a day into the 16th of January: per second and per day disagree
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T12:00:00Z" })
      const quote = async () =>
        ((await api.call("POST", `/api/v1/subscription/${sub}/preview-change`, k, { price_id: bigger })).body as any)
          .data
      const perSecond = await quote()
      expect(perSecond.credit).toBe("15.00")
      await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: "per_day" })
      const perDay = await quote()
      expect(perDay.credit).not.toBe(perSecond.credit)
      await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: "per_second" })
      expect((await quote()).credit).toBe("15.00")
    })

    it("a quote previewed before proration_credit changes is stale at commit: a quoted refund never lands as balance credit", async () => {
      const k = await fresh()
      const big = (
        await api.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } },
          { product: "Max", price: "Max monthly" }
        )
      ).priceId
      const { priceId: small } = await api.priceOf(k)
      const sub = await subscribe(k, big)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T12:00:00Z" })
      const preview = async () =>
        (
          (
            await api.call("POST", `/api/v1/subscription/${sub}/preview-change`, k, {
              price_id: small,
              effective_type: "immediate",
              proration: "immediate"
            })
          ).body as any
        ).data
      const quoted = await preview()
      expect(quoted.outcome).toBe("refund")
      expect(
        (await api.call("POST", "/api/v1/billing_settings", k, { proration_credit: "credit_balance" })).status
      ).toBe(200)
      const commit = (quoteId: string) =>
        api.call("POST", `/api/v1/subscription/${sub}`, k, {
          price_id: small,
          effective_type: "immediate",
          proration: "immediate",
          quote_id: quoteId
        })
      const stale = await commit(quoted.quote_id)
      expect(stale.status, JSON.stringify(stale.body)).toBe(409)
      expect((await subscription(k, sub)).price_id).toBe(big)
      const requoted = await preview()
      expect([requoted.outcome, requoted.net]).toEqual(["credit_balance", quoted.net])
      expect((await commit(requoted.quote_id)).status).toBe(200)
      expect((await subscription(k, sub)).price_id).toBe(small)
    })

    it("a subscription's answer shows the discounts it carries and their terms, counting down", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const plain = await subscribe(k, priceId)
      expect((await subscription(k, plain)).discounts).toEqual([])
      await api.call("POST", "/api/v1/discounts", k, {
        name: "Three months",
        code: "THREE20",
        discount_type: "percentage",
        percent_off: 20,
        duration: "repeating",
        duration_cycles: 3
      })
      const tenOff = (
        (
          await api.call("POST", "/api/v1/discounts", k, {
            name: "Ten off",
            discount_type: "fixed_amount",
            amount_off: "10.00",
            duration: "forever"
          })
        ).body as any
      ).data.discount
      const sub = await subscribe(k, priceId, "THREE20")
      const three = (await subscription(k, sub)).discounts
      expect(three).toEqual([
        {
          discount_id: expect.stringMatching(/^dsc_/),
          discount_code: "THREE20",
          discount_type: "percentage",
          percent_off: 20,
          amount_off: null,
          currency: "USD",
          duration: "repeating",
          first_cycle: 0,
          cycles: 3,
          last_cycle: 2,
          // cycle 0 is billed with it: two more to come
          cycles_remaining: 2
        }
      ])
      await api.call("POST", `/api/v1/subscription/${sub}/discount`, k, { discount_id: tenOff.discount_id })
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:00Z" })
      const after = (await subscription(k, sub)).discounts
      expect(after.map((d: any) => [d.discount_code, d.cycles_remaining, d.last_cycle])).toEqual([
        ["THREE20", 1, 2],
        [null, null, null]
      ])
      expect(after[1]).toMatchObject({
        discount_id: tenOff.discount_id,
        discount_type: "fixed_amount",
        percent_off: null,
        amount_off: "10.00",
        duration: "forever",
        first_cycle: 1
      })
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-04-01T00:00:00Z" })
      expect((await subscription(k, sub)).discounts[0].cycles_remaining).toBe(0)
      // the list answers the same terms
      const listed = ((await api.call("GET", `/api/v1/subscription?subscription_ids=${sub}`, k)).body as any).data
        .list[0]
      expect(listed.discounts).toEqual((await subscription(k, sub)).discounts)
    })

    it("a refund's answer names its credit note, and the note names the refund", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      await subscribe(k, priceId)
      const trade = ((await api.call("GET", "/api/v1/trades?limit=10", k)).body as any).data.list[0]
      const made = await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id, amount: "10.00" })
      expect(made.status).toBe(200)
      const answer = (made.body as any).data
      expect(answer).toMatchObject({ refund_status: "succeeded", credit_note_number: "INV-CN-000001" })
      const refund = ((await api.call("GET", `/api/v1/refund/${answer.refund_id}`, k)).body as any).data.refund
      expect(refund.credit_note_id).toBe(answer.credit_note_id)
      expect(refund.credit_note_number).toBe("INV-CN-000001")
      const note = ((await api.call("GET", `/api/v1/invoice/${refund.credit_note_id}`, k)).body as any).data.invoice
      expect(note).toMatchObject({
        invoice_type: "refund",
        number: "INV-CN-000001",
        amount: "10.00",
        refund_order_id: answer.refund_id
      })
      const second = (
        (await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id, amount: "5.00" })).body as any
      ).data
      expect(second.credit_note_number).toBe("INV-CN-000002")
      const listed = ((await api.call("GET", `/api/v1/trades/${trade.trade_id}/refunds`, k)).body as any).data.list
      expect(listed.map((r: any) => r.credit_note_number).sort()).toEqual(["INV-CN-000001", "INV-CN-000002"])
    })
  })
}
