import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect } from "effect"
import { PaymentGatewayContract } from "../src/index.js"

// The PaymentGateway contract, run against the sandbox adapter (its own cards are tested in
// @recur/payment-sandbox; the contract lives here, beside the suite, to keep the packages acyclic).
PaymentGatewayContract.suite(
  "sandbox",
  SandboxGateway.layer(),
  {
    succeed: "4242424242424242",
    decline: "4000000000000002",
    insufficient: "4000000000009995",
    stolen: "4000000000009979",
    expired: "4000000000000069"
  },
  { refundAnswerLost: SandboxGateway.SandboxControls.use((c) => c.unknownNextRefunds(1)).pipe(Effect.asVoid) }
)

// the same contract with payment methods a processor's form collected (Stripe's test ids)
PaymentGatewayContract.suite("sandbox, collected payment methods", SandboxGateway.layer(), {
  succeed: { _tag: "PaymentMethod", id: "pm_card_visa" },
  decline: { _tag: "PaymentMethod", id: "pm_card_chargeDeclined" },
  insufficient: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedInsufficientFunds" },
  invalid: { _tag: "PaymentMethod", id: "pm_nope" },
  shows: { last4: "4242", exp_month: 12, exp_year: 2034 },
  stolen: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedStolenCard" },
  expired: { _tag: "PaymentMethod", id: "pm_card_chargeDeclinedExpiredCard" }
})

// the same with the cases of issue 30: a card that always asks for 3-D Secure, an unavailable processor
PaymentGatewayContract.suite("sandbox, challenges and outages", SandboxGateway.layer(), {
  ...PaymentGatewayContract.cardSources({
    succeed: "4242424242424242",
    decline: "4000000000000002",
    insufficient: "4000000000009995"
  }),
  challenge: {
    _tag: "Card",
    card: { number: "4000002760003184", exp_month: 12, exp_year: 2099, cvc: "123" }
  },
  makeUnavailable: SandboxGateway.SandboxControls.use((c) => c.unavailableNext(1))
})
