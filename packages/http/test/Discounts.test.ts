import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`discounts (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    let key = ""
    let other = ""
    beforeAll(async () => {
      await api.ready()
      key = (await api.merchant()).api_key
      other = (await api.merchant()).api_key
    }, 120_000)
    afterAll(() => api.dispose())

    const create = (body: Record<string, unknown>, k = key) => api.call("POST", "/api/v1/discounts", k, body)
    const count = async () => ((await api.call("GET", "/api/v1/discounts?limit=100", key)).body as any).data.list.length

    it("creates a percentage discount for 3 paid cycles and a fixed amount forever, in the merchant's currency", async () => {
      const pct = await create({
        name: "Launch",
        code: "LAUNCH10",
        discount_type: "percentage",
        percent_off: 10,
        duration: "repeating",
        duration_cycles: 3,
        max_redemptions: 100,
        max_redemptions_per_customer: 1,
        expires_at: "2027-01-01T00:00:00Z",
        metadata: { campaign: "launch" }
      })
      expect(pct.status, JSON.stringify(pct.body)).toBe(200)
      const d = (pct.body as any).data.discount
      expect(d).toMatchObject({
        name: "Launch",
        code: "LAUNCH10",
        discount_type: "percentage",
        percent_off: 10,
        amount_off: null,
        currency: "USD",
        duration: "repeating",
        duration_cycles: 3,
        status: "active",
        times_redeemed: 0,
        starts_at: "2026-01-01T00:00:00Z",
        expires_at: "2027-01-01T00:00:00Z",
        metadata: { campaign: "launch" }
      })
      expect(d.discount_id).toMatch(/^dsc_/)
      const fixed = await create({
        name: "Five off",
        discount_type: "fixed_amount",
        amount_off: "5",
        duration: "forever"
      })
      expect((fixed.body as any).data.discount).toMatchObject({ amount_off: "5.00", percent_off: null, code: null })
      const got = await api.call("GET", `/api/v1/discount/${d.discount_id}`, key)
      expect((got.body as any).data.discount).toEqual(d)
    })

    it("refuses what a discount cannot be, naming the field, and creates nothing", async () => {
      const before = await count()
      const base = { name: "Bad", discount_type: "percentage", percent_off: 10 }
      for (const [body, param] of [
        [{ ...base, name: "" }, "name"],
        [{ ...base, percent_off: 0 }, "percent_off"],
        [{ ...base, percent_off: 101 }, "percent_off"],
        [{ ...base, percent_off: 12.5 }, "percent_off"],
        [{ name: "Bad", discount_type: "percentage" }, "percent_off"],
        [{ ...base, amount_off: "5.00" }, "amount_off"],
        [{ name: "Bad", discount_type: "fixed_amount", amount_off: "5.001" }, "amount_off"],
        [{ name: "Bad", discount_type: "fixed_amount", amount_off: "0" }, "amount_off"],
        [{ name: "Bad", discount_type: "fixed_amount", amount_off: "99999999999999" }, "amount_off"],
        [{ name: "Bad", discount_type: "bogus" }, "discount_type"],
        [{ ...base, code: "launch" }, "code"],
        [{ ...base, code: "A" }, "code"],
        [{ ...base, code: "TOO-LONG-AND-DASHED" }, "code"],
        [{ ...base, duration: "repeating" }, "duration_cycles"],
        [{ ...base, duration: "once", duration_cycles: 2 }, "duration_cycles"],
        [{ ...base, duration: "repeating", duration_cycles: 0 }, "duration_cycles"],
        [{ ...base, duration: "weekly" }, "duration"],
        [{ ...base, max_redemptions: 0 }, "max_redemptions"],
        [{ ...base, min_amount: "-1" }, "min_amount"],
        [{ ...base, expires_at: "tomorrow" }, "expires_at"],
        [{ ...base, starts_at: "2026-06-01T00:00:00Z", expires_at: "2026-05-01T00:00:00Z" }, "expires_at"]
      ] as const) {
        expect([JSON.stringify(body), ...refusal(await create(body))]).toEqual([
          JSON.stringify(body),
          400,
          "InvalidParameter",
          param
        ])
      }
      // a product that does not exist is a missing reference: 404 naming its entry
      expect(refusal(await create({ ...base, product_ids: ["prd_missing"] }))).toEqual([
        404,
        "resource_not_found",
        "product_ids[0]"
      ])
      expect(await count()).toBe(before)
    })

    it("a code is unique per merchant: 409 duplicate_resource here, fine for another merchant", async () => {
      const body = { name: "Spring", code: "SPRING", discount_type: "percentage", percent_off: 20 }
      expect((await create(body)).status).toBe(200)
      expect(refusal(await create(body))).toEqual([409, "duplicate_resource", "code"])
      expect((await create(body, other)).status).toBe(200)
      const found = await api.call("GET", "/api/v1/discounts?code=SPRING", key)
      expect((found.body as any).data.list).toHaveLength(1)
    })

    it("ending a discount moves it to ended once, with events; another merchant sees none of it", async () => {
      const d = (
        (await create({ name: "Flash", code: "FLASH", discount_type: "fixed_amount", amount_off: "2.50" })).body as any
      ).data.discount
      expect((await api.call("GET", `/api/v1/discount/${d.discount_id}`, other)).status).toBe(404)
      expect((await api.call("POST", `/api/v1/discount/${d.discount_id}/end`, other)).status).toBe(404)
      const ended = await api.call("POST", `/api/v1/discount/${d.discount_id}/end`, key)
      expect((ended.body as any).data.discount).toMatchObject({ status: "ended", ended_at: "2026-01-01T00:00:00Z" })
      expect(refusal(await api.call("POST", `/api/v1/discount/${d.discount_id}/end`, key))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
      const active = await api.call("GET", "/api/v1/discounts?status=active&limit=100", key)
      expect((active.body as any).data.list.map((x: any) => x.discount_id)).not.toContain(d.discount_id)
      const endedList = await api.call("GET", "/api/v1/discounts?status=ended", key)
      expect((endedList.body as any).data.list.map((x: any) => x.discount_id)).toContain(d.discount_id)
      expect(refusal(await api.call("GET", "/api/v1/discounts?status=expired", key))).toEqual([
        400,
        "InvalidParameter",
        "status"
      ])
      const events = await api.call("GET", `/api/v2/webhook/events?business_ids=${d.discount_id}`, key)
      expect((events.body as any).data.list.map((e: any) => e.event_type).sort()).toEqual([
        "v2.discount.created",
        "v2.discount.ended"
      ])
    })

    it("pages through discounts newest first", async () => {
      for (const i of [1, 2, 3]) await create({ name: `Page ${i}`, discount_type: "percentage", percent_off: i })
      const first = (await api.call("GET", "/api/v1/discounts?limit=2", key)).body as any
      expect(first.data.list).toHaveLength(2)
      expect(first.data.has_more).toBe(true)
      const next = (
        await api.call("GET", `/api/v1/discounts?limit=2&starting_after=${first.data.list[1].discount_id}`, key)
      ).body as any
      expect(next.data.list[0].discount_id).not.toBe(first.data.list[1].discount_id)
    })

    describe("redeemed at checkout", () => {
      const priceOf = (k: string, fields: Record<string, unknown> = {}) =>
        api.priceOf(k, fields, { product: "Plan", price: "Plan monthly" })
      const pay = (sessionId: string) =>
        api.call(
          "POST",
          `/checkout/${sessionId}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      const session = (k: string, body: Record<string, unknown>) =>
        api.call("POST", "/api/v1/session", k, { payer_id: `p-${Math.random()}`, ...body })
      const invoicesOf = async (k: string, sessionId: string) => {
        const s = ((await api.call("GET", `/api/v1/session/${sessionId}`, k)).body as any).data.session
        const all = ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
        return all
          .filter((i: any) => i.subscription_id === s.subscription_id)
          .sort((a: any, b: any) => a.cycle_index - b.cycle_index)
      }
      const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key

      it("a 7-day trial, then 30.00 with 10 %: the trial shows a 0.00 discount, the first paid cycle 27.00", async () => {
        const k = await fresh()
        const { priceId } = await priceOf(k, {
          has_trial: true,
          trial_period: { trial_period_unit: "day", trial_period_count: 7 }
        })
        await create(
          { name: "Ten", code: "TENOFF", discount_type: "percentage", percent_off: 10, duration: "forever" },
          k
        )
        const s = await session(k, { line_items: [{ price_id: priceId }], discount_code: "TENOFF" })
        expect(s.status, JSON.stringify(s.body)).toBe(200)
        const id = (s.body as any).data.session_id
        const opened = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
        expect([opened.amount, opened.discount_code]).toEqual(["0.00", "TENOFF"])
        expect((await pay(id)).status).toBe(200)
        await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-09T00:00:00Z" })
        const [trial, first] = await invoicesOf(k, id)
        expect([trial.invoice_type, trial.amount, trial.Discounts.current_period]).toEqual([
          "trial",
          "0.00",
          [{ discount_id: expect.stringMatching(/^dsc_/), discount_code: "TENOFF", discount_amount: "0.00" }]
        ])
        expect([first.cycle_index, first.amount, first.Discounts.current_period[0].discount_amount]).toEqual([
          1,
          "27.00",
          "3.00"
        ])
        const d = ((await api.call("GET", "/api/v1/discounts?code=TENOFF", k)).body as any).data.list[0]
        expect(d.times_redeemed).toBe(1)
      })

      it("10 % for 3 cycles on 50.00: 45.00, 45.00, 45.00, then 50.00", async () => {
        const k = await fresh()
        const { priceId } = await priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" } })
        await create(
          {
            name: "Three",
            code: "THREE",
            discount_type: "percentage",
            percent_off: 10,
            duration: "repeating",
            duration_cycles: 3
          },
          k
        )
        const id = ((await session(k, { line_items: [{ price_id: priceId }], discount_code: "THREE" })).body as any)
          .data.session_id
        expect(((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.amount).toBe("45.00")
        expect((await pay(id)).status).toBe(200)
        await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-04-15T00:00:00Z" })
        expect((await invoicesOf(k, id)).map((i: any) => i.amount)).toEqual(["45.00", "45.00", "45.00", "50.00"])
      })

      it("a code that cannot be redeemed is 400 discount_code at session creation, naming why", async () => {
        const k = await fresh()
        const { priceId, productId } = await priceOf(k)
        const other = await priceOf(k)
        await create(
          { name: "Scoped", code: "SCOPED", discount_type: "percentage", percent_off: 5, product_ids: [productId] },
          k
        )
        await create(
          { name: "Big", code: "BIGONLY", discount_type: "fixed_amount", amount_off: "5", min_amount: "100" },
          k
        )
        await create(
          {
            name: "Later",
            code: "LATER",
            discount_type: "percentage",
            percent_off: 5,
            starts_at: "2027-01-01T00:00:00Z"
          },
          k
        )
        const ended = (
          (await create({ name: "Gone", code: "GONE", discount_type: "percentage", percent_off: 5 }, k)).body as any
        ).data.discount
        await api.call("POST", `/api/v1/discount/${ended.discount_id}/end`, k)
        // a code that names no discount is a missing reference (404); one that does not apply, 400
        for (const [price, code, why, status, answer] of [
          [priceId, "NOSUCH", "no such discount code", 404, "resource_not_found"],
          [other.priceId, "SCOPED", "does not apply to this product", 400, "InvalidParameter"],
          [priceId, "BIGONLY", "at least 100.00 USD", 400, "InvalidParameter"],
          [priceId, "LATER", "has not started", 400, "InvalidParameter"],
          [priceId, "GONE", "has ended", 400, "InvalidParameter"]
        ] as const) {
          const r = await session(k, { line_items: [{ price_id: price }], discount_code: code })
          expect([code, ...refusal(r)]).toEqual([code, status, answer, "discount_code"])
          expect((r.body as any).message).toContain(why)
        }
        expect(refusal(await session(k, { line_items: [{ price_id: priceId }], discount_code: "lower" }))).toEqual([
          400,
          "InvalidParameter",
          "discount_code"
        ])
        const scoped = await session(k, { line_items: [{ price_id: priceId }], discount_code: "SCOPED" })
        expect(scoped.status).toBe(200)
      })

      it("a limit of 3 redemptions under 8 concurrent checkouts: exactly 3 are discounted, never more", async () => {
        const k = await fresh()
        const { priceId } = await priceOf(k)
        await create(
          { name: "Few", code: "FEW", discount_type: "fixed_amount", amount_off: "10", max_redemptions: 3 },
          k
        )
        const ids: Array<string> = []
        for (let i = 0; i < 8; i++)
          ids.push(
            ((await session(k, { line_items: [{ price_id: priceId }], discount_code: "FEW" })).body as any).data
              .session_id
          )
        const answers = await Promise.all(ids.map((id) => pay(id)))
        const statuses = answers.map((a) => a.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(3)
        for (const a of answers.filter((x) => x.status !== 200))
          expect(refusal(a)).toEqual([400, "InvalidParameter", "discount_code"])
        const d = ((await api.call("GET", "/api/v1/discounts?code=FEW", k)).body as any).data.list[0]
        expect(d.times_redeemed).toBe(3)
        const trades = ((await api.call("GET", "/api/v1/trades?limit=100", k)).body as any).data.list
        expect(trades.filter((t: any) => t.trade_status === "succeeded").map((t: any) => t.amount)).toEqual([
          "20.00",
          "20.00",
          "20.00"
        ])
      })

      const subscribeOf = async (k: string, priceId: string, code?: string) => {
        const id = (
          (await session(k, { line_items: [{ price_id: priceId }], ...(code ? { discount_code: code } : {}) }))
            .body as any
        ).data.session_id
        expect((await pay(id)).status).toBe(200)
        return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
      }
      const renewalsOf = async (k: string, subscriptionId: string) =>
        ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
          .filter((i: any) => i.subscription_id === subscriptionId)
          .sort((a: any, b: any) => a.cycle_index - b.cycle_index)
          .map((i: any) => i.amount)

      it("applied to a running subscription from its next cycle, kept when the discount ends, removed again", async () => {
        const k = await fresh()
        const { priceId } = await priceOf(k)
        const sub = await subscribeOf(k, priceId)
        const half = (
          (
            await create(
              { name: "Half", code: "HALF", discount_type: "percentage", percent_off: 50, duration: "forever" },
              k
            )
          ).body as any
        ).data.discount
        const applied = await api.call("POST", `/api/v1/subscription/${sub}/discount`, k, { discount_code: "HALF" })
        expect((applied.body as any).data).toEqual({
          subscription_id: sub,
          discounts: [{ discount_id: half.discount_id, discount_code: "HALF", first_cycle: 1, cycles: null }]
        })
        expect(
          refusal(await api.call("POST", `/api/v1/subscription/${sub}/discount`, k, { discount_id: half.discount_id }))
        ).toEqual([409, "state_conflict", undefined])
        expect(refusal(await api.call("POST", `/api/v1/subscription/${sub}/discount`, k, {}))).toEqual([
          400,
          "InvalidParameter",
          "discount_id"
        ])
        expect(
          (await api.call("POST", "/api/v1/subscription/sub_missing/discount", k, { discount_code: "HALF" })).status
        ).toBe(404)
        // ending the discount stops new redemptions, not this subscription's
        await api.call("POST", `/api/v1/discount/${half.discount_id}/end`, k)
        await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:00Z" })
        expect(await renewalsOf(k, sub)).toEqual(["30.00", "15.00"])
        const removed = await api.call("POST", `/api/v1/subscription/${sub}/discount/remove`, k, {
          discount_id: half.discount_id
        })
        expect((removed.body as any).data.discounts).toEqual([])
        expect(
          (await api.call("POST", `/api/v1/subscription/${sub}/discount/remove`, k, { discount_id: half.discount_id }))
            .status
        ).toBe(404)
        await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T00:00:00Z" })
        expect(await renewalsOf(k, sub)).toEqual(["30.00", "15.00", "30.00"])
        const d = ((await api.call("GET", `/api/v1/discount/${half.discount_id}`, k)).body as any).data.discount
        expect([d.status, d.times_redeemed]).toEqual(["ended", 1])
      })

      it("proration credits what was actually paid after the discount: half the credit of an undiscounted plan", async () => {
        const k = await fresh()
        const { priceId } = await priceOf(k)
        const bigger = await priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        await create(
          { name: "Half", code: "HALF2", discount_type: "percentage", percent_off: 50, duration: "forever" },
          k
        )
        const plain = await subscribeOf(k, priceId)
        const discounted = await subscribeOf(k, priceId, "HALF2")
        await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T00:00:00Z" })
        const quote = async (sub: string) =>
          (
            (await api.call("POST", `/api/v1/subscription/${sub}/preview-change`, k, { price_id: bigger.priceId }))
              .body as any
          ).data
        const [p, d] = [await quote(plain), await quote(discounted)]
        const cents = (s: string) => Math.round(Number(s.replace(".", "")))
        expect(Math.abs(cents(d.credit) * 2 - cents(p.credit))).toBeLessThanOrEqual(1)
        expect(Math.abs(cents(d.charge) * 2 - cents(p.charge))).toBeLessThanOrEqual(1)
      })

      it("a discounted invoice refunds what was paid, never the price before the discount", async () => {
        const k = await fresh()
        const { priceId } = await priceOf(k)
        await create({ name: "Ten", code: "REFUND10", discount_type: "percentage", percent_off: 10 }, k)
        await subscribeOf(k, priceId, "REFUND10")
        const trade = ((await api.call("GET", "/api/v1/trades?limit=10", k)).body as any).data.list[0]
        expect(trade.amount).toBe("27.00")
        expect(
          refusal(await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id, amount: "27.01" }))
        ).toEqual([400, "InvalidParameter", "amount"])
        const full = await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id })
        expect(full.status, JSON.stringify(full.body)).toBe(200)
        const after = ((await api.call("GET", `/api/v1/trade/${trade.trade_id}`, k)).body as any).data.trade
        expect(after.total_refunded_amount).toBe("27.00")
      })
    })
  })
}
