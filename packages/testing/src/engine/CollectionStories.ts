/**
 * Engine scenarios of collecting: dunning (to unpaid, to recovery, a merchant's own days, to
 * canceled), one-time payments and customer-initiated renewals, the worker on the Effect clock,
 * money back never above money in, 3-D Secure and unknown outcomes. Registered in order by
 * `EngineScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Merchants,
  Reconciliation,
  PriceChanges,
  Refunds,
  SandboxClock,
  SessionPayments,
  Worker
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Clock, Duration, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { eventsOf, invoicesOf, iso, setup, subscribe, type Services, card, openSession } from "../ScenarioKit.js"

/**
 * Registers the collection scenarios.
 *
 * @since 0.1.0
 */
export const collectionStories = (it: Vitest.MethodsNonLive<Services>) => {
  it.effect("dunning to unpaid: 4 retries over 7 days, then the invoice fails and the trade closes", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
      const { result } = yield* subscribe(merchantId, priceId, "4000000000000341")
      const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-01T12:00:00Z"))
      expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("past_due")
      const [, renewal] = yield* invoicesOf(merchantId, sub.id)
      expect(renewal!.biz_status).toBe("retrying")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-07T00:00:00Z"))
      expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("past_due")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-09T00:00:00Z"))
      const final = yield* billing.getSubscription(merchantId, sub.id)
      expect(final.status).toBe("unpaid")
      const inv = yield* billing.getInvoice(merchantId, renewal!.invoice_id)
      expect(inv.biz_status).toBe("failed")
      expect((yield* billing.getTrade(merchantId, inv.trade_id!)).trade_status).toBe("closed")
      expect(yield* eventsOf(merchantId, sub.id)).toEqual([
        "v2.subscription.first",
        "v2.subscription.past_due",
        "v2.subscription.unpaid"
      ])
      expect(yield* eventsOf(merchantId, inv.invoice_id)).toEqual(["v2.invoice.payment_failed"])
      const tradeEvents = yield* eventsOf(merchantId, inv.trade_id!)
      expect(tradeEvents).toEqual(["v2.trades.created", ...Array.from({ length: 5 }, () => "v2.trades.payment_failed")])
    })
  )

  it.effect("dunning to recovery: two declines, the second retry succeeds, the subscription is active again", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
      const { result } = yield* subscribe(merchantId, priceId)
      const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(2)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-01T00:00:00Z"))
      expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("past_due")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-02T00:00:00Z"))
      expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("past_due")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-04T00:00:00Z"))
      const after = yield* billing.getSubscription(merchantId, sub.id)
      expect(after.status).toBe("active")
      const invoices = yield* invoicesOf(merchantId, sub.id)
      expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.biz_status])).toEqual([
        ["initial", 0, "success"],
        ["renewal", 1, "success"]
      ])
      expect(yield* eventsOf(merchantId, sub.id)).toEqual(["v2.subscription.first", "v2.subscription.past_due"])
      // and billing goes on at the next period end
      yield* sandboxClock.advanceClock(merchantId, iso("2024-03-01T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.cycle_index, i.biz_status])).toEqual([
        [0, "success"],
        [1, "success"],
        [2, "success"]
      ])
    })
  )

  it.effect("a merchant's own dunning days: retries 2 and 5 days after the first failure, then its final state", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup(
        "2024-01-01T00:00:00Z",
        {},
        { dunning_retry_days: [2, 5], dunning_final_state: "canceled" }
      )
      expect(
        yield* Effect.flip(
          (yield* Merchants.Merchants).create({ name: "Bad", currency: "USD", dunning_retry_days: [3, 1] })
        )
      ).toMatchObject({ param: "dunning_retry_days" })
      const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId, "4000000000000341")).result.subscription)
      const attemptsAt = (to: string) =>
        Effect.gen(function* () {
          yield* sandboxClock.advanceClock(merchantId, iso(to))
          const s = yield* billing.getSubscription(merchantId, sub.id)
          const renewal = (yield* invoicesOf(merchantId, sub.id)).find((i) => i.invoice_type === "renewal")
          const trade = renewal?.trade_id ? yield* billing.getTrade(merchantId, renewal.trade_id) : undefined
          return [
            s.status,
            renewal?.biz_status,
            trade ? yield* (yield* SandboxGateway.SandboxControls).chargeAttempts(trade.trade_id) : 0
          ]
        })
      // the renewal fails on Feb 1; retries on Feb 3 and Feb 6 (offsets from the first failure)
      expect(yield* attemptsAt("2024-02-01T00:00:00Z")).toEqual(["past_due", "retrying", 1])
      expect(yield* attemptsAt("2024-02-02T23:59:00Z")).toEqual(["past_due", "retrying", 1])
      expect(yield* attemptsAt("2024-02-03T00:00:00Z")).toEqual(["past_due", "retrying", 2])
      expect(yield* attemptsAt("2024-02-05T23:59:00Z")).toEqual(["past_due", "retrying", 2])
      expect(yield* attemptsAt("2024-02-06T00:00:00Z")).toEqual(["canceled", "failed", 3])
    })
  )

  it.effect("dunning exhausted with the merchant setting canceled cancels the subscription", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {}, { dunning_final_state: "canceled" })
      const sub = (yield* subscribe(merchantId, priceId, "4000000000000341")).result.subscription.pipe((o) =>
        o._tag === "Some" ? o.value : undefined
      )!
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-10T00:00:00Z"))
      const after = yield* billing.getSubscription(merchantId, sub.id)
      expect([after.status, after.cancel_reason]).toEqual(["canceled", "payment_failed"])
      expect(yield* eventsOf(merchantId, sub.id)).toEqual([
        "v2.subscription.first",
        "v2.subscription.past_due",
        "v2.subscription.canceled"
      ])
    })
  )

  it.effect(
    "one-time payments, trial policy once per customer, customer-initiated renewal, fixed term converting to continuous",
    () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sessionPayments = yield* SessionPayments.SessionPayments
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {
          has_trial: true,
          trial_type: 0,
          trial_period: { trial_period_unit: "day", trial_period_count: 7 }
        })
        // a one-time payment: a trade, no subscription
        const pay = yield* openSession(merchantId, {
          email: "buyer@example.com",
          mode: "payment",
          amount: "12.34",
          currency: "USD"
        })
        const paid = yield* sessionPayments.paySession(merchantId, pay.session_id, card("4242424242424242"))
        expect([paid.status, paid.trade.amount, paid.trade.order_type, Option.isNone(paid.subscription)]).toEqual([
          "succeeded",
          "12.34",
          "one_time",
          true
        ])
        // trial policy 2: the same customer gets the trial once
        const first = yield* subscribe(merchantId, priceId, "4242424242424242", {
          payer_id: "same-customer",
          trial_policy: 2
        })
        expect(first.result.subscription.pipe((o) => (o._tag === "Some" ? o.value.status : undefined))).toBe("trial")
        const second = yield* subscribe(merchantId, priceId, "4242424242424242", {
          payer_id: "same-customer",
          trial_policy: 2
        })
        expect(second.result.subscription.pipe((o) => (o._tag === "Some" ? o.value.status : undefined))).toBe("active")
        expect(second.result.trade.amount).toBe("30.00")
        // customer-initiated: no automatic renewal, /renewal bills the next cycle
        const manual = yield* setup("2024-01-01T00:00:00Z", {
          price_plan: { billing_cycle_unit: "customer-initiated", base_price_val: "9.00" }
        })
        const m = (yield* subscribe(manual.merchantId, manual.priceId)).result.subscription.pipe((o) =>
          o._tag === "Some" ? o.value : undefined
        )!
        expect(m.next_invoice_date).toBe(null)
        yield* sandboxClock.advanceClock(manual.merchantId, iso("2024-06-01T00:00:00Z"))
        expect(yield* invoicesOf(manual.merchantId, m.id)).toHaveLength(1)
        const { Subscriptions } = yield* Effect.promise(() => import("@recur/core"))
        yield* (yield* Subscriptions.Subscriptions).renewNow(manual.merchantId, m.id)
        expect(
          (yield* invoicesOf(manual.merchantId, m.id)).map((i) => [
            i.invoice_type,
            i.cycle_index,
            i.amount,
            i.biz_status
          ])
        ).toEqual([
          ["initial", 0, "9.00", "success"],
          ["renewal", 1, "9.00", "success"]
        ])
        // a fixed term that converts to continuous keeps billing after total_cycles
        const fixed = yield* setup("2024-01-15T00:00:00Z")
        const f = (yield* subscribe(fixed.merchantId, fixed.priceId, "4242424242424242", {
          total_cycles: 2,
          convert_to_continuous: true
        })).result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        yield* sandboxClock.advanceClock(fixed.merchantId, iso("2024-05-01T00:00:00Z"))
        const after = yield* billing.getSubscription(fixed.merchantId, f.id)
        expect([after.status, after.total_cycles, after.cycle_index]).toEqual(["active", null, 3])
      })
  )

  it.effect(
    "the worker runs due live work on the Effect clock",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2024, 0, 1))
        const { merchant } = yield* (yield* Merchants.Merchants).create({ name: "Live", currency: "USD" })
        const catalog = yield* Catalog.Catalog
        const product = yield* catalog.createProduct(merchant.merchant_id, { product_name: "Live" })
        const pv = yield* catalog.createPrice(merchant.merchant_id, {
          name: "Weekly",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "week", base_price_val: "3.00" }
        })
        const sub = (yield* subscribe(merchant.merchant_id, pv.id)).result.subscription.pipe((o) =>
          o._tag === "Some" ? o.value : undefined
        )!
        // the worker sleeps on a clock that counts its sleepers, so the test knows when it waits
        const clock = yield* Clock.Clock
        let sleeping = 0
        const watched: Clock.Clock = {
          currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe(),
          currentTimeMillis: clock.currentTimeMillis,
          currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe(),
          currentTimeNanos: clock.currentTimeNanos,
          monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
          monotonicTimeNanos: clock.monotonicTimeNanos,
          // only the worker's own pause counts, not a timeout inside one of its queries
          sleep: (duration) =>
            Duration.toMillis(duration) !== 86_400_000
              ? clock.sleep(duration)
              : Effect.suspend(() => {
                  sleeping++
                  return Effect.ensuring(
                    clock.sleep(duration),
                    Effect.sync(() => void sleeping--)
                  )
                })
        }
        const worker = yield* Effect.forkChild(
          (yield* Worker.Worker)
            .worker({ owner: "test-worker", intervalMs: 86_400_000 })
            .pipe(Effect.provideService(Clock.Clock, watched))
        )
        // move the clock a day at a time, each time once the worker sleeps again (its database work is real I/O)
        const asleep = Effect.gen(function* () {
          while (sleeping === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        })
        for (let d = 1; d <= 22; d++) {
          yield* asleep
          yield* TestClock.adjust("1 day")
        }
        yield* asleep
        yield* Fiber.interrupt(worker)
        expect((yield* invoicesOf(merchant.merchant_id, sub.id)).map((i) => i.cycle_index)).toEqual([0, 1, 2, 3])
      }),
    60_000
  )

  it.effect(
    "money back never exceeds money in: a downgrade credit, a refund of the rest, the credit spent, checked after every step",
    () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const priceChanges = yield* PriceChanges.PriceChanges
        const refunds = yield* Refunds.Refunds
        const { merchantId, priceId, pv } = yield* setup(
          "2024-01-01T00:00:00Z",
          { price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "60.00" } },
          { proration_credit: "credit_balance" }
        )
        const catalog = yield* Catalog.Catalog
        const small = yield* catalog.createPrice(merchantId, {
          name: "Small",
          product_id: pv.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "30.00" }
        })
        const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription).id
        const minor = (text: string) => BigInt(text.replace(".", ""))
        /** Refunded + credit balance ≤ collected, and tax given back ≤ tax collected, for this subscription. */
        const invariant = Effect.gen(function* () {
          const trades = (yield* billing.listTrades(merchantId, { limit: 100 })).list
          const collected = trades
            .filter((t) => t.trade_status === "succeeded")
            .reduce((a, t) => a + minor(t.amount), 0n)
          const refunded = trades.reduce((a, t) => a + minor(t.total_refunded_amount), 0n)
          const balance = minor((yield* billing.getSubscription(merchantId, sub)).credit_balance)
          const docs = yield* invoicesOf(merchantId, sub)
          const tax = (kind: "refund" | "paid") =>
            docs
              .filter((i) => (kind === "refund") === (i.invoice_type === "refund"))
              .reduce((a, i) => a + minor(i.tax_amount), 0n)
          expect(refunded + balance).toBeLessThanOrEqual(collected)
          expect(tax("refund")).toBeLessThanOrEqual(tax("paid"))
          return { collected, refunded, balance }
        })
        const trade = (yield* invoicesOf(merchantId, sub))[0]!.trade_id!
        // a downgrade a third into the cycle: 21 of 31 days left, 40.65 − 20.32 = 20.33 to the balance
        yield* sandboxClock.advanceClock(merchantId, iso("2024-01-11T00:00:00Z"))
        const quote = yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub, { priceId: small.id }))
        expect([quote.credit, quote.charge, quote.total, quote.outcome]).toEqual([
          "40.65",
          "20.32",
          "-20.33",
          "credit_balance"
        ])
        yield* invariant
        // the trade holds 60.00, but the cycle gave 20.33 back already: 39.67 is all a refund can take
        const over = yield* Effect.flip(refunds.refund(merchantId, Refunds.refundOf(trade, { amount: "39.68" })))
        expect(over._tag).toBe("RefundRefused")
        expect((yield* refunds.refund(merchantId, Refunds.refundOf(trade))).refund_amount).toBe("39.67")
        expect(yield* invariant).toEqual({ collected: 6000n, refunded: 3967n, balance: 2033n })
        // the next cycle spends the credit: 30.00 − 20.33 = 9.67 charged
        yield* sandboxClock.advanceClock(merchantId, iso("2024-02-01T00:00:00Z"))
        expect((yield* invoicesOf(merchantId, sub)).map((i) => [i.invoice_type, i.amount])).toEqual([
          ["initial", "60.00"],
          ["refund", "39.67"],
          ["renewal", "9.67"]
        ])
        // a downgrade in it credits from what it was paid, in money and in credit (30.00), no more
        yield* sandboxClock.advanceClock(merchantId, iso("2024-02-15T00:00:00Z"))
        const back = yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub, { priceId: priceId }))
        expect(back.outcome).toBe("upgrade")
        expect(yield* invariant).toMatchObject({ refunded: 3967n, balance: 0n })
        yield* invariant
      }),
    60_000
  )

  it.effect("3-D Secure: requires action, the challenge approves, the subscription starts", () =>
    Effect.gen(function* () {
      const reconciliation = yield* Reconciliation.Reconciliation
      const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
      const { result } = yield* subscribe(merchantId, priceId, "4000000000003220")
      expect(result.status).toBe("requires_action")
      expect(result.trade.next_action?.redirect.url).toContain(result.trade.trade_id)
      expect(result.subscription.pipe((o) => (o._tag === "Some" ? o.value.status : undefined))).toBe("init")
      yield* (yield* SandboxGateway.SandboxControls).completeChallenge(result.trade.trade_id, true)
      const done = yield* reconciliation.reconcileTrade(merchantId, result.trade.trade_id)
      expect(done.status).toBe("succeeded")
      expect(done.subscription.pipe((o) => (o._tag === "Some" ? o.value.status : undefined))).toBe("active")
    })
  )

  it.effect("unknown outcome: the trade stays processing until reconciliation, charged once", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
      const { result } = yield* subscribe(merchantId, priceId, "4000000000000119")
      expect(result.status).toBe("processing")
      expect((yield* billing.getTrade(merchantId, result.trade.trade_id)).trade_status).toBe("processing")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-01-01T00:05:00Z"))
      expect((yield* billing.getTrade(merchantId, result.trade.trade_id)).trade_status).toBe("succeeded")
      expect(yield* (yield* SandboxGateway.SandboxControls).chargeAttempts(result.trade.trade_id)).toBe(1)
      const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("active")
    })
  )
}
