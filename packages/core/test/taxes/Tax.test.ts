import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Decimal, GiveBack, Invoicing, Money, Tax, TaxRates } from "../../src/index.js"
import { Result } from "effect"
import { prop } from "../prop.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const units = (text: string) => Tax.parsePercentage(text)!

describe("Tax", () => {
  it("published VAT examples: inclusive amounts carve the tax out, exclusive ones add it", () => {
    // [gross or net, rate, inclusive, tax] — EU VAT rates as member states publish them
    const vectors: ReadonlyArray<readonly [bigint, string, boolean, bigint]> = [
      [11900n, "19", true, 1900n], // Germany: 119.00 gross at 19 % holds 19.00
      [10700n, "7", true, 700n], // Germany, reduced: 107.00 holds 7.00
      [12100n, "21", true, 2100n], // Netherlands: 121.00 holds 21.00
      [12000n, "20", true, 2000n], // France / UK: 120.00 holds 20.00
      [10000n, "19", true, 1597n], // 100.00 gross at 19 %: 15.966… → 15.97
      [1000n, "19", true, 160n], // 10.00 gross: 1.5966… → 1.60
      [10000n, "20", false, 2000n], // 100.00 net at 20 % adds 20.00
      [10000n, "8.875", false, 888n], // New York City: 8.875 → 8.88 (half up)
      [1000n, "7.25", false, 73n], // California: 0.725 → 0.73 (a half cent rounds up)
      [1n, "19", false, 0n], // 0.0019 → 0.00
      [0n, "19", false, 0n]
    ]
    for (const [amount, rate, inclusive, tax] of vectors)
      expect([amount, rate, inclusive, Tax.amountOn(eur(amount), units(rate), inclusive).amount]).toEqual([
        amount,
        rate,
        inclusive,
        tax
      ])
    // in JPY (no minor unit) the one rounding is to whole yen
    expect(Tax.amountOn(Money.make(1100n, "JPY"), units("10"), true)).toEqual(Money.make(100n, "JPY"))
  })

  it("tax rounds half away from zero; everything else half to even", () => {
    const { divideHalfEven, divideHalfUp } = Decimal
    expect([725n, -725n, 724n, 735n, 5n, -5n].map((n) => divideHalfUp(n, 10n))).toEqual([73n, -73n, 72n, 74n, 1n, -1n])
    expect([725n, -725n, 724n, 735n, 5n, -5n].map((n) => divideHalfEven(n, 10n))).toEqual([72n, -72n, 72n, 74n, 0n, 0n])
    expect(divideHalfUp(5n, -2n)).toBe(-3n)
    expect(() => divideHalfUp(1n, 0n)).toThrow(RangeError)
  })

  prop(
    "half up and half even differ only on exact halves, by one, away from zero",
    [fc.bigInt({ min: -1_000_000_000_000n, max: 1_000_000_000_000n }), fc.bigInt({ min: 1n, max: 1_000_000n })],
    ([n, d]) => {
      const up = Decimal.divideHalfUp(n, d)
      const even = Decimal.divideHalfEven(n, d)
      const exactHalf = (n * 2n) % d === 0n && n % d !== 0n
      if (!exactHalf) expect(up).toBe(even)
      else expect(up - even === 0n || up - even === (n < 0n ? -1n : 1n)).toBe(true)
    }
  )

  it("percentages: 0 to 100 with at most 4 decimals, written back in their shortest form", () => {
    expect(
      ["19", "7.25", "8.8750", "0", "100", "0.0001", "100.0000"].map((t) => Tax.formatPercentage(units(t)))
    ).toEqual(["19", "7.25", "8.875", "0", "100", "0.0001", "100"])
    for (const bad of ["100.0001", "19.12345", "-1", "1e2", " 19", "19.", ".5", "", "1000", "NaN"])
      expect([bad, Tax.parsePercentage(bad)]).toEqual([bad, undefined])
  })

  prop("a percentage reads back as it was written", [fc.integer({ min: 0, max: 1_000_000 })], ([u]) => {
    expect(Tax.parsePercentage(Tax.formatPercentage(BigInt(u)))).toBe(BigInt(u))
  })

  prop(
    "inclusive and exclusive agree: the tax added to a net amount is the tax an inclusive rate finds in the sum, within a cent",
    [fc.bigInt({ min: 0n, max: 10_000_000_000n }), fc.integer({ min: 0, max: 1_000_000 })],
    ([net, u]) => {
      const added = Tax.amountOn(eur(net), BigInt(u), false)
      const found = Tax.amountOn(eur(net + added.amount), BigInt(u), true)
      const diff = found.amount - added.amount
      expect(diff >= -1n && diff <= 1n).toBe(true)
      // never more tax than the amount
      expect(found.amount <= net + added.amount).toBe(true)
    }
  )

  it("the rate at an address: its region's before its country's; archived and other countries never", () => {
    const r = (country: string, region: string | null, status = "active", name = `${country}-${region}`) => ({
      country,
      region,
      status,
      name
    })
    const rates = [r("US", null), r("US", "CA"), r("US", "NY", "archived"), r("DE", null, "archived")]
    expect(Tax.choose(rates, { country: "US", region: "CA" })?.name).toBe("US-CA")
    expect(Tax.choose(rates, { country: "US", region: "NY" })?.name).toBe("US-null")
    expect(Tax.choose(rates, { country: "US", region: null })?.name).toBe("US-null")
    expect(Tax.choose(rates, { country: "DE", region: null })).toBeUndefined()
    expect(Tax.choose(rates, null)).toBeUndefined()
    expect(Tax.addressOf(" de ", "DE-BY")).toEqual({ country: "DE", region: "BY" })
    expect(Tax.addressOf("Germany", null)).toBeNull()
    expect(Tax.addressOf("US", "California")).toEqual({ country: "US", region: null })
  })

  it("an invoice with an inclusive tax keeps its total; with an exclusive one it grows by the tax", () => {
    const lines: ReadonlyArray<Invoicing.Line> = [
      { kind: "subscription", description: "Pro", quantity: 1n, amount: eur(11900n) }
    ]
    const base = { invoice_type: "renewal" as const, cycle_index: 1, currency: "EUR", lines }
    const inclusive = Invoicing.total({ ...base, tax: Invoicing.flatTax("VAT", units("19"), true) })
    expect([inclusive.total.amount, inclusive.tax.amount, inclusive.tax_lines[0]?.taxable.amount]).toEqual([
      11900n,
      1900n,
      10000n
    ])
    const exclusive = Invoicing.total({ ...base, tax: Invoicing.flatTax("VAT", units("19"), false) })
    expect([exclusive.total.amount, exclusive.tax.amount]).toEqual([14161n, 2261n])
  })

  prop(
    "partial refunds that add up to what was paid pay back exactly the tax, each its share",
    [
      fc.bigInt({ min: 1n, max: 100_000_000n }),
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 8 })
    ],
    ([net, u, weights]) => {
      const paid = Invoicing.total({
        invoice_type: "renewal",
        cycle_index: 1,
        currency: "EUR",
        lines: [{ kind: "subscription", description: "x", quantity: 1n, amount: eur(net) }],
        tax: Invoicing.flatTax("VAT", BigInt(u))
      })
      const parts = Money.allocate(paid.total, weights.map(BigInt))
      let before = 0n
      let carried = 0n
      for (const part of parts) {
        const lines = GiveBack.refundedTax(paid.tax_lines, paid.total, eur(before), part)
        const t = lines.reduce((a, l) => a + l.amount.amount, 0n)
        expect(t >= 0n && t <= part.amount).toBe(true)
        expect(lines.every((l) => l.inclusive)).toBe(true)
        carried += t
        before += part.amount
      }
      expect(carried).toBe(paid.tax.amount)
    }
  )

  it("a configured table is checked entry by entry, one rate per country and region", () => {
    const ok = TaxRates.checkTable([
      { name: "VAT", percentage: "19", country: "de", inclusive: true },
      { name: "CA", percentage: "7.25", country: "US", region: "US-CA" }
    ])
    expect(Result.getOrThrow(ok).map((r) => [r.country, r.region, r.percentage, r.units, r.inclusive])).toEqual([
      ["DE", null, "19", 190_000n, true],
      ["US", "CA", "7.25", 72_500n, false]
    ])
    const bad = TaxRates.checkTable([
      { name: "VAT", percentage: "19", country: "DE" },
      { name: "x", country: "DE" }
    ])
    expect(Result.isFailure(bad) && bad.failure.param).toBe("tax_rates[1].percentage")
    const twice = TaxRates.checkTable([
      { name: "VAT", percentage: "19", country: "DE" },
      { name: "VAT", percentage: "7", country: "DE" }
    ])
    expect(Result.isFailure(twice) && twice.failure.param).toBe("tax_rates[1]")
  })
})
