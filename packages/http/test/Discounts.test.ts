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
        [{ ...base, product_ids: ["prd_missing"] }, "product_ids[0]"],
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
  })
}
