/**
 * Dunning that reads the decline, told through the engine's services on a frozen sandbox clock:
 * a hard decline stops at once and the invoice waits for a new payment method (which recovers
 * it), a soft decline retries on the merchant's schedule, an expired card stops, a merchant's
 * own rule for a class, and the preview of a policy on the merchant's clock. Run against any
 * storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Billing, Dunning, Merchants, PaymentMethods, type Store } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { DateTime, Effect, type Layer, Option } from "effect"
import { advance, card, engine, eventsOf, invoicesOf, setup, subscribe } from "./ScenarioKit.js"

const START = "2024-01-01T00:00:00Z"

/** What the renewal's invoice, its trade and the subscription say after dunning moved. */
const stateOf = (merchantId: string, subscriptionId: string) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const sub = yield* billing.getSubscription(merchantId, subscriptionId)
    const renewal = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.invoice_type === "renewal")!
    const trade = yield* billing.getTrade(merchantId, renewal.trade_id!)
    const attempts = yield* (yield* SandboxGateway.SandboxControls).chargeAttempts(trade.trade_id)
    const dunning =
      renewal.dunning === null
        ? null
        : {
            ...renewal.dunning,
            next_retry_at:
              renewal.dunning.next_retry_at === null ? null : DateTime.formatIso(renewal.dunning.next_retry_at)
          }
    return { sub, renewal, trade, attempts, dunning }
  })

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "120 seconds" })(`Dunning scenarios: ${name}`, (it) => {
    it.effect(
      "a hard decline (stolen card) stops at once: unpaid, the invoice failed and waiting for a new card, which recovers it",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* setup(START)
          const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
          yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(1, "stolen_card")
          yield* advance(merchantId, "2024-02-01T00:00:00Z")
          const now = yield* stateOf(merchantId, sub.id)
          expect(now.sub.status).toBe("unpaid")
          expect(now.renewal.biz_status).toBe("failed")
          expect(now.dunning).toEqual({
            decline_code: "stolen_card",
            decline_class: "hard",
            next_action: "new_payment_method",
            next_retry_at: null,
            ended_by: "decline"
          })
          expect([now.trade.trade_status, now.trade.closed_reason]).toEqual(["closed", "new_payment_method_required"])
          expect(now.trade.last_payment_error).toMatchObject({ code: "stolen_card", decline_class: "hard" })
          expect(yield* eventsOf(merchantId, sub.id)).toEqual([
            "v2.subscription.first",
            "v2.subscription.past_due",
            "v2.subscription.unpaid"
          ])
          // the webhook the notifier reads: the invoice failed, its `dunning` asks for a new payment method
          expect(yield* eventsOf(merchantId, now.renewal.invoice_id)).toEqual(["v2.invoice.payment_failed"])
          // nothing is retried, however long it waits
          yield* advance(merchantId, "2024-02-20T00:00:00Z")
          expect((yield* stateOf(merchantId, sub.id)).attempts).toBe(1)
          // the customer gives a new card (the portal's payment-method flow): the invoice is paid
          const updated = yield* (yield* PaymentMethods.PaymentMethods).updatePaymentMethod(
            merchantId,
            sub.id,
            card("5555555555554444")
          )
          expect(updated.status).toBe("active")
          const invoices = yield* invoicesOf(merchantId, sub.id)
          expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.biz_status])).toEqual([
            ["initial", 0, "success"],
            ["renewal", 1, "success"]
          ])
          // and billing goes on
          yield* advance(merchantId, "2024-03-01T00:00:00Z")
          expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.cycle_index, i.biz_status])).toEqual([
            [0, "success"],
            [1, "success"],
            [2, "success"]
          ])
        })
    )

    it.effect(
      "a soft decline (insufficient funds) retries on the schedule: 1, 3, 5 and 7 days after, then unpaid",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* setup(START)
          const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
          yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(5, "insufficient_funds")
          const at = (to: string) =>
            Effect.gen(function* () {
              yield* advance(merchantId, to)
              const s = yield* stateOf(merchantId, sub.id)
              return [s.sub.status, s.renewal.biz_status, s.attempts, s.dunning?.next_retry_at ?? null]
            })
          expect(yield* at("2024-02-01T00:00:00Z")).toEqual(["past_due", "retrying", 1, "2024-02-02T00:00:00.000Z"])
          expect(yield* at("2024-02-02T00:00:00Z")).toEqual(["past_due", "retrying", 2, "2024-02-04T00:00:00.000Z"])
          expect(yield* at("2024-02-04T00:00:00Z")).toEqual(["past_due", "retrying", 3, "2024-02-06T00:00:00.000Z"])
          expect(yield* at("2024-02-06T00:00:00Z")).toEqual(["past_due", "retrying", 4, "2024-02-08T00:00:00.000Z"])
          expect(yield* at("2024-02-08T00:00:00Z")).toEqual(["unpaid", "failed", 5, null])
          const end = yield* stateOf(merchantId, sub.id)
          expect(end.dunning).toMatchObject({
            decline_code: "insufficient_funds",
            decline_class: "soft",
            next_action: "new_payment_method",
            ended_by: "retries_exhausted"
          })
          expect(end.trade.closed_reason).toBe("retries_exhausted")
        })
    )

    it.effect("an expired card stops at once and asks for a new card", () =>
      Effect.gen(function* () {
        const { merchantId, priceId } = yield* setup(START)
        // the processor says the card on file has expired (Stripe's 4000000000000069 answer)
        const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
        yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(1, "expired_card")
        yield* advance(merchantId, "2024-02-01T00:00:00Z")
        const now = yield* stateOf(merchantId, sub.id)
        expect([now.sub.status, now.renewal.biz_status, now.attempts]).toEqual(["unpaid", "failed", 1])
        expect(now.dunning).toMatchObject({
          decline_code: "expired_card",
          decline_class: "expired_card",
          next_action: "new_payment_method",
          ended_by: "decline"
        })
      })
    )

    it.effect("a merchant's own rule: hard declines retried, soft ones stopped; the default restored by null", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const { merchantId, priceId } = yield* setup(START, {}, { dunning_retry_days: [2] })
        const set = yield* merchants.setBillingSettings(merchantId, {
          dunning_on_decline: { hard: "retry", soft: "stop" }
        })
        expect(set.dunning_on_decline).toEqual({ hard: "retry", soft: "stop", expired_card: "stop" })
        expect(
          yield* Effect.flip(
            merchants.setBillingSettings(merchantId, {
              dunning_on_decline: { hard: "later" as "stop" }
            })
          )
        ).toMatchObject({ _tag: "InvalidParameter", param: "dunning_on_decline.hard" })
        const hard = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
        yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(1, "lost_card")
        yield* advance(merchantId, "2024-02-01T00:00:00Z")
        expect((yield* stateOf(merchantId, hard.id)).dunning).toMatchObject({
          decline_class: "hard",
          next_action: "retry",
          next_retry_at: "2024-02-03T00:00:00.000Z"
        })
        // the retry (the card works again) pays it
        yield* advance(merchantId, "2024-02-03T00:00:00Z")
        expect((yield* stateOf(merchantId, hard.id)).sub.status).toBe("active")
        // a soft decline now stops at once
        yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(1, "insufficient_funds")
        yield* advance(merchantId, "2024-03-01T00:00:00Z")
        const soft = yield* Billing.Billing.use((b) => b.getSubscription(merchantId, hard.id))
        expect(soft.status).toBe("unpaid")
        const back = yield* merchants.setBillingSettings(merchantId, { dunning_on_decline: null })
        expect(back.dunning_on_decline).toBeNull()
      })
    )

    it.effect("the preview of a policy on the merchant's clock: the merchant's, and a proposed one", () =>
      Effect.gen(function* () {
        const dunning = yield* Dunning.Dunning
        const { merchantId } = yield* setup("2026-03-10T09:30:00Z")
        const iso = (d: DateTime.Utc) => DateTime.formatIso(d).replace(".000Z", "Z")
        // the preview with its instants as the API writes them
        const wire = (p: Dunning.PreviewInput) =>
          Effect.map(dunning.preview(merchantId, p), (v) => ({
            ...v,
            failed_at: iso(v.failed_at),
            ends_at: iso(v.ends_at),
            steps: v.steps.map((s) => ({ ...s, at: iso(s.at) }))
          }))
        const soft = yield* wire({ decline_class: "soft" })
        expect(soft.failed_at).toBe("2026-03-10T09:30:00Z")
        expect(soft.action).toBe("retry")
        expect(soft.steps.map((s) => [s.kind, s.at, s.subscription_status, s.invoice_status])).toEqual([
          ["failed", "2026-03-10T09:30:00Z", "past_due", "retrying"],
          ["retry", "2026-03-11T09:30:00Z", "past_due", "retrying"],
          ["retry", "2026-03-13T09:30:00Z", "past_due", "retrying"],
          ["retry", "2026-03-15T09:30:00Z", "past_due", "retrying"],
          ["retry", "2026-03-17T09:30:00Z", "past_due", "retrying"],
          ["exhausted", "2026-03-17T09:30:00Z", "unpaid", "failed"]
        ])
        expect([soft.final_status, soft.next_action, soft.ends_at]).toEqual([
          "unpaid",
          "new_payment_method",
          "2026-03-17T09:30:00Z"
        ])
        const hard = yield* wire({ decline_class: "hard" })
        expect(hard.steps.map((s) => s.kind)).toEqual(["failed", "stop"])
        expect([hard.action, hard.final_status, hard.ends_at]).toEqual(["stop", "unpaid", "2026-03-10T09:30:00Z"])
        // a proposed policy: its own days, hard retried, canceled at the end — nothing saved
        const proposed = yield* wire({
          decline_class: "hard",
          dunning_retry_days: [2, 5],
          dunning_final_state: "canceled",
          dunning_on_decline: { hard: "retry" },
          failed_at: Date.parse("2026-04-01T00:00:00Z")
        })
        expect(proposed.steps.map((s) => [s.kind, s.at])).toEqual([
          ["failed", "2026-04-01T00:00:00Z"],
          ["retry", "2026-04-03T00:00:00Z"],
          ["retry", "2026-04-06T00:00:00Z"],
          ["exhausted", "2026-04-06T00:00:00Z"]
        ])
        expect([proposed.final_status, proposed.next_action]).toEqual(["canceled", "none"])
        expect((yield* Merchants.Merchants.use((m) => m.get(merchantId))).dunning_on_decline).toBeNull()
        expect(
          yield* Effect.flip(dunning.preview(merchantId, { decline_class: "soft", dunning_retry_days: [5, 2] }))
        ).toMatchObject({ param: "dunning_retry_days" })
      })
    )
  })
