import { describe, expect, it } from "@effect/vitest"
import { DateTime, Result } from "effect"
import { CreditGrant } from "../../src/index.js"

const at = (s: string) => DateTime.makeUnsafe(Date.parse(s))
const grant = (id: string, expires: string | null, created: string, remaining = "10.00") =>
  new CreditGrant.CreditGrant({
    credit_grant_id: id,
    merchant_id: "mch_1",
    customer_id: "cus_1",
    currency: "USD",
    amount: "10.00",
    remaining,
    category: "promotional",
    source: "grant",
    reason: "gift",
    expires_at: expires === null ? null : at(expires),
    status: "active",
    payment_key: null,
    created_at: at(created),
    updated_at: at(created)
  })

describe("CreditGrant", () => {
  it("is consumed earliest-expiring first, a grant that never expires last, then oldest, then by id", () => {
    const never = grant("cgr_a", null, "2026-01-01T00:00:00Z")
    const late = grant("cgr_b", "2026-06-01T00:00:00Z", "2026-01-01T00:00:00Z")
    const soonNew = grant("cgr_c", "2026-03-01T00:00:00Z", "2026-01-05T00:00:00Z")
    const soonOld = grant("cgr_d", "2026-03-01T00:00:00Z", "2026-01-02T00:00:00Z")
    const soonOldTwin = grant("cgr_e", "2026-03-01T00:00:00Z", "2026-01-02T00:00:00Z")
    const neverOld = grant("cgr_f", null, "2025-12-01T00:00:00Z")
    const sorted = [never, late, soonNew, soonOldTwin, soonOld, neverOld].sort(CreditGrant.consumptionOrder)
    expect(sorted.map((g) => g.credit_grant_id)).toEqual(["cgr_d", "cgr_e", "cgr_c", "cgr_b", "cgr_f", "cgr_a"])
  })

  it("moves through its machine: partial consumption keeps it active without an event, the rest ends it once", () => {
    const g = grant("cgr_a", null, "2026-01-01T00:00:00Z")
    const now = Date.parse("2026-02-01T00:00:00Z")
    const part = Result.getOrThrow(CreditGrant.move(g, "consume", 400n, now))
    expect([part.value.status, part.value.remaining, part.events]).toEqual(["active", "4.00", []])
    expect(CreditGrant.remainingOf(part.value)).toBe(400n)
    const done = Result.getOrThrow(CreditGrant.move(part.value, "deplete", 0n, now))
    expect([done.value.status, done.value.remaining, done.events]).toEqual([
      "depleted",
      "0.00",
      ["v2.credit_grant.depleted"]
    ])
    // an ended grant neither expires, nor is voided, nor consumed again
    for (const trigger of ["expire", "void", "consume"] as const)
      expect(Result.isFailure(CreditGrant.move(done.value, trigger, 0n, now))).toBe(true)
    expect(Result.getOrThrow(CreditGrant.move(g, "expire", 0n, now)).events).toEqual(["v2.credit_grant.expired"])
    expect(Result.getOrThrow(CreditGrant.move(g, "void", 0n, now)).events).toEqual(["v2.credit_grant.voided"])
  })
})
