import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { TestClock } from "effect/testing"
import { Ids } from "../../src/index.js"

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
    })
  )

  it("ids of the same millisecond differ", () => {
    const random = () => globalThis.crypto.getRandomValues(new Uint8Array(10))
    const ids = new Set(Array.from({ length: 1000 }, () => Ids.encode("evt", 1, random())))
    expect(ids.size).toBe(1000)
  })

  it("branded schemas check the prefix", () => {
    expect(Schema.is(Ids.SubscriptionId)("sub_01jd")).toBe(true)
    expect(Schema.decodeUnknownResult(Ids.CustomerId)("sub_01jd")._tag).toBe("Failure")
    expect(Object.values(Ids.prefixes)).toEqual(
      expect.arrayContaining(["cus", "sub", "inv", "trd", "pri", "prv", "prd", "cat", "ses", "evt", "we", "ref", "mch"])
    )
  })
})

describe("Ids.make ordering", () => {
  it.effect("ids made in the same millisecond sort in creation order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2025, 5, 1))
      const ids: Array<string> = []
      for (let i = 0; i < 500; i++) ids.push(yield* Ids.make("sub"))
      expect([...ids].sort()).toEqual(ids)
    })
  )
})

describe("Ids: bytes", () => {
  prop(
    "uuidV7Bytes writes the low 48 bits of the time big-endian, version 7 and variant 10",
    [fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.uint8Array({ minLength: 10, maxLength: 10 })],
    ([ms, random]) => {
      const bytes = Ids.uuidV7Bytes(ms, random)
      let expected = BigInt(ms) & 0xffff_ffff_ffffn
      for (let i = 5; i >= 0; i--) {
        expect(bytes[i]).toBe(Number(expected & 0xffn))
        expected >>= 8n
      }
      expect(bytes[6]! >> 4).toBe(7)
      expect(bytes[8]! >> 6).toBe(2)
      expect(bytes.slice(9)).toEqual(random.slice(3))
    }
  )

  it.effect("ids made in a row are distinct and well-formed (pooled random bytes, several refills)", () =>
    Effect.gen(function* () {
      const ids = new Set<string>()
      // 10 bytes an id from a 4 KiB pool: 1,500 ids refill it three times
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      for (let i = 0; i < 1500; i++) ids.add(yield* Ids.make("trd"))
      expect(ids.size).toBe(1500)
      for (const id of ids) expect(Ids.isValid("trd", id)).toBe(true)
    })
  )
})
