import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Money, StripeCurrency } from "../../src/index.js"

describe("StripeCurrency", () => {
  it("sends ISK with two decimals, MGA without Recur's one, three-decimal currencies ending in 0", {
    timeout: 10_000
  }, () => {
    expect(StripeCurrency.toStripe(Money.make(4990n, "ISK")).amount).toBe(499000n)
    expect(StripeCurrency.toStripe(Money.make(100n, "MGA")).amount).toBe(10n)
    expect(StripeCurrency.toStripe(Money.make(3000n, "JPY")).amount).toBe(3000n)
    expect(StripeCurrency.toStripe(Money.make(3000n, "USD")).amount).toBe(3000n)
    expect(StripeCurrency.toStripe(Money.make(12_500n, "HUF")).amount).toBe(12_500n)
    const kwd = StripeCurrency.toStripe(Money.make(12_345n, "KWD"))
    expect(kwd.amount).toBe(12_340n)
    expect(kwd.sent).toEqual(Money.make(12_340n, "KWD"))
    expect(kwd.rounded).toEqual(Money.make(5n, "KWD"))
    // down, never up: 10.5 MGA (Recur's 105) is charged 10 MGA
    expect(StripeCurrency.toStripe(Money.make(105n, "MGA")).amount).toBe(10n)
    expect(StripeCurrency.fromStripe(499000, "isk")).toEqual(Money.make(4990n, "ISK"))
    expect(StripeCurrency.fromStripe(10, "mga")).toEqual(Money.make(100n, "MGA"))
    expect(StripeCurrency.fromStripe(12_340, "kwd")).toEqual(Money.make(12_340n, "KWD"))
  })

  it("knows Stripe's minimum charges and its precision rules", { timeout: 10_000 }, () => {
    expect(StripeCurrency.minimumCharge("USD")).toEqual(Money.make(50n, "USD"))
    expect(StripeCurrency.minimumCharge("GBP")).toEqual(Money.make(30n, "GBP"))
    expect(StripeCurrency.minimumCharge("JPY")).toEqual(Money.make(50n, "JPY"))
    expect(StripeCurrency.minimumCharge("HUF")).toEqual(Money.make(17_500n, "HUF"))
    expect(StripeCurrency.minimumCharge("KWD")).toBeUndefined()
    expect(StripeCurrency.precisionOk(0n, "USD")).toBe(false)
    expect(StripeCurrency.precisionOk(12_345n, "KWD")).toBe(false)
    expect(StripeCurrency.precisionOk(12_340n, "KWD")).toBe(true)
    expect(StripeCurrency.precisionOk(49_950n, "ISK")).toBe(false)
    expect(StripeCurrency.precisionOk(499_000n, "ISK")).toBe(true)
    expect(StripeCurrency.ruleOf("xyz")).toBeUndefined()
    // every currency of the table is one Recur knows
    for (const code of StripeCurrency.codes()) expect(Money.exponentOf(code)).toBeGreaterThanOrEqual(0)
    expect(StripeCurrency.codes().length).toBeGreaterThan(130)
  })

  it("round trip Recur → Stripe → Recur, over every currency: never more, off by under one step, always a valid amount", {
    timeout: 30_000
  }, () => {
    const codes = StripeCurrency.codes()
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.bigInt({ min: 0n, max: 10n ** 12n }), (code, minor) => {
        const money = Money.make(minor, code)
        const out = StripeCurrency.toStripe(money)
        const back = StripeCurrency.fromStripe(out.amount, code)
        // exact back: what is said to be sent is what Stripe receives
        expect(back).toEqual(out.sent)
        // never more than asked (an over-charge, a refund beyond the charge)
        expect(back.amount <= minor).toBe(true)
        expect(out.rounded.amount).toBe(minor - back.amount)
        // off by less than one step of Stripe's, in Recur's units
        const rule = StripeCurrency.ruleOf(code)!
        const shift = rule.decimals - Money.exponentOf(code)
        const oneStep = shift >= 0 ? rule.step / 10n ** BigInt(shift) : rule.step * 10n ** BigInt(-shift)
        expect(out.rounded.amount < (oneStep > 1n ? oneStep : 1n)).toBe(true)
        // an amount Stripe takes (its step), or zero
        expect(out.amount === 0n || StripeCurrency.precisionOk(out.amount, code)).toBe(true)
        // an amount Stripe sends comes back and goes out unchanged
        expect(StripeCurrency.toStripe(back).amount).toBe(out.amount)
      }),
      { seed: 30_7, numRuns: 2000 }
    )
  })
})
