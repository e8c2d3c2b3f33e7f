import { prop } from "../prop.js"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import fc from "fast-check"
import { Entitlement } from "../../src/index.js"

const key = fc.constantFrom("seats", "sso", "api_calls", "audit_log", "projects")
const value: fc.Arbitrary<Entitlement.FeatureValue> = fc.oneof(fc.boolean(), fc.integer({ min: 0, max: 1_000_000 }))
const features: fc.Arbitrary<Entitlement.Features> = fc.dictionary(key, value, { maxKeys: 5 })
const status = fc.constantFrom("init", "trial", "active", "past_due", "paused", "unpaid", "canceled", "incomplete")
const policy = fc.subarray([...Entitlement.GrantingStatus.literals])
const held = fc.array(fc.record({ subscription_id: fc.string({ minLength: 1, maxLength: 6 }), status, features }), {
  maxLength: 6
})

/** The rule written out longhand: each feature over the granting subscriptions that hold it. */
const byHand = (granting: ReadonlyArray<Entitlement.GrantingStatus>, subs: ReadonlyArray<Entitlement.Held>) => {
  const out: Record<string, Entitlement.FeatureValue> = {}
  for (const s of subs) {
    if (!(granting as ReadonlyArray<string>).includes(s.status)) continue
    for (const [k, v] of Object.entries(s.features)) {
      const had = out[k]
      if (had === undefined) out[k] = v
      else if (typeof had === "number" || typeof v === "number")
        out[k] = Math.max(typeof had === "number" ? had : -Infinity, typeof v === "number" ? v : -Infinity)
      else out[k] = had || v
    }
  }
  return out
}

describe("Entitlement", () => {
  it("merges booleans by OR and numbers by the largest; a number beats a boolean", () => {
    expect(
      Entitlement.merge([
        { sso: false, seats: 5, audit_log: true },
        { sso: true, seats: 10, api_calls: 1000 },
        { audit_log: 3 }
      ])
    ).toEqual({ api_calls: 1000, audit_log: 3, seats: 10, sso: true })
  })

  it("a price's value wins over its product's", () => {
    expect(Entitlement.featuresOf({ seats: 5, sso: false }, { seats: 20 })).toEqual({ seats: 20, sso: false })
  })

  it("the default policy: trial, active and past_due grant; paused, unpaid and canceled do not", () => {
    const g = Entitlement.grantingOf(null)
    expect(["trial", "active", "past_due"].every((s) => Entitlement.grants(g, s))).toBe(true)
    expect(["paused", "unpaid", "canceled", "init", "incomplete"].some((s) => Entitlement.grants(g, s))).toBe(false)
  })

  it("enabled: true, or a number above 0", () => {
    expect([true, false, 0, 1, undefined].map(Entitlement.enabled)).toEqual([true, false, false, true, false])
  })

  it("bounds what a product or price declares", () => {
    const decode = Schema.decodeUnknownExit(Entitlement.Features)
    expect(decode({ seats: 10, sso: true, api_calls: 100000 })._tag).toBe("Success")
    expect(decode({ Seats: 1 })._tag).toBe("Failure")
    expect(decode({ seats: 1.5 })._tag).toBe("Failure")
    expect(decode({ seats: Number.MAX_SAFE_INTEGER + 1 })._tag).toBe("Failure")
    expect(decode({ seats: "10" })._tag).toBe("Failure")
    expect(decode(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, true])))._tag).toBe("Failure")
    expect(Entitlement.invalidFeatures({ ["a".repeat(65)]: true })).toContain("must match")
  })

  prop("combine is commutative, associative and idempotent", [value, value, value], ([a, b, c]) => {
    expect(Entitlement.combine(a, b)).toEqual(Entitlement.combine(b, a))
    expect(Entitlement.combine(Entitlement.combine(a, b), c)).toEqual(Entitlement.combine(a, Entitlement.combine(b, c)))
    expect(Entitlement.combine(a, a)).toEqual(a)
  })

  prop("the computed set equals the rule written longhand, in any order", [policy, held], ([granting, subs]) => {
    const computed = Entitlement.compute(granting, subs)
    expect(Entitlement.sameFeatures(computed.features, byHand(granting, subs))).toBe(true)
    const reversed = Entitlement.compute(granting, [...subs].reverse())
    expect(reversed.features).toEqual(computed.features)
    expect(reversed.subscription_ids).toEqual(computed.subscription_ids)
    expect(computed.subscription_ids.length).toBe(
      subs.filter((s) => (granting as ReadonlyArray<string>).includes(s.status)).length
    )
  })

  prop("a subscription that does not grant changes nothing", [policy, held, features], ([granting, subs, f]) => {
    const with_ = Entitlement.compute(granting, [...subs, { subscription_id: "x", status: "canceled", features: f }])
    expect(with_.features).toEqual(Entitlement.compute(granting, subs).features)
  })
})
