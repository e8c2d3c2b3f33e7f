/**
 * `pnpm start` until the standalone server lands: the pure core answering the questions a
 * billing engine must get exactly right.
 */
import { Result, Option } from "effect"
import { BillingPeriod, Decimal, Money, Pricing, Proration } from "../src/index.js"

const d = (s: string) => Result.getOrThrow(Decimal.parse(s))
const tier = (min: bigint, max: bigint | null, unit: string, flat = "0"): Pricing.Tier => ({
  min,
  max: Option.fromNullishOr(max),
  unitPrice: d(unit),
  flatAmount: d(flat)
})

console.log("Recur — the standalone REST server is not built yet (see README, Status).")
console.log("This is the pure billing core it will run on:\n")

const tiers = [tier(0n, 100n, "0.20"), tier(101n, 500n, "0.15"), tier(501n, null, "0.10")]
for (const mode of ["volume", "graduated"] as const) {
  const rated = Pricing.rate(Pricing.Model.Tiered({ mode, tiers }), 450n, "USD")
  console.log(`450 units, ${mode.padEnd(9)} tiers 0.20/0.15/0.10 → ${Money.format(rated.amount)} USD`)
}

const schedule = { anchor: Date.UTC(2024, 0, 31), unit: "month", count: 1 } as const
const starts = BillingPeriod.periods(schedule, 0, 4).map((p) => new Date(p.start).toISOString().slice(0, 10))
console.log(`Monthly from Jan 31: ${starts.join(" → ")}`)

const change = Result.getOrThrow(
  Proration.prorate({
    policy: Proration.defaultPolicy,
    period: { start: Date.UTC(2024, 0, 1), end: Date.UTC(2024, 1, 1) },
    at: Date.UTC(2024, 0, 16),
    paid: Money.make(1000n, "USD"),
    newAmount: Money.make(2000n, "USD"),
    creditMode: "refund"
  })
)
console.log(
  `$10 → $20 on Jan 16: credit ${Money.format(change.credit)}, charge ${Money.format(change.charge)}, net ${Money.format(change.net)} (${change.outcome._tag})`
)
const jpy = Result.getOrThrow(Money.convert(Money.make(3000n, "USD"), d("150.5"), "JPY"))
console.log(`30.00 USD at merchant_rate 150.5 → ${Money.format(jpy)} JPY`)
