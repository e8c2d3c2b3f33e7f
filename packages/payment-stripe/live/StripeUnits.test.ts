import { describe, expect, it } from "@effect/vitest"
import { Ids, Money, Ports } from "@recur/core"
import { Effect, Option } from "effect"
import { StripeGateway } from "../src/index.js"
import { client, options, secretKey } from "./env.js"

// Issue 30, items 6 and 7, against Stripe's real test mode (`pnpm test:stripe-live` with
// STRIPE_TEST_SECRET_KEY): amounts reach Stripe in its units, a charge of 0 saves the card with a
// SetupIntent, and the minimum the adapter declares is one Stripe takes while one unit under it is
// refused by Stripe itself.
const gateway = StripeGateway.make({ secretKey, ...options })
const stripe = client()

const charge = (amount: Money.Money, pm = "pm_card_visa") =>
  Effect.gen(function* () {
    const trade_id = yield* Ids.make("trd")
    const outcome = yield* gateway.charge({
      trade_id,
      merchant_id: "mch_live_units",
      customer_id: "cus_live_units",
      amount,
      source: { _tag: "PaymentMethod", id: pm },
      off_session: false
    })
    return { trade_id, outcome }
  })

/** The PaymentIntent a succeeded charge names, read from Stripe by id (its search lags). */
const intentOf = (outcome: Ports.ChargeOutcome) =>
  Effect.promise(() => stripe.paymentIntents.retrieve((outcome as { reference: string }).reference))

describe("Stripe test mode (live): amounts in Stripe's units", () => {
  it.effect("a 4,990 ISK charge reaches Stripe as 499000 and succeeds", () =>
    Effect.gen(function* () {
      const { outcome } = yield* charge(Money.make(4990n, "ISK"))
      expect(outcome._tag).toBe("Succeeded")
      expect((yield* intentOf(outcome)).amount).toBe(499000)
    }),
    120_000
  )

  it.effect("a charge of 0 saves the card with a SetupIntent; a renewal then charges the token", () =>
    Effect.gen(function* () {
      const { outcome } = yield* charge(Money.make(0n, "USD"))
      expect(outcome._tag).toBe("Succeeded")
      if (outcome._tag !== "Succeeded") return
      expect(outcome.transaction_id.startsWith("seti_")).toBe(true)
      const renewal = yield* gateway.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "mch_live_units",
        amount: Money.make(3000n, "USD"),
        source: { _tag: "Token", token: Option.getOrThrow(outcome.token) },
        off_session: true
      })
      expect(renewal._tag).toBe("Succeeded")
    }),
    120_000
  )

  it.effect("the declared USD minimum is taken; one cent under it Stripe refuses (amount_too_small), never a decline", () =>
    Effect.gen(function* () {
      const minimum = Option.getOrThrow(yield* gateway.minimumCharge!({ merchant_id: "m", currency: "USD" }))
      expect((yield* charge(minimum)).outcome._tag).toBe("Succeeded")
      // the merchant's configuration (Unavailable), as `unavailableOf` reads it: carried, not dunned
      expect((yield* charge(Money.make(minimum.amount - 1n, "USD"))).outcome).toMatchObject({
        _tag: "Unavailable",
        reason: "merchant_configuration",
        code: "amount_too_small"
      })
    }),
    120_000
  )
})
