import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { Money, Proration } from "../../src/index.js"

const usd = (n: bigint) => Money.make(n, "USD")
const at = (s: string) => Date.parse(s)
const prorate = (
  input: Omit<Parameters<typeof Proration.prorate>[0], "creditMode"> & { creditMode?: Proration.CreditMode }
) => Result.getOrThrow(Proration.prorate({ creditMode: "refund", ...input }))

describe("Proration", () => {
  it("a $10 → $20 monthly change exactly half-way nets +$5.00", () => {
    const period = { start: at("2024-04-01T00:00:00Z"), end: at("2024-05-01T00:00:00Z") }
    const p = prorate({
      policy: Proration.defaultPolicy,
      period,
      at: at("2024-04-16T00:00:00Z"),
      paid: usd(1000n),
      newAmount: usd(2000n)
    })
    expect([p.credit.amount, p.charge.amount, p.net.amount]).toEqual([500n, 1000n, 500n])
    expect(p.outcome).toEqual(Proration.Outcome.Upgrade({ amount: usd(500n) }))
  })

  it("1000¢ → 2000¢ over Jan 2024 at Jan 16: credit 516, charge 1032, net 516 (per second)", () => {
    const period = { start: at("2024-01-01T00:00:00Z"), end: at("2024-02-01T00:00:00Z") }
    const p = prorate({
      policy: Proration.Policy.PerSecond(),
      period,
      at: at("2024-01-16T00:00:00Z"),
      paid: usd(1000n),
      newAmount: usd(2000n)
    })
    expect([p.credit.amount, p.charge.amount, p.net.amount]).toEqual([516n, 1032n, 516n])
  })

  it("per_day on 2023-05-23 → 2023-06-15 in a 31-day period gives 23/31 of the price", () => {
    const period = { start: at("2023-05-15T00:00:00Z"), end: at("2023-06-15T00:00:00Z") }
    const f = Proration.unusedFraction(Proration.Policy.PerDay(), period, at("2023-05-23T13:45:00Z"))
    expect(f).toEqual({ unused: 23n, total: 31n })
    const p = prorate({
      policy: Proration.Policy.PerDay(),
      period,
      at: at("2023-05-23T00:00:00Z"),
      paid: usd(3100n),
      newAmount: usd(6200n)
    })
    expect([p.credit.amount, p.charge.amount]).toEqual([2300n, 4600n])
  })

  it("fixed_days(30) measures against a 30-day month, capped", () => {
    const period = { start: at("2024-01-01T00:00:00Z"), end: at("2024-02-01T00:00:00Z") }
    expect(
      Proration.unusedFraction(Proration.Policy.FixedDays({ days: 30 }), period, at("2024-01-16T00:00:00Z"))
    ).toEqual({ unused: 16n, total: 30n })
    expect(
      Proration.unusedFraction(Proration.Policy.FixedDays({ days: 30 }), period, at("2024-01-01T00:00:00Z"))
    ).toEqual({ unused: 30n, total: 30n })
    expect(Result.getOrThrow(Proration.parsePolicy("fixed_days(30)"))).toEqual(Proration.Policy.FixedDays({ days: 30 }))
    expect(Proration.formatPolicy(Proration.Policy.PerDay())).toBe("per_day")
    expect(Result.isFailure(Proration.parsePolicy("hourly"))).toBe(true)
  })

  it("a downgrade refunds or credits the difference by merchant setting", () => {
    const period = { start: at("2024-04-01T00:00:00Z"), end: at("2024-05-01T00:00:00Z") }
    const input = {
      policy: Proration.defaultPolicy,
      period,
      at: at("2024-04-16T00:00:00Z"),
      paid: usd(2000n),
      newAmount: usd(1000n)
    }
    expect(prorate(input).outcome).toEqual(Proration.Outcome.Refund({ amount: usd(500n) }))
    expect(prorate({ ...input, creditMode: "credit_balance" }).outcome).toEqual(
      Proration.Outcome.CreditBalance({ amount: usd(500n) })
    )
    expect(prorate({ ...input, newAmount: usd(2000n) }).outcome).toEqual(Proration.Outcome.Nothing())
  })

  it("plans end-of-period, no-proration and quantity changes", () => {
    const period = { index: 4, start: at("2024-04-01T00:00:00Z"), end: at("2024-05-01T00:00:00Z") }
    const base = {
      policy: Proration.defaultPolicy,
      period,
      at: at("2024-04-10T00:00:00Z"),
      paid: usd(1000n),
      newAmount: usd(2000n),
      creditMode: "refund"
    } as const
    expect(
      Result.getOrThrow(
        Proration.planChange({ ...base, request: { effectiveType: "end_of_period", proration: "immediate" } })
      )
    ).toEqual(Proration.ChangePlan.Scheduled({ effectiveAt: period.end }))
    expect(
      Result.getOrThrow(Proration.planChange({ ...base, request: { effectiveType: "immediate", proration: "none" } }))
        ._tag
    ).toBe("SwitchWithoutProration")
    expect(
      Result.getOrThrow(
        Proration.planChange({ ...base, request: { effectiveType: "immediate", proration: "immediate" } })
      )._tag
    ).toBe("ProrateNow")
    expect(Proration.planQuantityChange(5n, period)).toEqual({ quantity: 5n, cycle_index: 5, effective_at: period.end })
    expect(Result.isFailure(Proration.prorate({ ...base, newAmount: Money.make(1n, "JPY") }))).toBe(true)
  })

  prop(
    "credit + remaining charge never exceeds the two full prices",
    [
      fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2080, 0, 1) }),
      fc.integer({ min: 3_600_000, max: 400 * 86_400_000 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      fc.constantFrom(Proration.Policy.PerSecond(), Proration.Policy.PerDay(), Proration.Policy.FixedDays({ days: 30 }))
    ],
    ([start, length, where, paid, next, policy]) => {
      const period = { start, end: start + length }
      const p = prorate({
        policy,
        period,
        at: start + Math.floor(length * where),
        paid: usd(paid),
        newAmount: usd(next)
      })
      expect(p.credit.amount >= 0n && p.credit.amount <= paid).toBe(true)
      expect(p.charge.amount >= 0n && p.charge.amount <= next).toBe(true)
      expect(p.credit.amount + p.charge.amount <= paid + next).toBe(true)
      expect(p.net.amount).toBe(p.charge.amount - p.credit.amount)
    }
  )
})
