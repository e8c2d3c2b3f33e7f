import { Layer } from "effect"
import { Ports } from "@recur/core"
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
    shows: { last4: "4242" }
  }
)
