import { describe, expect, it } from "@effect/vitest"
import { createBilling, type RecurError } from "../src/index.js"

const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    const r = e as RecurError
    return [r.status, r.code, r.param]
  }
  throw new Error("not refused")
}

describe("prepaid credits through the facade (issue 35)", () => {
  it("grant, list, get, void, top-up with a card, automatic top-up — refused as REST refuses", {
    timeout: 60_000
  }, async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const { customer_id: c } = await billing.customers.create(m, { payer_id: "ada" })
      const g = await billing.creditGrants.create(m, c, {
        amount: "12.50",
        currency: "usd",
        reason: "launch gift",
        category: "promotional",
        expires_at: "2026-06-01T00:00:00Z"
      })
      expect(g).toMatchObject({
        customer_id: c,
        currency: "USD",
        amount: "12.50",
        remaining: "12.50",
        status: "active",
        source: "grant",
        expires_at: "2026-06-01T00:00:00Z"
      })
      expect(g.credit_grant_id.startsWith("cgr_")).toBe(true)
      expect((await billing.creditGrants.get(m, g.credit_grant_id)).reason).toBe("launch gift")
      expect(
        await refusal(billing.creditGrants.create(m, c, { amount: "1.00", currency: "USD", reason: "x" }))
      ).toEqual([400, "InvalidParameter", "category"])
      expect(await refusal(billing.creditGrants.get(m, "cgr_nope"))).toEqual([404, "resource_not_found", undefined])
      // a top-up with a card: granted once charged; a declining card grants nothing
      const card = { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" }
      const bought = await billing.creditGrants.topUp(m, c, {
        amount: "20.00",
        currency: "USD",
        card,
        request_id: "t1"
      })
      expect([bought.source, bought.category, bought.remaining]).toEqual(["top_up", "paid", "20.00"])
      expect(
        (await billing.creditGrants.topUp(m, c, { amount: "20.00", currency: "USD", card, request_id: "t1" }))
          .credit_grant_id
      ).toBe(bought.credit_grant_id)
      const declined = await refusal(
        billing.creditGrants.topUp(m, c, {
          amount: "20.00",
          currency: "USD",
          card: { ...card, number: "4000000000000002" }
        })
      )
      expect(declined.slice(0, 2)).toEqual([400, "invalid_request_error"])
      // without a card on file and none given: refused
      expect((await refusal(billing.creditGrants.topUp(m, c, { amount: "5.00", currency: "USD" })))[0]).toBe(400)
      expect((await billing.balances.get(m, c)).balance).toEqual([{ currency: "USD", amount: "32.50" }])
      const voided = await billing.creditGrants.void(m, g.credit_grant_id)
      expect([voided.status, voided.remaining]).toEqual(["voided", "0.00"])
      expect((await refusal(billing.creditGrants.void(m, g.credit_grant_id)))[0]).toBe(409)
      const page = await billing.creditGrants.list(m, c)
      expect(page.list.map((x) => x.status)).toEqual(["active", "voided"])
      expect((await billing.balances.get(m, c)).balance).toEqual([{ currency: "USD", amount: "20.00" }])
      const auto = await billing.customers.autoTopUp(m, c, {
        enabled: true,
        threshold: "5.00",
        amount: "25.00",
        currency: "USD"
      })
      expect(auto).toMatchObject({ enabled: true, threshold: "5.00", amount: "25.00", in_flight: null })
      expect(
        await refusal(
          billing.customers.autoTopUp(m, c, { enabled: true, threshold: "0", amount: "1.00", currency: "USD" })
        )
      ).toEqual([400, "InvalidParameter", "threshold"])
    } finally {
      await billing.close()
    }
  })
})
