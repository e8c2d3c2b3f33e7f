import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Money, Ports } from "@recur/core"
import { PaymentGatewayContract } from "@recur/testing"
import { StripeGateway } from "../src/index.js"

// The PaymentGateway contract against Stripe's real test mode: `pnpm test:stripe-live` with
// STRIPE_TEST_SECRET_KEY set (an sk_test_ key of your own account). Stripe's test payment
// methods behave as the local fake's do; nothing here is charged for real.
PaymentGatewayContract.suite(
  "Stripe test mode (live)",
  Layer.sync(Ports.PaymentGateway, () =>
    StripeGateway.make({ secretKey: process.env.STRIPE_TEST_SECRET_KEY ?? "", timeoutMs: 30_000 })
  ),
  {
    succeed: { _tag: "PaymentMethod", id: "pm_card_visa" },
    decline: { _tag: "PaymentMethod", id: "pm_card_chargeDeclined" },
    insufficient: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedInsufficientFunds" },
    invalid: { _tag: "PaymentMethod", id: "pm_recur_no_such_method" },
    shows: { last4: "4242" },
    // issue 30: a card that always asks for 3-D Secure waits for its cardholder, never saved without a return_url
    challenge: { _tag: "PaymentMethod", id: "pm_card_authenticationRequired" }
  }
)

// issue 30: a wrong key is the merchant's configuration, never a decline
describe("Stripe test mode (live): a wrong key", { timeout: 60_000 }, () => {
  it.effect("a charge with a key Stripe does not know answers Unavailable (merchant_configuration), naming no key", () =>
    Effect.gen(function* () {
      const gateway = StripeGateway.make({ secretKey: "sk_test_recurNoSuchKey000000000000", timeoutMs: 30_000 })
      const outcome = yield* gateway.charge({
        trade_id: "trd_recur_live_wrong_key",
        merchant_id: "mch_live",
        amount: Money.make(1000n, "USD"),
        source: { _tag: "PaymentMethod", id: "pm_card_visa" },
        off_session: false
      })
      expect(outcome).toMatchObject({ _tag: "Unavailable", reason: "merchant_configuration" })
      expect(JSON.stringify(outcome)).not.toContain("sk_test")
    })
  )
})
