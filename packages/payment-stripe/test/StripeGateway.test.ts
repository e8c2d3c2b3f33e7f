import { Ports } from "@recur/core"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { PaymentGatewayContract } from "@recur/testing"
import { Effect, Layer } from "effect"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"

// The PaymentGateway contract, run against the Stripe adapter talking to the local fake of the
// Stripe API (every request and response checked against Stripe's published spec).
const fake = await Fake.start()
afterAll(() => fake.close())

PaymentGatewayContract.suite(
  "Stripe (local fake)",
  Layer.sync(Ports.PaymentGateway, () =>
    StripeGateway.make({ secretKey: "sk_test_recur", apiBase: fake.base, timeoutMs: 5_000 })
  ),
  {
    succeed: { _tag: "PaymentMethod", id: "pm_card_visa" },
    decline: { _tag: "PaymentMethod", id: "pm_card_chargeDeclined" },
    insufficient: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedInsufficientFunds" },
    invalid: { _tag: "PaymentMethod", id: "pm_nope" },
    shows: { last4: "4242", ...Fake.TEST_EXPIRY },
    challenge: { _tag: "PaymentMethod", id: "pm_card_authenticationRequired" },
    stolen: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedStolenCard" },
    expired: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedExpiredCard" },
    makeUnavailable: Effect.sync(() => fake.fault(/^POST \/v1\/payment_intents$/, "rate_limit"))
  },
  // Stripe refunds, then answers 500 (to the SDK's re-sends too): the answer is lost
  { refundAnswerLost: Effect.sync(() => fake.fault(/^POST \/v1\/refunds$/, "500_after", 3)) }
)

describe("the Stripe fake stays Stripe", () => {
  beforeAll(() => undefined)
  it("no request or response broke Stripe's spec", () => {
    expect(fake.violations).toEqual([])
    expect(fake.requests.length).toBeGreaterThan(10)
  })
})

describe("the spec check catches a fake that drifts", () => {
  it("unknown or mistyped request parameters and invented or missing response fields are reported", async () => {
    const { checkRequest, checkResponse } = await import("./fake/spec.js")
    const create = "/v1/payment_intents"
    expect(checkRequest("post", create, { amount: "100", currency: "usd" })).toBeUndefined()
    expect(checkRequest("post", create, { amount: "100", currency: "usd", payment_method_typez: ["card"] })).toMatch(
      /additional/
    )
    expect(checkRequest("post", create, { amount: "lots", currency: "usd" })).toMatch(/amount/)
    expect(checkRequest("post", create, { currency: "usd" })).toMatch(/amount/)
    expect(checkRequest("get", "/v1/payment_intents/search", { query: "x", limt: "1" })).toMatch(/limt/)
    const intent = {
      id: "pi_1",
      object: "payment_intent",
      amount: 100,
      capture_method: "automatic",
      confirmation_method: "automatic",
      created: 1,
      currency: "usd",
      livemode: false,
      payment_method_types: ["card"],
      status: "succeeded"
    }
    expect(checkResponse("get", "/v1/payment_intents/{intent}", 200, intent)).toBeUndefined()
    expect(checkResponse("get", "/v1/payment_intents/{intent}", 200, { ...intent, status: "paid" })).toMatch(/status/)
    expect(checkResponse("get", "/v1/payment_intents/{intent}", 200, { ...intent, paid: true })).toMatch(/\.paid/)
    const { amount: _, ...noAmount } = intent
    expect(checkResponse("get", "/v1/payment_intents/{intent}", 200, noAmount)).toMatch(/amount/)
    expect(checkResponse("post", "/v1/refunds", 402, { error: { type: "card_error", code: "x" } })).toBeUndefined()
  })
})
