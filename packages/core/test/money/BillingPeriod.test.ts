import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import fc from "fast-check"
import { BillingPeriod } from "../../src/index.js"

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const starts = (schedule: BillingPeriod.Schedule, n: number) =>
  BillingPeriod.periods(schedule, 0, n).map((p) => iso(p.start))

describe("BillingPeriod", () => {
  it("monthly from Jan 31 clamps through leap and non-leap Februaries and returns to the 31st", () => {
    const schedule = { anchor: Date.UTC(2024, 0, 31), unit: "month", count: 1 } as const
    expect(starts(schedule, 14)).toEqual([
      "2024-01-31",
      "2024-02-29",
      "2024-03-31",
      "2024-04-30",
      "2024-05-31",
      "2024-06-30",
      "2024-07-31",
      "2024-08-31",
      "2024-09-30",
      "2024-10-31",
      "2024-11-30",
      "2024-12-31",
      "2025-01-31",
      "2025-02-28"
    ])
    expect(iso(Option.getOrThrow(BillingPeriod.period(schedule, 14)).start)).toBe("2025-03-31")
  })

  it("quarterly and yearly from Feb 29", () => {
    const quarterly = { anchor: Date.UTC(2024, 1, 29), unit: "quarter", count: 1 } as const
    expect(starts(quarterly, 5)).toEqual(["2024-02-29", "2024-05-29", "2024-08-29", "2024-11-29", "2025-02-28"])
    const yearly = { anchor: Date.UTC(2024, 1, 29), unit: "year", count: 1 } as const
    expect(starts(yearly, 5)).toEqual(["2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29"])
  })

  it("weekly periods are 7 days and billing_cycle_count multiplies the step", () => {
    const weekly = { anchor: Date.UTC(2024, 0, 1, 9, 30), unit: "week", count: 2 } as const
    const [a, b] = BillingPeriod.periods(weekly, 0, 2)
    expect(b!.start - a!.start).toBe(14 * 86_400_000)
    expect(new Date(b!.start).toISOString()).toBe("2024-01-15T09:30:00.000Z")
    const everyThreeMonths = { anchor: Date.UTC(2024, 10, 30), unit: "month", count: 3 } as const
    expect(starts(everyThreeMonths, 3)).toEqual(["2024-11-30", "2025-02-28", "2025-05-30"])
  })

  it("fixed terms stop after total_cycles; customer-initiated has no automatic period", () => {
    const fixed = { anchor: Date.UTC(2024, 0, 1), unit: "month", count: 1, totalCycles: 3 } as const
    expect(BillingPeriod.periods(fixed, 0, 10)).toHaveLength(3)
    expect(BillingPeriod.isLastCycle(fixed, 2)).toBe(true)
    expect(BillingPeriod.isLastCycle(fixed, 1)).toBe(false)
    expect(Option.isNone(BillingPeriod.period(fixed, 3))).toBe(true)
    const manual = { anchor: Date.UTC(2024, 0, 1), unit: "customer-initiated", count: 1 } as const
    expect(Option.isNone(BillingPeriod.period(manual, 0))).toBe(true)
    expect(Option.isNone(BillingPeriod.periodAt(manual, Date.UTC(2024, 5, 1)))).toBe(true)
  })

  it("finds the period containing an instant", () => {
    const schedule = { anchor: Date.UTC(2024, 0, 31), unit: "month", count: 1 } as const
    const p = Option.getOrThrow(BillingPeriod.periodAt(schedule, Date.UTC(2024, 2, 15)))
    expect([p.index, iso(p.start), iso(p.end)]).toEqual([1, "2024-02-29", "2024-03-31"])
    expect(Option.isNone(BillingPeriod.periodAt(schedule, Date.UTC(2023, 11, 1)))).toBe(true)
  })

  it("trial periods in day/week/month/year units", () => {
    const start = Date.UTC(2024, 0, 31)
    expect(iso(BillingPeriod.trialEnd(start, { trial_period_unit: "day", trial_period_count: 14 }))).toBe("2024-02-14")
    expect(iso(BillingPeriod.trialEnd(start, { trial_period_unit: "week", trial_period_count: 1 }))).toBe("2024-02-07")
    expect(iso(BillingPeriod.trialEnd(start, { trial_period_unit: "month", trial_period_count: 1 }))).toBe("2024-02-29")
    expect(iso(BillingPeriod.trialEnd(start, { trial_period_unit: "year", trial_period_count: 1 }))).toBe("2025-01-31")
  })

  prop(
    "periods are contiguous and strictly increasing for any anchor and unit",
    [
      fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2090, 0, 1) }),
      fc.constantFrom<BillingPeriod.BillingCycleUnit>("week", "month", "quarter", "year"),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 40 })
    ],
    ([anchor, unit, count, from]) => {
      const schedule = { anchor, unit, count } as const
      const ps = BillingPeriod.periods(schedule, from, 30)
      expect(ps).toHaveLength(30)
      ps.forEach((p, i) => {
        expect(p.end).toBeGreaterThan(p.start)
        if (i > 0) expect(p.start).toBe(ps[i - 1]!.end)
        const mid = p.start + Math.floor((p.end - p.start) / 2)
        expect(Option.getOrThrow(BillingPeriod.periodAt(schedule, mid)).index).toBe(p.index)
        expect(Option.getOrThrow(BillingPeriod.periodAt(schedule, p.start)).index).toBe(p.index)
      })
    }
  )
})
