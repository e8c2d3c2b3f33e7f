import { describe, expect, it } from "@effect/vitest"
import { StripeDeclines } from "../src/index.js"

describe("Stripe's decline codes classed for dunning", () => {
  it("the issue's classes: stolen, lost, fraudulent, invalid account, do not honor hard; expired expired; funds and errors soft", () => {
    const table: ReadonlyArray<readonly [string, "hard" | "soft" | "expired_card"]> = [
      ["stolen_card", "hard"],
      ["lost_card", "hard"],
      ["pickup_card", "hard"],
      ["fraudulent", "hard"],
      ["invalid_account", "hard"],
      ["do_not_honor", "hard"],
      ["card_not_supported", "hard"],
      ["restricted_card", "hard"],
      ["incorrect_number", "hard"],
      ["revocation_of_authorization", "hard"],
      ["expired_card", "expired_card"],
      ["insufficient_funds", "soft"],
      ["processing_error", "soft"],
      ["try_again_later", "soft"],
      ["issuer_not_available", "soft"],
      ["card_velocity_exceeded", "soft"],
      ["card_declined", "soft"],
      ["generic_decline", "soft"],
      ["authentication_required", "soft"]
    ]
    for (const [code, expected] of table) expect([code, StripeDeclines.classOf(code)]).toEqual([code, expected])
  }, 10_000)

  it("every code is in one class: the hard and expired sets do not meet, and any other code is soft", () => {
    for (const code of StripeDeclines.hard) expect(StripeDeclines.expired.has(code)).toBe(false)
    // every known code, and other strings (a code Stripe adds later is soft: the schedule decides)
    const others = Array.from({ length: 200 }, (_, i) => `code_${(i * 7919).toString(36)}`)
    for (const code of [...StripeDeclines.hard, ...StripeDeclines.expired, ...others, "", "STOLEN_CARD"])
      expect([code, StripeDeclines.classOf(code)]).toEqual([
        code,
        StripeDeclines.hard.has(code) ? "hard" : StripeDeclines.expired.has(code) ? "expired_card" : "soft"
      ])
  }, 30_000)
})
