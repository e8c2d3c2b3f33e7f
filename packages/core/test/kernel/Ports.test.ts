import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Decimal, Money, Ports } from "../../src/index.js"

describe("Ports defaults", () => {
  it.effect("the static FX table answers listed pairs and identity only", () =>
    Effect.gen(function* () {
      const fx = yield* Ports.FxRates
      expect(yield* fx.rate("USD", "JPY")).toEqual(Option.some(Decimal.make(1505n, 1)))
      expect(yield* fx.rate("EUR", "EUR")).toEqual(Option.some(Decimal.make(1n)))
      expect(Option.isNone(yield* fx.rate("JPY", "USD"))).toBe(true)
    }).pipe(Effect.provide(Ports.fxStatic({ "USD:JPY": "150.5" })))
  )

  it.effect("tax: none by default, or a flat rate rounded once, half up", () =>
    Effect.gen(function* () {
      const none = yield* Effect.provide(Ports.TaxCalculator, Ports.taxNone)
      const input = { merchant_id: "m", customer_id: "c", address: null, taxable: Money.make(1000n, "USD") }
      expect(yield* none.tax(input)).toEqual([])
      const vat = yield* Effect.provide(Ports.TaxCalculator, Ports.taxRate(1925n))
      const [line, ...rest] = yield* vat.tax(input)
      expect(rest).toEqual([])
      expect(line).toMatchObject({ percentage: "19.25", inclusive: false, amount: Money.make(193n, "USD") }) // 1.925, rounded half up as taxes are
    })
  )

  it("Luhn check", () => {
    for (const ok of [
      "4242 4242 4242 4242",
      "4000000000000002",
      "4000000000009995",
      "4000000000003220",
      "4000000000000341",
      "4000000000000119"
    ]) {
      expect(Ports.luhnValid(ok)).toBe(true)
    }
    for (const bad of ["4242424242424241", "1234", "abcd efgh ijkl mnop", ""]) expect(Ports.luhnValid(bad)).toBe(false)
  })
})
