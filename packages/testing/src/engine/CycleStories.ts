/**
 * Engine scenarios of cycles on the clock: a year of monthly renewals from a Jan 31 anchor, bounded
 * advances, concurrent pays of one session, a failing renewal set aside, free and paid trials, and
 * renewals billed in batches. Registered in order by `EngineScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Checkout,
  Entities,
  Merchants,
  PriceChanges,
  SandboxClock,
  SessionPayments,
  Store,
  Subscription,
  Subscriptions,
  Worker
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { DateTime, Effect, Option } from "effect"
import { day, eventsOf, invoicesOf, iso, setup, subscribe, type Services, card, openSession } from "../ScenarioKit.js"

/**
 * Registers the cycle scenarios.
 *
 * @since 0.1.0
 */
export const cycleStories = (it: Vitest.MethodsNonLive<Services>) => {
  it.effect(
    "monthly over 13 months from a Jan 31 anchor: one invoice per cycle, periods clamp and return to the 31st",
    () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const checkout = yield* Checkout.Checkout
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-01-31T10:00:00Z")
        const { result, session } = yield* subscribe(merchantId, priceId)
        expect(result.status).toBe("succeeded")
        const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        expect(sub.status).toBe("active")
        expect((yield* checkout.getSession(merchantId, session.session_id)).status).toBe("complete")
        yield* sandboxClock.advanceClock(merchantId, iso("2025-03-01T00:00:00Z"))
        const invoices = yield* invoicesOf(merchantId, sub.id)
        expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.amount, i.biz_status])).toEqual([
          ["initial", 0, "30.00", "success"],
          ...Array.from({ length: 13 }, (_, i) => ["renewal", i + 1, "30.00", "success"])
        ])
        const after = yield* billing.getSubscription(merchantId, sub.id)
        expect(after.cycle_index).toBe(13)
        expect([
          day(DateTime.toEpochMillis(after.current_period_start!)),
          day(DateTime.toEpochMillis(after.current_period_end!))
        ]).toEqual(["2025-02-28", "2025-03-31"])
        const events = yield* eventsOf(merchantId, sub.id)
        expect(events).toEqual(["v2.subscription.first"])
        const paidEvents = (yield* Effect.forEach(invoices, (i) => eventsOf(merchantId, i.invoice_id))).flat()
        expect(paidEvents).toEqual(Array.from({ length: 14 }, () => "v2.invoice.paid"))
        // running the clock again over the same time bills nothing twice
        yield* sandboxClock.advanceClock(merchantId, iso("2025-03-01T00:00:00Z"))
        expect(yield* invoicesOf(merchantId, sub.id)).toHaveLength(14)
      })
  )

  it.effect(
    "a bounded advance stops at an instant whose due work is all done, answers complete: false, and the next call continues",
    () =>
      Effect.gen(function* () {
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-01-31T10:00:00Z")
        const subs = []
        for (let i = 0; i < 3; i++) {
          const { result } = yield* subscribe(merchantId, priceId)
          subs.push(result.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))!)
        }
        const target = iso("2025-03-01T00:00:00Z")
        // 3 subscriptions × 13 monthly renewals (and their deliveries): 7 items per call at most
        const first = yield* sandboxClock.advanceTo(merchantId, target, { maxItems: 7 })
        expect(first.complete).toBe(false)
        expect(first.ran).toBeLessThanOrEqual(7)
        const shown = DateTime.toEpochMillis(first.merchant.frozen_time!)
        expect(shown).toBeLessThan(target)
        // the clock shows an instant whose due work is all done
        const storage = yield* Store.Storage
        const pending = yield* storage.workQueue.nextDue(merchantId)
        expect(pending._tag === "Some" && pending.value > shown).toBe(true)
        let calls = 1
        let last = first
        while (!last.complete) {
          last = yield* sandboxClock.advanceTo(merchantId, target, { maxItems: 7 })
          expect(DateTime.toEpochMillis(last.merchant.frozen_time!)).toBeGreaterThanOrEqual(shown)
          calls++
          expect(calls).toBeLessThan(100)
        }
        expect(DateTime.toEpochMillis(last.merchant.frozen_time!)).toBe(target)

        // the rest of a bounded advance in the background: refused meanwhile, done in the end
        const later = iso("2025-09-01T00:00:00Z")
        const bounded = yield* sandboxClock.advanceTo(merchantId, later, { maxItems: 2 })
        expect(bounded.complete).toBe(false)
        yield* sandboxClock.continueInBackground(merchantId, later, 2)
        const busy = yield* Effect.flip(sandboxClock.advanceTo(merchantId, later))
        expect(busy._tag).toBe("StateConflict")
        let clock = yield* sandboxClock.clockOf(merchantId)
        for (let i = 0; i < 1500 && Option.isSome(clock.target); i++) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 20)))
          clock = yield* sandboxClock.clockOf(merchantId)
        }
        expect(Option.isNone(clock.target)).toBe(true)
        expect(DateTime.toEpochMillis(clock.merchant.frozen_time!)).toBe(later)
        // the same invoices as unbounded advances: 19 renewals each, none twice
        for (const id of subs) {
          const invoices = yield* invoicesOf(merchantId, id)
          expect(invoices.map((i) => [i.invoice_type, i.cycle_index])).toEqual([
            ["initial", 0],
            ...Array.from({ length: 19 }, (_, i) => ["renewal", i + 1])
          ])
        }
      })
  )

  it.effect(
    "concurrent pays of one session charge it once: 30 at once, double-clicks on 10 sessions, racing retries after a decline",
    () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sessionPayments = yield* SessionPayments.SessionPayments
        const checkout = yield* Checkout.Checkout
        const { merchantId, priceId } = yield* setup("2024-03-01T00:00:00Z")
        const tradesOf = (sessionId: string) =>
          Effect.map(billing.listTrades(merchantId, { limit: 100, filters: [] }), (p) =>
            p.list.filter((t) => t.session_id === sessionId)
          )
        const subsOf = (_sessionId: string) =>
          Effect.map(
            billing.listSubscriptions(merchantId, { limit: 100, filters: [] }),
            (p) => p.list.filter((s) => s.source_trade_id !== null).length
          )
        const race = (sessionId: string, n: number, number = "4242424242424242") =>
          Effect.all(
            Array.from({ length: n }, () =>
              Effect.result(sessionPayments.paySession(merchantId, sessionId, card(number)))
            ),
            { concurrency: "unbounded" }
          )
        const newSession = () =>
          openSession(merchantId, {
            payer_id: `payer-${Math.random().toString(36).slice(2)}`,
            line_items: [{ price_id: priceId }]
          })
        const subsBefore = yield* subsOf("")
        const s = yield* newSession()
        const results = yield* race(s.session_id, 30)
        const ok = results.filter((r) => r._tag === "Success")
        expect(ok.length).toBeGreaterThanOrEqual(1)
        // every other answer is the documented conflict, never a defect
        for (const r of results)
          if (r._tag === "Failure") expect(r.failure).toMatchObject({ _tag: "SessionNotPayable" })
        expect(new Set(ok.map((r) => r.success.trade.trade_id)).size).toBe(1)
        const trades = yield* tradesOf(s.session_id)
        expect(trades.map((t) => [t.trade_status, t.amount])).toEqual([["succeeded", "30.00"]])
        expect(yield* (yield* SandboxGateway.SandboxControls).chargeAttempts(trades[0]!.trade_id)).toBe(1)
        expect(yield* subsOf("")).toBe(subsBefore + 1)
        expect((yield* checkout.getSession(merchantId, s.session_id)).status).toBe("complete")
        // a double-click on each of 10 sessions
        const sessions = yield* Effect.forEach(Array.from({ length: 10 }), () => newSession())
        yield* Effect.forEach(sessions, (x) => race(x.session_id, 2), { concurrency: "unbounded" })
        for (const x of sessions)
          expect((yield* tradesOf(x.session_id)).map((t) => t.trade_status)).toEqual(["succeeded"])
        expect(yield* subsOf("")).toBe(subsBefore + 11)
        // a declined first attempt, then 8 racing retries with a good card: one more attempt charges it
        const d = yield* newSession()
        expect((yield* sessionPayments.paySession(merchantId, d.session_id, card("4000000000000002"))).status).toBe(
          "failed"
        )
        const retries = yield* race(d.session_id, 8)
        for (const r of retries)
          if (r._tag === "Failure") expect(r.failure).toMatchObject({ _tag: "SessionNotPayable" })
        const paid = yield* tradesOf(d.session_id)
        expect(paid.map((t) => t.trade_status)).toEqual(["succeeded"])
        expect(yield* subsOf("")).toBe(subsBefore + 12)
      })
  )

  it.effect(
    "a renewal that keeps failing is set aside after 8 attempts and never holds back the merchant's other renewals",
    () =>
      Effect.gen(function* () {
        const sandboxClock = yield* SandboxClock.SandboxClock
        const storage = yield* Store.Storage
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const broken = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
        const fine = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
        // a record the engine cannot renew (its price version is gone)
        const repo = storage.repository(Entities.subscription)
        const sv = Option.getOrThrow(yield* repo.get(merchantId, broken.id))
        yield* repo.update(
          {
            ...sv.value,
            subscription: new Subscription.Subscription(
              { ...sv.value.subscription, price_version_id: "prv_gone" },
              { disableChecks: true }
            )
          },
          sv.version
        )
        yield* sandboxClock.advanceClock(merchantId, iso("2024-07-01T12:00:00Z"))
        expect(
          (yield* invoicesOf(merchantId, fine.id)).map((i) => [i.invoice_type, i.cycle_index, i.biz_status])
        ).toEqual([
          ["initial", 0, "success"],
          ["renewal", 1, "success"],
          ["renewal", 2, "success"],
          ["renewal", 3, "success"]
        ])
        expect((yield* invoicesOf(merchantId, broken.id)).map((i) => i.invoice_type)).toEqual(["initial"])
        const held = yield* storage.workQueue.listSetAside({ merchantId, limit: 10 })
        expect(held.map((w) => [w.kind, w.subject_id, w.attempts])).toEqual([
          ["renewal", broken.id, Worker.MAX_WORK_ATTEMPTS]
        ])
        expect(DateTime.formatIso((yield* (yield* Merchants.Merchants).get(merchantId)).frozen_time!)).toBe(
          "2024-07-01T12:00:00.000Z"
        )
      })
  )

  it.effect("free trial: a zero trial invoice, the expiring notice 3 days before, the first charge at trial end", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-03-01T00:00:00Z", {
        has_trial: true,
        trial_type: 0,
        trial_period: { trial_period_unit: "day", trial_period_count: 14 }
      })
      const { result } = yield* subscribe(merchantId, priceId)
      const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      expect(sub.status).toBe("trial")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-03-12T00:00:00Z"))
      expect(yield* eventsOf(merchantId, sub.id)).toEqual([
        "v2.subscription.first",
        "v2.subscription.trial_period_expiring"
      ])
      yield* sandboxClock.advanceClock(merchantId, iso("2024-03-16T00:00:00Z"))
      const invoices = yield* invoicesOf(merchantId, sub.id)
      expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.amount, i.biz_status])).toEqual([
        ["trial", 0, "0.00", "success"],
        ["renewal", 1, "30.00", "success"]
      ])
      const after = yield* billing.getSubscription(merchantId, sub.id)
      expect(after.status).toBe("active")
      expect(day(DateTime.toEpochMillis(after.current_period_end!))).toBe("2024-04-15")
    })
  )

  it.effect("paid trial charges its trial amount first", () =>
    Effect.gen(function* () {
      const { merchantId, priceId } = yield* setup("2024-03-01T00:00:00Z", {
        has_trial: true,
        trial_type: 1,
        trial_amount: "1.00",
        trial_period: { trial_period_unit: "week", trial_period_count: 1 }
      })
      const { result } = yield* subscribe(merchantId, priceId)
      expect(result.trade.amount).toBe("1.00")
      const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      yield* (yield* SandboxClock.SandboxClock).advanceClock(merchantId, iso("2024-03-09T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount])).toEqual([
        ["trial", "1.00"],
        ["renewal", "30.00"]
      ])
    })
  )

  it.effect(
    "renewals billed in batches end exactly as renewed one by one: plain, declined, trial, canceling, quantity change, fixed term",
    () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const subscriptions = yield* Subscriptions.Subscriptions
        const priceChanges = yield* PriceChanges.PriceChanges
        const catalog = yield* Catalog.Catalog
        // the same merchant story twice: one renewed in batches (the default), one item at a time
        const story = Effect.gen(function* () {
          const { merchantId, pv, priceId } = yield* setup("2024-05-31T09:00:00Z")
          const trial = yield* catalog.createPrice(merchantId, {
            name: "Pro trial",
            product_id: pv.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "12.34" },
            has_trial: true,
            trial_type: 0,
            trial_period: { trial_period_unit: "day", trial_period_count: 7 }
          })
          const id = (r: { readonly result: Billing.PaymentResult }) => Option.getOrThrow(r.result.subscription).id
          const subs = [
            ...(yield* Effect.forEach([1, 2, 3, 4, 5], () => subscribe(merchantId, priceId))).map(id),
            id(yield* subscribe(merchantId, priceId, "4000000000000341")),
            id(yield* subscribe(merchantId, trial.id)),
            id(yield* subscribe(merchantId, priceId, "4242424242424242", { total_cycles: 2 }))
          ]
          yield* subscriptions.cancel(merchantId, Subscriptions.cancelOf(subs[1]!, { when: "end_of_period" }))
          yield* priceChanges.changePrice(merchantId, PriceChanges.change(subs[2]!, { quantity: 3n }))
          return { merchantId, subs }
        })
        const batched = yield* story
        const alone = yield* story
        const to = iso("2024-09-02T00:00:00Z")
        yield* sandboxClock.advanceClock(batched.merchantId, to)
        yield* sandboxClock.advanceClock(alone.merchantId, to, { renewalBatch: 1 })
        const picture = (merchantId: string, subscriptionId: string) =>
          Effect.gen(function* () {
            const s = yield* billing.getSubscription(merchantId, subscriptionId)
            const invoices = yield* invoicesOf(merchantId, subscriptionId)
            const trades = yield* Effect.forEach(
              invoices.filter((i) => i.trade_id !== null),
              (i) => billing.getTrade(merchantId, i.trade_id!)
            )
            return {
              subscription: [
                s.status,
                s.cycle_index,
                s.quantity,
                s.current_period_start,
                s.current_period_end,
                s.next_invoice_date,
                s.cancel_at,
                s.credit_balance
              ],
              invoices: invoices.map((i) => [
                i.invoice_type,
                i.cycle_index,
                i.amount,
                i.biz_status,
                i.paid_at,
                i.tax_amount
              ]),
              trades: trades.map((t) => [t.amount, t.trade_status, t.paid_at, t.order_type, t.closed_reason]),
              events: [
                yield* eventsOf(merchantId, subscriptionId),
                ...(yield* Effect.forEach(invoices, (i) => eventsOf(merchantId, i.invoice_id))),
                ...(yield* Effect.forEach(trades, (t) => eventsOf(merchantId, t.trade_id)))
              ]
            }
          })
        const a = yield* Effect.forEach(batched.subs, (s) => picture(batched.merchantId, s))
        const b = yield* Effect.forEach(alone.subs, (s) => picture(alone.merchantId, s))
        expect(a).toEqual(b)
        // and the story itself: three monthly renewals of the plain ones, paid, each with its events
        expect(a[0]!.invoices.map((i) => i.slice(0, 4))).toEqual([
          ["initial", 0, "30.00", "success"],
          ["renewal", 1, "30.00", "success"],
          ["renewal", 2, "30.00", "success"],
          ["renewal", 3, "30.00", "success"]
        ])
        expect(a[0]!.events.slice(-3)).toEqual([
          ["v2.trades.created", "v2.trades.succeeded"],
          ["v2.trades.created", "v2.trades.succeeded"],
          ["v2.trades.created", "v2.trades.succeeded"]
        ])
        expect(a[1]!.subscription[0]).toBe("canceled")
        expect(a[2]!.invoices.map((i) => i[2])).toEqual(["30.00", "90.00", "90.00", "90.00"])
        expect(a[5]!.subscription[0]).not.toBe("active")
        expect(a[6]!.invoices.map((i) => i.slice(0, 4))).toEqual([
          ["trial", 0, "0.00", "success"],
          ["renewal", 1, "12.34", "success"],
          ["renewal", 2, "12.34", "success"],
          ["renewal", 3, "12.34", "success"]
        ])
        expect(a[7]!.subscription[0]).not.toBe("active")
        // a second pass over the same time bills nothing again
        yield* sandboxClock.advanceClock(batched.merchantId, to)
        expect(yield* Effect.forEach(batched.subs, (s) => picture(batched.merchantId, s))).toEqual(a)
      })
  )
}
