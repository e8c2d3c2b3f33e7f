// Pure core: proration, tier rating and whole-invoice building per second, against plain
// bigint arithmetic computing the same numbers.
import { Decimal, Invoicing, Money, Pricing, Proration } from "@recur/core"
import { Result, Option } from "effect"
import { Bench } from "tinybench"
import { record } from "./report.js"

export const run = async () => {
  const period = { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 1, 1) }
  const paid = Money.make(1000n, "USD")
  const next = Money.make(2000n, "USD")
  const policy = Proration.defaultPolicy
  let at = period.start
  const tiers: ReadonlyArray<Pricing.Tier> = [
    { min: 0n, max: Option.some(100n), unitPrice: Decimal.make(20n, 2), flatAmount: Decimal.make(0n) },
    { min: 101n, max: Option.some(500n), unitPrice: Decimal.make(15n, 2), flatAmount: Decimal.make(0n) },
    { min: 501n, max: Option.none(), unitPrice: Decimal.make(10n, 2), flatAmount: Decimal.make(0n) }
  ]
  const model = Pricing.Model.Tiered({ mode: "graduated", tiers })
  const lines: ReadonlyArray<Invoicing.Line> = [
    { kind: "subscription", description: "Pro", quantity: 3n, amount: Money.make(9000n, "USD") },
    { kind: "usage", description: "API calls", quantity: 1234n, amount: Money.make(7250n, "USD") },
    { kind: "proration_credit", description: "credit", quantity: 1n, amount: Money.make(-500n, "USD") }
  ]
  const discounts = [Invoicing.DiscountRule.Percentage({ discount_id: "d1", discount_code: "TEN", basisPoints: 1000n })]
  const tax = Invoicing.flatTax("Sales tax", 82_500n)
  let sink = 0n

  // the same formulas in raw bigint: half-even division, as Recur rounds
  const halfEven = (n: bigint, d: bigint) => {
    const q = n / d
    const r = n % d
    const twice = 2n * r
    return twice > d || (twice === d && q % 2n !== 0n) ? q + 1n : q
  }
  const rawProrate = (t: number) => {
    const unused = BigInt(Math.floor((period.end - t) / 1000))
    const total = BigInt(Math.floor((period.end - period.start) / 1000))
    const credit = halfEven(1000n * unused, total)
    const charge = halfEven(2000n * unused, total)
    return charge - credit
  }
  const rawRate = (q: bigint) => {
    // cents × 100 (unit prices have 2 decimals of a major unit)
    const a = (q < 100n ? q : 100n) * 20n
    const b = q > 100n ? ((q < 500n ? q : 500n) - 100n) * 15n : 0n
    const c = q > 500n ? (q - 500n) * 10n : 0n
    return a + b + c
  }
  const rawInvoice = () => {
    const subtotal = 9000n + 7250n - 500n
    const discounted = subtotal - halfEven(subtotal * 1000n, 10000n)
    return discounted + halfEven(discounted * 825n, 10000n)
  }

  const bench = new Bench({ time: Number(process.env.BENCH_CORE_MS ?? 1500) })
  bench
    .add("proration (Recur)", () => {
      at = at + 3_600_000 > period.end ? period.start : at + 3_600_000
      sink += Result.getOrThrow(Proration.prorate({ policy, period, at, paid, newAmount: next, creditMode: "refund" }))
        .net.amount
    })
    .add("proration (raw bigint)", () => {
      at = at + 3_600_000 > period.end ? period.start : at + 3_600_000
      sink += rawProrate(at)
    })
    .add("tier rating (Recur)", () => {
      sink += Pricing.rate(model, 1234n, "USD").amount.amount
    })
    .add("tier rating (raw bigint)", () => {
      sink += rawRate(1234n)
    })
    .add("invoice (Recur)", () => {
      sink += Invoicing.total({ invoice_type: "renewal", cycle_index: 3, currency: "USD", lines, discounts, tax }).total
        .amount
    })
    .add("invoice (raw bigint)", () => {
      sink += rawInvoice()
    })
  await bench.run()
  const hz = (name: string) =>
    (bench.tasks.find((t) => t.name === name)!.result as { throughput: { mean: number } }).throughput.mean
  record({
    bench: "5. pure core: proration",
    recur: hz("proration (Recur)"),
    baseline: hz("proration (raw bigint)"),
    unit: "ops/s",
    goal: "≥ 25 %"
  })
  record({
    bench: "5. pure core: graduated 3-tier rating",
    recur: hz("tier rating (Recur)"),
    baseline: hz("tier rating (raw bigint)"),
    unit: "ops/s"
  })
  record({
    bench: "5. pure core: whole invoice (3 lines, discount, tax)",
    recur: hz("invoice (Recur)"),
    baseline: hz("invoice (raw bigint)"),
    unit: "ops/s"
  })
  if (sink === -1n) console.log(sink)
}
