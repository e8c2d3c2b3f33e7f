import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Result, Option } from "effect"
import fc from "fast-check"
import { Decimal, Money, Pricing } from "../../src/index.js"

const d = (s: string) => Result.getOrThrow(Decimal.parse(s))
const tier = (min: bigint, max: bigint | null, unit: string, flat = "0"): Pricing.Tier => ({
  min,
  max: max === null ? Option.none() : Option.some(max),
  unitPrice: d(unit),
  flatAmount: d(flat)
})
const fmt = (m: Money.Money) => Money.format(m)

const threeTiers = [tier(0n, 100n, "0.20"), tier(101n, 500n, "0.15"), tier(501n, null, "0.10")]
const apiTiers = [
  tier(0n, 10_000n, "0.0010", "10.00"),
  tier(10_001n, 50_000n, "0.0008", "10.00"),
  tier(50_001n, 100_000n, "0.0006", "10.00"),
  tier(100_001n, null, "0.0004", "10.00")
]

describe("Pricing.Tiered", () => {
  const volume = Pricing.Model.Tiered({ mode: "volume", tiers: threeTiers })
  const graduated = Pricing.Model.Tiered({ mode: "graduated", tiers: threeTiers })

  it.each([
    [volume, 450n, "67.50"],
    [graduated, 450n, "72.50"],
    [volume, 0n, "0.00"],
    [graduated, 0n, "0.00"],
    [volume, 100n, "20.00"],
    [volume, 101n, "15.15"],
    [graduated, 101n, "20.15"],
    [graduated, 600n, "90.00"],
    [volume, 600n, "60.00"]
  ] as const)("%# rates %s units", (model, units, expected) => {
    expect(fmt(Pricing.rate(model, units, "USD").amount)).toBe(expected)
  })

  it("volume tiers with a flat fee: 65,000 API calls cost 49.00", () => {
    const rated = Pricing.rate(Pricing.Model.Tiered({ mode: "volume", tiers: apiTiers }), 65_000n, "USD")
    expect(fmt(rated.amount)).toBe("49.00")
    expect(rated.lines).toHaveLength(1)
  })

  it("graduated tiers add the flat amount of every tier touched", () => {
    const rated = Pricing.rate(Pricing.Model.Tiered({ mode: "graduated", tiers: apiTiers }), 65_000n, "USD")
    // 10,000 × 0.0010 + 40,000 × 0.0008 + 15,000 × 0.0006 + 3 × 10.00 = 10 + 32 + 9 + 30
    expect(fmt(rated.amount)).toBe("81.00")
    expect(rated.lines.map((l) => l.units)).toEqual([10_000n, 40_000n, 15_000n])
  })

  it("keeps sub-cent unit prices exact until the single rounding", () => {
    const perCall = Pricing.Model.Tiered({ mode: "volume", tiers: [tier(0n, null, "0.0004")] })
    expect(fmt(Pricing.rate(perCall, 1n, "USD").amount)).toBe("0.00")
    expect(fmt(Pricing.rate(perCall, 12n, "USD").amount)).toBe("0.00") // 0.48¢ → 0
    expect(fmt(Pricing.rate(perCall, 13n, "USD").amount)).toBe("0.01") // 0.52¢ → 1
    expect(fmt(Pricing.rate(perCall, 125n, "USD").amount)).toBe("0.05") // 5.0¢
    expect(Decimal.format(Pricing.rate(perCall, 13n, "USD").exact)).toBe("0.0052")
  })

  prop(
    "graduated never charges less than volume's cheapest tier and is monotone in units",
    [fc.bigInt({ min: 0n, max: 200_000n })],
    ([units]) => {
      const g = Pricing.rate(Pricing.Model.Tiered({ mode: "graduated", tiers: threeTiers }), units, "USD")
      const g1 = Pricing.rate(Pricing.Model.Tiered({ mode: "graduated", tiers: threeTiers }), units + 1n, "USD")
      expect(g1.amount.amount >= g.amount.amount).toBe(true)
      expect(g.lines.reduce((a, l) => a + l.units, 0n)).toBe(units)
    }
  )
})

describe("Pricing.Package", () => {
  const pkg = Pricing.Model.Package({ price: d("5.00"), size: 10n })
  it.each([
    [0n, "0.00"],
    [1n, "5.00"],
    [4n, "5.00"],
    [10n, "5.00"],
    [11n, "10.00"],
    [20n, "10.00"],
    [21n, "15.00"]
  ])("%s units bill as whole packages: %s", (units, expected) => {
    expect(fmt(Pricing.rate(pkg, units, "USD").amount)).toBe(expected)
  })
})

describe("Pricing.PerUnit", () => {
  it("bills per block of billing_threshold units, partial blocks rounded up", () => {
    const perBlock = Pricing.Model.PerUnit({ unitPrice: d("0.50"), blockSize: 100n })
    expect(fmt(Pricing.rate(perBlock, 0n, "USD").amount)).toBe("0.00")
    expect(fmt(Pricing.rate(perBlock, 1n, "USD").amount)).toBe("0.50")
    expect(fmt(Pricing.rate(perBlock, 100n, "USD").amount)).toBe("0.50")
    expect(fmt(Pricing.rate(perBlock, 250n, "USD").amount)).toBe("1.50")
    const perUnit = Pricing.Model.PerUnit({ unitPrice: d("3"), blockSize: 1n })
    expect(fmt(Pricing.rate(perUnit, 7n, "JPY").amount)).toBe("21")
  })
})

describe("Pricing.Flat", () => {
  it("multiplies by seats", () => {
    const flat = Pricing.Model.Flat({ price: d("30.00") })
    expect(fmt(Pricing.rate(flat, 1n, "USD").amount)).toBe("30.00")
    expect(fmt(Pricing.rate(flat, 7n, "USD").amount)).toBe("210.00")
    expect(fmt(Pricing.rate(Pricing.Model.Flat({ price: d("1.500") }), 3n, "KWD").amount)).toBe("4.500")
  })
})

describe("Pricing phases and trials", () => {
  const phases: ReadonlyArray<Pricing.Phase> = [
    { periodCount: 2, duePrice: d("5.00") },
    { periodCount: 1, duePrice: d("8.00") }
  ]
  it("intro prices for N periods, then the next phase, then the base price", () => {
    const at = (i: number) => fmt(Money.round(Money.precise(Pricing.phasePrice(phases, d("10.00"), i).price, "USD")))
    expect([0, 1, 2, 3, 12].map(at)).toEqual(["5.00", "5.00", "8.00", "10.00", "10.00"])
    expect(Pricing.phasePrice(phases, d("10.00"), 2).phase).toEqual(Option.some(1))
  })
  it("derives a due price from a discount", () => {
    expect(Decimal.format(Pricing.discountedPrice(d("10.00"), "percentage", d("25"), "USD"))).toBe("7.50")
    expect(Decimal.format(Pricing.discountedPrice(d("9.99"), "percentage", d("50"), "USD"))).toBe("5.00") // 4.995 → 5.00? half-even on 499.5¢ → 500¢
    expect(Decimal.format(Pricing.discountedPrice(d("9.99"), "amount", d("2.5"), "USD"))).toBe("7.49")
    expect(Decimal.format(Pricing.discountedPrice(d("1"), "amount", d("5"), "USD"))).toBe("0")
  })
  it("free trials charge nothing and paid trials charge their amount", () => {
    expect(fmt(Pricing.trialCharge(Pricing.Trial.Free(), "USD"))).toBe("0.00")
    expect(fmt(Pricing.trialCharge(Pricing.Trial.Paid({ amount: d("1.99") }), "USD"))).toBe("1.99")
  })
  it("over_threshold fires when accrued usage reaches the threshold", () => {
    expect(Pricing.thresholdReached(99n, 100n)).toBe(false)
    expect(Pricing.thresholdReached(100n, 100n)).toBe(true)
    expect(Pricing.thresholdReached(5n, 0n)).toBe(false)
  })
})
