import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { Decimal, Money } from "../../src/index.js"

const right = <A, E>(e: Result.Result<A, E>): A => {
  if (Result.isFailure(e)) throw new Error(`expected Right, got ${JSON.stringify(e.failure)}`)
  return e.success
}
const leftTag = <A, E extends { _tag: string }>(e: Result.Result<A, E>): string =>
  Result.isFailure(e) ? e.failure._tag : "Right"

describe("Money.parse / format", () => {
  it.each([
    ["30.00", "USD", 3000n, "30.00"],
    ["30", "USD", 3000n, "30.00"],
    ["30.5", "USD", 3050n, "30.50"],
    ["3000", "JPY", 3000n, "3000"],
    ["1.500", "KWD", 1500n, "1.500"],
    ["0.001", "KWD", 1n, "0.001"],
    ["0", "EUR", 0n, "0.00"]
  ])("parses %s %s", (input, currency, minor, formatted) => {
    const m = right(Money.parse(input, currency))
    expect(m).toEqual({ amount: minor, currency })
    expect(Money.format(m)).toBe(formatted)
  })

  it("rejects more digits than the currency has", () => {
    const e = Money.parse("30.001", "USD")
    expect(Result.isFailure(e) && e.failure._tag === "InvalidAmount" && e.failure.reason).toBe("too_many_decimals")
    expect(leftTag(Money.parse("3000.5", "JPY"))).toBe("InvalidAmount")
    expect(leftTag(Money.parse("1.5000", "KWD"))).toBe("InvalidAmount")
  })

  it("rejects negatives unless allowed, non-numeric text and unknown currencies", () => {
    const neg = Money.parse("-1.00", "USD")
    expect(Result.isFailure(neg) && neg.failure._tag === "InvalidAmount" && neg.failure.reason).toBe("negative")
    expect(right(Money.parse("-1.00", "USD", { allowNegative: true })).amount).toBe(-100n)
    for (const bad of ["abc", "", "1e3", "1,00", " 1", "0x10", "1.", ".5", "NaN"]) {
      expect(leftTag(Money.parse(bad, "USD"))).toBe("InvalidAmount")
    }
    expect(leftTag(Money.parse("1.00", "XYZ"))).toBe("UnknownCurrency")
    expect(leftTag(Money.parse("1.00", "usd"))).toBe("UnknownCurrency")
  })

  it("knows ISO 4217 exponents", () => {
    expect(Money.exponentOf("USD")).toBe(2)
    expect(Money.exponentOf("JPY")).toBe(0)
    expect(Money.exponentOf("KWD")).toBe(3)
    expect(Money.currencyCodes().length).toBeGreaterThan(150)
  })

  prop(
    "parse(format(x)) = x for every currency",
    [fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.constantFrom("USD", "JPY", "KWD", "EUR", "BHD", "CLP", "CLF")],
    ([amount, currency]) => {
      const m = Money.make(amount, currency)
      expect(right(Money.parse(Money.format(m), currency))).toEqual(m)
    }
  )
})

describe("Money arithmetic", () => {
  const usd = (n: bigint) => Money.make(n, "USD")
  it("adds, subtracts and compares within a currency", () => {
    expect(right(Money.add(usd(150n), usd(250n)))).toEqual(usd(400n))
    expect(right(Money.subtract(usd(150n), usd(250n)))).toEqual(usd(-100n))
    expect(right(Money.compare(usd(1n), usd(2n)))).toBe(-1)
    expect(right(Money.sum("USD", [usd(1n), usd(2n), usd(3n)]))).toEqual(usd(6n))
  })
  it("fails with a typed CurrencyMismatch, never a thrown error", () => {
    const jpy = Money.make(1n, "JPY")
    expect(leftTag(Money.add(usd(1n), jpy))).toBe("CurrencyMismatch")
    expect(leftTag(Money.subtract(usd(1n), jpy))).toBe("CurrencyMismatch")
    expect(leftTag(Money.compare(usd(1n), jpy))).toBe("CurrencyMismatch")
    expect(leftTag(Money.sum("USD", [usd(1n), jpy]))).toBe("CurrencyMismatch")
  })
})

describe("Money.round (the one rounding step)", () => {
  it.each([
    [25n, 1, 2n],
    [35n, 1, 4n],
    [-25n, 1, -2n],
    [-35n, 1, -4n],
    [251n, 2, 3n],
    [249n, 2, 2n],
    [4n, 0, 4n]
  ])("rounds %s × 10^-%s half-even to %s", (value, scale, expected) => {
    expect(Money.round({ minor: { value, scale }, currency: "USD" }).amount).toBe(expected)
  })

  prop(
    "is half-even and idempotent",
    [fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), fc.integer({ min: 0, max: 6 })],
    ([value, scale]) => {
      const once = Money.round({ minor: { value, scale }, currency: "USD" })
      const twice = Money.round({ minor: { value: once.amount, scale: 0 }, currency: "USD" })
      expect(twice).toEqual(once)
      // |exact - rounded| ≤ 1/2 and on an exact tie the result is even
      const unit = 10n ** BigInt(scale)
      const diff = value - once.amount * unit
      const absDiff2 = (diff < 0n ? -diff : diff) * 2n
      expect(absDiff2 <= unit).toBe(true)
      if (absDiff2 === unit && scale > 0) expect(once.amount % 2n).toBe(0n)
    }
  )
})

describe("Money.allocate", () => {
  it("splits so parts sum to the whole", () => {
    expect(Money.allocate(Money.make(1000n, "USD"), [1n, 1n, 1n]).map((m) => m.amount)).toEqual([334n, 333n, 333n])
  })
  prop(
    "parts always sum to the total",
    [
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      fc.array(fc.bigInt({ min: 1n, max: 1000n }), { minLength: 1, maxLength: 12 })
    ],
    ([amount, ratios]) => {
      const parts = Money.allocate(Money.make(amount, "USD"), ratios)
      expect(parts.length).toBe(ratios.length)
      expect(parts.reduce((a, p) => a + p.amount, 0n)).toBe(amount)
    }
  )
})

describe("Money.convert (merchant_rate: 1 primary = X target)", () => {
  it("converts USD to JPY and to KWD with one half-even rounding", () => {
    expect(right(Money.convert(Money.make(3000n, "USD"), right(Decimal.parse("150.5")), "JPY"))).toEqual(
      Money.make(4515n, "JPY")
    )
    expect(right(Money.convert(Money.make(1000n, "USD"), right(Decimal.parse(0.307)), "KWD"))).toEqual(
      Money.make(3070n, "KWD")
    )
    // 3000 JPY at 0.0067 USD per JPY = 20.10 USD
    expect(right(Money.convert(Money.make(3000n, "JPY"), right(Decimal.parse("0.0067")), "USD"))).toEqual(
      Money.make(2010n, "USD")
    )
    // 0.125 → half-even to 0.12
    expect(right(Money.convert(Money.make(100n, "USD"), right(Decimal.parse("0.125")), "EUR"))).toEqual(
      Money.make(12n, "EUR")
    )
  })
  it("rejects an unknown target", () => {
    expect(leftTag(Money.convert(Money.make(1n, "USD"), Decimal.make(1n), "ZZZ"))).toBe("UnknownCurrency")
  })
})

describe("Decimal", () => {
  it("reads numbers in their shortest decimal form, never as binary floats", () => {
    expect(right(Decimal.parse(0.1))).toEqual({ value: 1n, scale: 1 })
    expect(right(Decimal.parse(1e-7))).toEqual({ value: 1n, scale: 7 })
    expect(right(Decimal.parse("7.250"))).toEqual({ value: 725n, scale: 2 })
    expect(right(Decimal.parse(1.5e21))).toEqual({ value: 1500000000000000000000n, scale: 0 })
    expect(Result.isFailure(Decimal.parse(Number.NaN))).toBe(true)
    expect(Result.isFailure(Decimal.parse("1.2.3"))).toBe(true)
  })
  it("formats and compares exactly", () => {
    expect(Decimal.format({ value: 4n, scale: 4 })).toBe("0.0004")
    expect(Decimal.format({ value: -1505n, scale: 1 })).toBe("-150.5")
    expect(Decimal.compare(Decimal.make(1n, 1), Decimal.make(10n, 2))).toBe(0)
  })
  prop("divideHalfEven matches exact rounding", [fc.bigInt(), fc.bigInt({ min: 1n, max: 10n ** 9n })], ([n, d]) => {
    const q = Decimal.divideHalfEven(n, d)
    const r2 = (n - q * d) * 2n
    expect(r2 <= d && r2 >= -d).toBe(true)
    if (r2 === d || r2 === -d) expect(q % 2n).toBe(0n)
  })
})
