import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Option, Result } from "effect"
import fc from "fast-check"
import { Decimal, Money, Pricing } from "../../src/index.js"

// Issue 35: rating a billable metric's decimal value (at most 6 decimals), rounded once.
const d = (s: string) => Result.getOrThrow(Decimal.parse(s))
const tier = (min: bigint, max: bigint | null, unit: string, flat = "0"): Pricing.Tier => ({
  min,
  max: max === null ? Option.none() : Option.some(max),
  unitPrice: d(unit),
  flatAmount: d(flat)
})
const fmt = (m: Money.Money) => Money.format(m)
const threeTiers = [tier(0n, 100n, "0.20"), tier(101n, 500n, "0.15"), tier(501n, null, "0.10")]

describe("Pricing.rateValue", () => {
  const volume = Pricing.Model.Tiered({ mode: "volume", tiers: threeTiers })
  const graduated = Pricing.Model.Tiered({ mode: "graduated", tiers: threeTiers })
  const perCall = Pricing.Model.PerUnit({ unitPrice: d("0.002"), blockSize: 1n })
  const perGbHour = Pricing.Model.PerUnit({ unitPrice: d("0.0005"), blockSize: 1n })
  const blocks = Pricing.Model.PerUnit({ unitPrice: d("1.50"), blockSize: 100n })
  const packs = Pricing.Model.Package({ price: d("5"), size: 1000n })

  it.each([
    // per unit: the unit price × the value, rounded once (2.501 → 2.50; 0.36 exactly)
    [perCall, "1250.5", "2.50"],
    [perGbHour, "720", "0.36"],
    // half-even at the one rounding step: 1.25 cents → 1; 1.5 → 2; 0.5 → 0
    [Pricing.Model.PerUnit({ unitPrice: d("0.005"), blockSize: 1n }), "2.5", "0.01"],
    [Pricing.Model.PerUnit({ unitPrice: d("0.005"), blockSize: 1n }), "3", "0.02"],
    [Pricing.Model.PerUnit({ unitPrice: d("0.01"), blockSize: 1n }), "0.5", "0.00"],
    [Pricing.Model.PerUnit({ unitPrice: d("0.01"), blockSize: 1n }), "1.5", "0.02"],
    // blocks and packages: the value rounded up to whole blocks
    [blocks, "100.000001", "3.00"],
    [blocks, "100", "1.50"],
    [packs, "0.5", "5.00"],
    [packs, "0", "0.00"],
    // tiers over the decimal value: 100.5 is in the second tier (above 100)
    [graduated, "100.5", "20.08"],
    [volume, "100.5", "15.08"],
    [volume, "100", "20.00"],
    [graduated, "450.25", "72.54"],
    [volume, "0.000001", "0.00"]
  ] as const)("%# rates %s", (model, value, expected) => {
    expect(fmt(Pricing.rateValue(model, d(value), "USD").amount)).toBe(expected)
  })

  it("graduated lines split a decimal value at the tiers' bounds", () => {
    const rated = Pricing.rateValue(graduated, d("100.5"), "USD")
    expect(rated.lines.map((l) => [l.description, Decimal.format(l.units)])).toEqual([
      ["tier 0–100", "100"],
      ["tier 101–500", "0.5"]
    ])
    expect(Decimal.format(Decimal.normalize(rated.exact))).toBe("20.075")
  })

  it("refuses a negative value", () => {
    expect(() => Pricing.rateValue(perCall, d("-1"), "USD")).toThrow(RangeError)
  })
})

// ------------------------------------------------------------------ against a simple reference

const MICRO = 1_000_000n

/** Half-even n / d (d > 0), written for the test. */
const halfEven = (n: bigint, den: bigint): bigint => {
  const q = n / den
  const r = n % den
  return 2n * r > den || (2n * r === den && q % 2n === 1n) ? q + 1n : q
}

type RefModel =
  | { readonly tag: "per_unit"; readonly micros: bigint; readonly block: bigint }
  | { readonly tag: "package"; readonly micros: bigint; readonly size: bigint }
  | {
      readonly tag: "tiers"
      readonly mode: Pricing.TierMode
      /** Upper bounds of every tier but the last (increasing); prices in millionths; flat fees in cents. */
      readonly bounds: ReadonlyArray<bigint>
      readonly micros: ReadonlyArray<bigint>
      readonly flats: ReadonlyArray<bigint>
    }

/** The amount in cents of `vm` millionths of a unit, from the definitions in docs/usage.md. */
const reference = (m: RefModel, vm: bigint): bigint => {
  // every amount as a fraction of 10^12 (price millionths × value millionths), then cents
  const D = MICRO * MICRO
  if (vm === 0n) return 0n
  if (m.tag === "per_unit") {
    const units = m.block === 1n ? vm : ((vm + m.block * MICRO - 1n) / (m.block * MICRO)) * MICRO
    return halfEven(m.micros * units * 100n, D)
  }
  if (m.tag === "package") {
    const packs = (vm + m.size * MICRO - 1n) / (m.size * MICRO)
    return halfEven(m.micros * packs * MICRO * 100n, D)
  }
  const n = m.micros.length
  const lower = (i: number) => (i === 0 ? 0n : m.bounds[i - 1]!) * MICRO
  const upper = (i: number) => (i < n - 1 ? m.bounds[i]! * MICRO : undefined)
  let num = 0n
  if (m.mode === "volume") {
    const i = [...Array(n).keys()].find((k) => upper(k) === undefined || vm <= upper(k)!)!
    num = m.micros[i]! * vm * 100n + m.flats[i]! * D
  } else {
    for (let i = 0; i < n; i++) {
      const hi = upper(i) === undefined || vm < upper(i)! ? vm : upper(i)!
      const part = hi - lower(i)
      if (part > 0n) num += m.micros[i]! * part * 100n + m.flats[i]! * D
    }
  }
  return halfEven(num, D)
}

const toModel = (m: RefModel): Pricing.Model => {
  const price = (micros: bigint) => Decimal.make(micros, 6)
  if (m.tag === "per_unit") return Pricing.Model.PerUnit({ unitPrice: price(m.micros), blockSize: m.block })
  if (m.tag === "package") return Pricing.Model.Package({ price: price(m.micros), size: m.size })
  const tiers: Array<Pricing.Tier> = m.micros.map((micros, i) => ({
    min: i === 0 ? 0n : m.bounds[i - 1]! + 1n,
    max: i < m.micros.length - 1 ? Option.some(m.bounds[i]!) : Option.none(),
    unitPrice: price(micros),
    flatAmount: Decimal.make(m.flats[i]!, 2)
  }))
  return Pricing.Model.Tiered({ mode: m.mode, tiers })
}

const priceMicros = fc.bigInt({ min: 0n, max: 50_000_000n })
const refModel: fc.Arbitrary<RefModel> = fc.oneof(
  fc.record({
    tag: fc.constant("per_unit" as const),
    micros: priceMicros,
    block: fc.constantFrom(1n, 1n, 10n, 100n, 1000n)
  }),
  fc.record({ tag: fc.constant("package" as const), micros: priceMicros, size: fc.constantFrom(1n, 5n, 1000n) }),
  fc.uniqueArray(fc.bigInt({ min: 1n, max: 100_000n }), { minLength: 0, maxLength: 4 }).chain((bounds) => {
    const sorted = [...bounds].sort((a, b) => (a < b ? -1 : 1))
    return fc.record({
      tag: fc.constant("tiers" as const),
      mode: fc.constantFrom("graduated" as const, "volume" as const),
      bounds: fc.constant(sorted),
      micros: fc.array(priceMicros, { minLength: sorted.length + 1, maxLength: sorted.length + 1 }),
      flats: fc.array(fc.bigInt({ min: 0n, max: 5000n }), {
        minLength: sorted.length + 1,
        maxLength: sorted.length + 1
      })
    })
  })
)
/** A value with up to 6 decimals, up to 200,000 units (whole values often). */
const valueMicros = fc.oneof(
  fc.bigInt({ min: 0n, max: 200_000n }).map((v) => v * MICRO),
  fc.bigInt({ min: 0n, max: 200_000n * MICRO })
)

describe("Pricing.rateValue against a reference", () => {
  prop(
    "the amount is the reference's: exact lines, rounded once half-even to cents",
    [refModel, valueMicros],
    ([m, vm]) => {
      const rated = Pricing.rateValue(toModel(m), Decimal.make(vm, 6), "USD")
      expect(rated.amount).toEqual(Money.make(reference(m, vm), "USD"))
    },
    { numRuns: 400 }
  )

  prop(
    "on a whole value, the amount is today's integer rating",
    [refModel, fc.bigInt({ min: 0n, max: 200_000n })],
    ([m, v]) => {
      const model = toModel(m)
      expect(Pricing.rateValue(model, Decimal.make(v), "USD").amount).toEqual(Pricing.rate(model, v, "USD").amount)
      expect(Pricing.rateValue(model, Decimal.make(v * MICRO, 6), "USD").amount).toEqual(
        Pricing.rate(model, v, "USD").amount
      )
    },
    { numRuns: 300 }
  )
})
