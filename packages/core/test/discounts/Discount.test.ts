import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Discount } from "../../src/index.js"
import { prop } from "../prop.js"

describe("Discount windows", () => {
  it("a 7-day trial then 10 % for 3 cycles: the trial cycle is outside, paid cycles 1, 2, 3 inside, 4 outside", () => {
    const window = { first_cycle: 1, cycles: Discount.cyclesOf({ duration: "repeating", duration_cycles: 3 }) }
    expect([0, 1, 2, 3, 4].map((c) => Discount.inWindow(window, c))).toEqual([false, true, true, true, false])
    expect(Discount.cyclesOf({ duration: "once", duration_cycles: null })).toBe(1)
    expect(Discount.cyclesOf({ duration: "forever", duration_cycles: null })).toBeNull()
  })

  prop(
    "a window covers exactly its cycles: `cycles` of them from `first_cycle`, or all from it when unbounded",
    [fc.integer({ min: 0, max: 50 }), fc.option(fc.integer({ min: 1, max: 120 }), { nil: null })],
    ([first, cycles]) => {
      const covered = Array.from({ length: 300 }, (_, c) => c).filter((c) =>
        Discount.inWindow({ first_cycle: first, cycles }, c)
      )
      // the reference: a plain list of the cycles the discount lasts
      const expected = Array.from({ length: cycles ?? 300 - first }, (_, i) => first + i).filter((c) => c < 300)
      expect(covered).toEqual(expected)
    }
  )

  it("terms written before windows existed apply to every cycle", () => {
    expect([0, 1, 99].every((c) => Discount.inWindow({ first_cycle: null, cycles: null }, c))).toBe(true)
  })

  it("a window still applies from a cycle while it covers it or a later one", () => {
    const window = { first_cycle: 1, cycles: 3 }
    expect([0, 1, 3, 4].map((c) => Discount.stillApplies(window, c))).toEqual([true, true, true, false])
    expect(Discount.stillApplies({ first_cycle: 1, cycles: null }, 99)).toBe(true)
  })

  it("a discount's scope: every product without product_ids, else only its own", () => {
    expect(Discount.covers({ product_ids: [] }, "prd_b")).toBe(true)
    expect(Discount.covers({ product_ids: ["prd_a"] }, "prd_a")).toBe(true)
    expect(Discount.covers({ product_ids: ["prd_a"] }, "prd_b")).toBe(false)
  })
})
