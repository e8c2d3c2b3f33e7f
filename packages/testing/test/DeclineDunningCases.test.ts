import { expect, layer } from "@effect/vitest"
import { Billing, Merchants, PaymentMethods, PriceChanges } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Option } from "effect"
import { MemoryStorage } from "../src/index.js"
import { advance, card, engine, invoicesOf, monthlyOfFirstProduct, setup, subscribe } from "../src/ScenarioKit.js"

layer(engine(MemoryStorage.layer), { timeout: "120 seconds" })(
  "decline-aware dunning: where the class meets upgrades, policy changes and new cards",
  (it) => {
    it.effect(
      "a hard decline of an upgrade's proration charge ends dunning at once, as a renewal's does: the subscription goes to the policy's final state (Stripe: hard declines are not retried)",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {}, { dunning_final_state: "canceled" })
          const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
          const billing = yield* Billing.Billing
          const merchant = (yield* billing.getSubscription(merchantId, sub.id)).status
          expect(merchant).toBe("active")
          const bigger = yield* monthlyOfFirstProduct(merchantId, "60.00")
          yield* advance(merchantId, "2024-01-16T00:00:00Z")
          yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(1, "stolen_card")
          const quote = yield* (yield* PriceChanges.PriceChanges).changePrice(
            merchantId,
            PriceChanges.change(sub.id, { priceId: bigger })
          )
          expect(quote.outcome).toBe("upgrade")
          const after = yield* billing.getSubscription(merchantId, sub.id)
          const invs = (yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.biz_status])
          // the cycle was paid, but the plan now in force was not: with a stolen card no retry can
          // succeed, so the merchant's final state applies at once (docs/decisions.md, "Issue 34 —
          // a declined upgrade"); a new card recovers an unpaid one
          expect({ status: after.status, invs }).toEqual({
            status: "canceled",
            invs: [
              ["initial", "success"],
              ["upgrade", "failed"]
            ]
          })
        }),
      60_000
    )

    it.effect(
      "soft decline, then the merchant stops soft declines mid-dunning: the next soft decline ends it cleanly",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
          const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
          const controls = yield* SandboxGateway.SandboxControls
          yield* controls.declineNextOffSession(2, "insufficient_funds")
          yield* advance(merchantId, "2024-02-01T00:00:00Z")
          yield* (yield* Merchants.Merchants).setBillingSettings(merchantId, { dunning_on_decline: { soft: "stop" } })
          yield* advance(merchantId, "2024-02-02T00:00:00Z")
          const billing = yield* Billing.Billing
          const renewal = (yield* invoicesOf(merchantId, sub.id)).find((i) => i.invoice_type === "renewal")!
          expect([(yield* billing.getSubscription(merchantId, sub.id)).status, renewal.biz_status]).toEqual([
            "unpaid",
            "failed"
          ])
          expect(renewal.dunning).toMatchObject({
            decline_class: "soft",
            next_action: "new_payment_method",
            ended_by: "decline"
          })
          yield* advance(merchantId, "2024-02-20T00:00:00Z")
          expect(yield* controls.chargeAttempts(renewal.trade_id!)).toBe(2)
        }),
      60_000
    )

    it.effect(
      "a new card while a retry is scheduled pays once: the scheduled retry charges nothing more",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
          const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
          const controls = yield* SandboxGateway.SandboxControls
          yield* controls.declineNextOffSession(1, "insufficient_funds")
          yield* advance(merchantId, "2024-02-01T00:00:00Z")
          const updated = yield* (yield* PaymentMethods.PaymentMethods).updatePaymentMethod(
            merchantId,
            sub.id,
            card("5555555555554444")
          )
          expect(updated.status).toBe("active")
          yield* advance(merchantId, "2024-02-10T00:00:00Z")
          const renewal = (yield* invoicesOf(merchantId, sub.id)).find((i) => i.invoice_type === "renewal")!
          expect(renewal.biz_status).toBe("success")
          expect(yield* controls.chargeAttempts(renewal.trade_id!)).toBe(2)
          expect((yield* invoicesOf(merchantId, sub.id)).filter((i) => i.biz_status === "success").length).toBe(2)
        }),
      60_000
    )
  }
)
