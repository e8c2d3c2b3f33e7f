import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import fc from "fast-check"
import { WebhookDelivery } from "../../src/index.js"

const MIN = 60_000

describe("WebhookDelivery", () => {
  it("the schedule: 1, 2, 4 … minutes, capped at 4 h, 16 retries, all within 48 h", () => {
    const gaps: Array<number> = []
    let now = 0
    for (let attempts = 1; ; attempts++) {
      const next = WebhookDelivery.nextRetryAt(attempts, 0, now)
      if (Option.isNone(next)) break
      gaps.push((next.value - now) / MIN)
      now = next.value
    }
    expect(gaps).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 240, 240, 240, 240, 240, 240, 240, 240])
    expect(now).toBeLessThanOrEqual(WebhookDelivery.policy.windowMs)
  })

  it("property: delays never shrink, never exceed the cap, and no retry lands outside the window", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 72 * 60 * MIN }), (attempts, elapsed) => {
        expect(WebhookDelivery.retryDelay(attempts + 1)).toBeGreaterThanOrEqual(WebhookDelivery.retryDelay(attempts))
        expect(WebhookDelivery.retryDelay(attempts)).toBeLessThanOrEqual(WebhookDelivery.policy.maxDelayMs)
        const next = WebhookDelivery.nextRetryAt(attempts, 0, elapsed)
        if (Option.isSome(next)) {
          expect(attempts).toBeLessThanOrEqual(16)
          expect(next.value).toBeLessThanOrEqual(WebhookDelivery.policy.windowMs)
        }
      })
    )
  })

  it.effect("headers: both schemes, and X-Signature-Previous only during a rotation", () =>
    Effect.gen(function* () {
      const input = {
        body: '{"id":"evt_1"}',
        eventId: "evt_1",
        eventType: "v2.invoice.paid",
        timestampMs: 1_700_000_000_123,
        endpointSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        keys: { current: Option.some("sk_test_new"), previous: Option.none<string>() }
      }
      const h = yield* WebhookDelivery.headers(input)
      expect(h["x-timestamp"]).toBe("1700000000123")
      expect(h["webhook-timestamp"]).toBe("1700000000")
      expect(h["x-signature"]).toMatch(/^[0-9a-f]{64}$/)
      expect(h["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
      expect(h["x-signature-previous"]).toBeUndefined()
      const rotating = yield* WebhookDelivery.headers({
        ...input,
        keys: { current: Option.some("sk_test_new"), previous: Option.some("sk_test_old") }
      })
      expect(rotating["x-signature"]).toBe(h["x-signature"])
      expect(rotating["x-signature-previous"]).toBe(
        yield* WebhookDelivery.recurSignature("sk_test_old", input.timestampMs, input.body)
      )
    })
  )

  it.effect("Standard Webhooks: the specification's published test vector", () =>
    Effect.gen(function* () {
      const signature = yield* WebhookDelivery.standardSignature(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}'
      )
      expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    })
  )
})
