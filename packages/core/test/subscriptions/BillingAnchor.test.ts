import { prop } from "../prop.js"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Option, Result } from "effect"
import fc from "fast-check"
import { BillingAnchor, BillingPeriod, Invoicing, Money, Price, Proration } from "../../src/index.js"
import { priceVersion } from "../fixtures.js"

const at = (s: string) => Date.parse(s)
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const priceOf = (amount: string, unit: "week" | "month" | "quarter" | "year", count = 1) =>
  priceVersion({
    price_plan: new Price.PricePlan({
      price_plan_id: "pln_01jd0000000000000000000000",
      plan_name: "Plan",
      billing_cycle_unit: unit,
      billing_cycle_count: count,
      is_infinite: true,
      base_price_val: amount,
      plan_description: "",
      price_plan_tiers: []
    })
  })

/** The first invoice of a checkout paid at `paid` with `anchor`, built as the payment builds it. */
const firstInvoice = (
  pv: Price.PriceVersion,
  policy: string,
  anchor: number,
  behavior: BillingAnchor.Behavior,
  paid: number
) => {
  const first = BillingAnchor.firstPeriod(policy, pv, anchor, behavior, paid)!
  const draft = Result.getOrThrow(
    Invoicing.cycle({
      invoice_type: "initial",
      price: pv,
      cycle_index: 0,
      paidCycles: 0,
      quantity: 1n,
      usage: 0n,
      existing: [],
      share: first.share
    })
  )
  return { ...first, draft }
}

const schedule = (pv: Price.PriceVersion, anchor: number): BillingPeriod.Schedule => ({
  anchor,
  unit: pv.price_plan!.billing_cycle_unit,
  count: pv.price_plan!.billing_cycle_count
})

/** The rows of docs/proration.md's anchor vectors table. */
const vectors = () => {
  const doc = readFileSync(fileURLToPath(new URL("../../../../docs/proration.md", import.meta.url)), "utf8")
  const table = doc.split("<!-- anchor-vectors:start -->")[1]!.split("<!-- anchor-vectors:end -->")[0]!
  return table
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| whole period"))
    .map((l) =>
      l
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim())
    )
}

describe("BillingAnchor", () => {
  it("the vectors in docs/proration.md: share, first invoice and the periods after it", () => {
    const rows = vectors()
    expect(rows.length).toBeGreaterThanOrEqual(8)
    for (const [whole, policy, paid, anchor, behavior, share, amount, ends] of rows) {
      const [price, unit] = whole!.split(" ") as [string, "week" | "month" | "year"]
      const pv = priceOf(price, unit)
      const first = firstInvoice(pv, policy!, at(anchor!), behavior as BillingAnchor.Behavior, at(paid!))
      expect(`${first.share.unused}/${first.share.total}`, whole).toBe(share)
      expect(Money.format(first.draft.total), `${whole} ${policy} ${paid}`).toBe(amount)
      // cycle 0 ends on the anchor in force; cycles 1, 2, 3 end on its anniversaries
      const later = BillingPeriod.periods(schedule(pv, first.anchor), 0, 3).map((p) => day(p.end))
      expect(later.join(", ")).toBe(ends)
    }
  })

  it("the short first period is the intro phase's first cycle, prorated; the next cycles are the intro's second and the base price", () => {
    const pv = priceVersion({
      price_plan: new Price.PricePlan({
        price_plan_id: "pln_x",
        plan_name: "Intro",
        billing_cycle_unit: "month",
        billing_cycle_count: 1,
        is_infinite: true,
        base_price_val: "30.00",
        plan_description: "",
        price_plan_tiers: [
          new Price.PricePlanTier({
            period_count: 2,
            period_unit: "month",
            original_price: "30.00",
            due_price: "",
            discount_type: "percentage",
            discount_value: "50"
          })
        ]
      })
    })
    const first = BillingAnchor.firstPeriod(
      "per_day",
      pv,
      at("2026-02-01T00:00:00Z"),
      "create_prorations",
      at("2026-01-15T00:00:00Z")
    )!
    const bill = (cycle: number, share?: Proration.Fraction) =>
      Money.format(
        Result.getOrThrow(
          Invoicing.cycle({
            invoice_type: cycle === 0 ? "initial" : "renewal",
            price: pv,
            cycle_index: cycle,
            quantity: 1n,
            existing: [],
            ...(share ? { share } : {})
          })
        ).total
      )
    // 15.00 × 17/31 = 8.2258…; cycle 1 is the intro's second, cycle 2 the base price
    expect([bill(0, first.share), bill(1), bill(2)]).toEqual(["8.23", "15.00", "30.00"])
  })

  it("refuses an anchor not after now, more than one interval ahead, with a trial, or on a price without an interval", () => {
    const monthly = priceOf("30.00", "month")
    const now = at("2026-01-15T00:00:00Z")
    expect(BillingAnchor.refusal(now, now, monthly, false)).toMatch(/must be in the future/)
    expect(BillingAnchor.refusal(at("2026-02-15T00:00:01Z"), now, monthly, false)).toMatch(
      /at most one billing interval \(1 month\) after now, 2026-02-15T00:00:00Z/
    )
    expect(BillingAnchor.refusal(at("2026-02-15T00:00:00Z"), now, monthly, false)).toBeUndefined()
    expect(BillingAnchor.refusal(at("2026-02-01T00:00:00Z"), now, monthly, true)).toMatch(/trial/)
    const manual = priceVersion({
      price_plan: new Price.PricePlan({ ...monthly.price_plan!, billing_cycle_unit: "customer-initiated" })
    })
    expect(BillingAnchor.refusal(at("2026-02-01T00:00:00Z"), now, manual, false)).toMatch(/recurring price/)
  })

  it("a change in the short first period prorates over the whole period ending at the anchor", () => {
    const pv = priceOf("30.00", "month")
    const p = Result.getOrThrow(
      Proration.prorate({
        policy: Proration.Policy.PerDay(),
        period: BillingAnchor.wholePeriodBefore(at("2026-02-01T00:00:00Z"), "month", 1),
        at: at("2026-01-20T00:00:00Z"),
        paid: Money.make(3000n, "USD"),
        newAmount: Money.make(6000n, "USD"),
        creditMode: "refund"
      })
    )
    // 12 of 31 days left: the credit (11.61) is what the 16.45 first invoice charged for them
    expect([p.credit.amount, p.charge.amount]).toEqual([1161n, 2323n])
    expect(Option.isSome(BillingPeriod.period(schedule(pv, at("2026-02-01T00:00:00Z")), 0))).toBe(true)
  })

  const policies = fc.oneof(
    fc.constant("per_second"),
    fc.constant("per_day"),
    fc.integer({ min: 28, max: 31 }).map((n) => `fixed_days(${n})`)
  )
  const units = fc.constantFrom("week", "month", "quarter", "year") as fc.Arbitrary<
    "week" | "month" | "quarter" | "year"
  >

  prop(
    "the first amount never exceeds a whole period's, is 0 only when the policy measures no time or it rounds to nothing, and later periods end on the anchor day",
    [
      fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      units,
      fc.integer({ min: 1, max: 3 }),
      policies,
      fc.integer({ min: 1, max: 10_000_000 })
    ],
    ([paid, where, unit, count, policy, minor]) => {
      const pv = priceOf(Money.format(Money.make(BigInt(minor), "USD")), unit, count)
      const latest = BillingPeriod.add(paid, unit, count)
      const anchor = Math.min(latest, paid + 1 + Math.floor(where * (latest - paid - 1)))
      expect(BillingAnchor.refusal(anchor, paid, pv, false)).toBeUndefined()
      const first = firstInvoice(pv, policy, anchor, "create_prorations", paid)
      const amount = first.draft.total.amount
      expect(first.anchor).toBe(anchor)
      expect(amount >= 0n && amount <= BigInt(minor)).toBe(true)
      const measured =
        policy === "per_second"
          ? Math.floor((anchor - paid) / 1000)
          : Math.floor(anchor / 86_400_000) - Math.floor(paid / 86_400_000)
      expect(first.share.unused > 0n).toBe(measured > 0)
      if (amount === 0n) expect(2n * BigInt(minor) * first.share.unused <= first.share.total).toBe(true)
      const free = firstInvoice(pv, policy, anchor, "none", paid)
      expect(free.draft.total.amount).toBe(0n)
      // every period after the first starts and ends on the anchor day (clamped in short months)
      const a = new Date(anchor)
      for (const p of BillingPeriod.periods(schedule(pv, anchor), 0, 6)) {
        const end = new Date(p.end)
        expect(end.getUTCHours() * 60 + end.getUTCMinutes()).toBe(a.getUTCHours() * 60 + a.getUTCMinutes())
        if (unit === "week") expect((p.end - anchor) % (7 * 86_400_000)).toBe(0)
        else {
          const last = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1, 0)).getUTCDate()
          expect(end.getUTCDate()).toBe(Math.min(a.getUTCDate(), last))
        }
      }
    },
    { numRuns: 300 }
  )
})
