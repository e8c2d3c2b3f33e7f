import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, TestClock } from "effect"
import { Ids } from "../src/index.js"

describe("Ids", () => {
  it("encodes a TypeID with the entity prefix and the time", () => {
    const id = Ids.encode("sub", Date.UTC(2026, 10, 22), new Uint8Array(10))
    expect(id).toMatch(/^sub_[0-7][0-9a-hjkmnp-tv-z]{25}$/)
    expect(Ids.timestampOf(id)).toBe(Date.UTC(2026, 10, 22))
    expect(Ids.isValid("sub", id)).toBe(true)
    expect(Ids.isValid("cus", id)).toBe(false)
    expect(Ids.isValid("sub", "sub_nope")).toBe(false)
  })

  it.effect("takes its time from Effect's Clock, so ids sort in scenario order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2024, 0, 31))
      const first = yield* Ids.make(Ids.prefixes.invoice)
      yield* TestClock.adjust("1 millis")
      const second = yield* Ids.make(Ids.prefixes.invoice)
      expect(Ids.timestampOf(first)).toBe(Date.UTC(2024, 0, 31))
      expect(first < second).toBe(true)
    }))

  it("ids of the same millisecond differ", () => {
    const random = () => globalThis.crypto.getRandomValues(new Uint8Array(10))
    const ids = new Set(Array.from({ length: 1000 }, () => Ids.encode("evt", 1, random())))
    expect(ids.size).toBe(1000)
  })

  it("branded schemas check the prefix", () => {
    expect(Schema.is(Ids.SubscriptionId)("sub_01jd")).toBe(true)
    expect(Schema.decodeUnknownEither(Ids.CustomerId)("sub_01jd")._tag).toBe("Left")
    expect(Object.values(Ids.prefixes)).toEqual(expect.arrayContaining(["cus", "sub", "inv", "trd", "pri", "prv", "prd", "cat", "ses", "evt", "we", "ref", "mch"]))
  })
})

describe("Ids.make ordering", () => {
  it.effect("ids made in the same millisecond sort in creation order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2025, 5, 1))
      const ids: Array<string> = []
      for (let i = 0; i < 500; i++) ids.push(yield* Ids.make("sub"))
      expect([...ids].sort()).toEqual(ids)
    }))
})
