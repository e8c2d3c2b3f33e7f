/**
 * Issue 34: what an invoice takes of the customer's other credit (`SharedCredit.capped`): never
 * more than is free or than it charges, and never a remainder under the processor's minimum.
 */
import { describe, expect, it } from "@effect/vitest"
import { SharedCredit } from "@recur/core"
import fc from "fast-check"
import { prop } from "../prop.js"

const amount = fc.bigInt({ min: 0n, max: 100_000n })

describe("SharedCredit.capped", () => {
  it("takes all it charges, all that is free, or what leaves the minimum", () => {
    // 10.00 charged, 9.70 free, 0.50 minimum: 9.50 taken, 0.50 charged
    expect(SharedCredit.capped(970n, 1000n, 50n)).toBe(950n)
    expect(SharedCredit.capped(2000n, 1000n, 50n)).toBe(1000n)
    expect(SharedCredit.capped(400n, 1000n, 50n)).toBe(400n)
    // a charge under the minimum: all or nothing
    expect(SharedCredit.capped(20n, 30n, 50n)).toBe(0n)
    expect(SharedCredit.capped(30n, 30n, 50n)).toBe(30n)
    expect(SharedCredit.capped(0n, 1000n, 50n)).toBe(0n)
    expect(SharedCredit.capped(500n, 0n, 50n)).toBe(0n)
  })

  prop(
    "bounded by what is free and what is charged; the rest 0 or at least the minimum",
    [amount, amount, amount],
    ([free, wanted, minimum]) => {
      const taken = SharedCredit.capped(free, wanted, minimum)
      expect(taken >= 0n && taken <= free && taken <= wanted).toBe(true)
      const left = wanted - taken
      expect(left === 0n || left >= minimum || taken === 0n).toBe(true)
      // the most it can take under those rules
      if (free >= wanted) expect(taken).toBe(wanted)
    },
    { numRuns: 500 }
  )
})
