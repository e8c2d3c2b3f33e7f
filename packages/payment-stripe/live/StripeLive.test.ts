import { describe, expect, it } from "@effect/vitest"
import { Money, Ports } from "@recur/core"
import { PaymentGatewayContract } from "@recur/testing"
import { Effect, Layer } from "effect"
import { StripeGateway } from "../src/index.js"
import { gateway, options, publishableKey, secretKey } from "./env.js"

// Recur's Stripe adapter against Stripe's real test mode: `pnpm test:stripe-live` with
// STRIPE_TEST_SECRET_KEY and STRIPE_TEST_PUBLISHABLE_KEY set (test keys of your own account).
// Stripe's test payment methods behave as the local fake's do; nothing here is charged for real.
// Each topic is a `describe` block of its own below (shared keys and gateway in `env.ts`); a new
// topic adds its block under its heading, or a file of its own beside this one (`live/*.test.ts`).

// ---------------------------------------------------------------- the PaymentGateway contract
PaymentGatewayContract.suite(
  "Stripe test mode (live)",
  Layer.sync(Ports.PaymentGateway, gateway),
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

// ---------------------------------------------------------------- issue 30: the account check
describe("Stripe test mode (live): a merchant's keys are verified before they are saved", () => {
  const verify = (keys: Partial<Ports.AccountKeys>) =>
    Effect.runPromise(
      StripeGateway.verifyAccount(
        { merchant_id: "mch_live_test", mode: "test", secret_key: secretKey, publishable_key: publishableKey, ...keys },
        options
      )
    )

  it("the account's own pair is verified, naming the account", async () => {
    const check = await verify({})
    expect(check._tag, JSON.stringify(check)).toBe("Verified")
    expect(check._tag === "Verified" && check.account_id).toMatch(/^acct_/)
  })

  it("a secret key Stripe does not know, a publishable key it does not know: refused, naming which", async () => {
    expect(await verify({ secret_key: "sk_test_51RecurNoSuchKey000000000000" })).toMatchObject({
      _tag: "Refused",
      param: "secret_key"
    })
    expect(await verify({ publishable_key: "pk_test_51RecurNoSuchKey000000000000" })).toMatchObject({
      _tag: "Refused",
      param: "publishable_key"
    })
  })

  it("test keys for a live merchant: the publishable key is refused (its tokens are not live)", async () => {
    expect(await verify({ mode: "live" })).toMatchObject({ _tag: "Refused", param: "publishable_key" })
  })
})

// ---------------------------------------------------------------- issue 30: 3-D Secure SetupIntents

// ---------------------------------------------------------------- issue 30: Stripe's currency units

// ---------------------------------------------------------------- issue 30: refunds read by id

// issue 30: a wrong key is the merchant's configuration, never a decline
describe("Stripe test mode (live): a wrong key", { timeout: 60_000 }, () => {
  it.effect("a charge with a key Stripe does not know answers Unavailable (merchant_configuration), naming no key", () =>
    Effect.gen(function* () {
      const gateway = StripeGateway.make({ secretKey: "sk_test_recurNoSuchKey000000000000", ...options })
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
