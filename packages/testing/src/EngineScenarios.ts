/**
 * Merchant stories run through the billing engine on a frozen sandbox clock, checking every
 * invoice amount, status and event. Run against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Checkout,
  Customer,
  Customers,
  Engine,
  Entities,
  Merchant,
  Merchants,
  Metering,
  Ports,
  PriceChanges,
  type PriceRules,
  Reconciliation,
  Refunds,
  SandboxClock,
  Secrets,
  SessionPayments,
  Settings,
  Store,
  Subscription,
  Subscriptions,
  Worker
} from "@recur/core"
import { Requests } from "@recur/contract"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Clock, DateTime, Deferred, Duration, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as ServicesContract from "./ServicesContract.js"
import * as WebhookRecorder from "./WebhookRecorder.js"
import { usageEventsOf } from "./Fixtures.js"

/**
 * The whole engine on a storage layer, with the sandbox gateway.
 *
 * @since 0.1.0
 */
export const engine = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Engine.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(ServicesContract.testMasterKey))),
    Layer.provideMerge(
      Layer.mergeAll(
        SandboxGateway.layer(),
        Ports.fxStatic({ "USD:JPY": "150.5" }),
        Ports.taxNone,
        Settings.layer(),
        WebhookRecorder.layer
      )
    )
  )

const card = (number: string): Ports.CardInput => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })
const iso = (s: string) => Date.parse(s)
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** A sandbox merchant frozen at `start`, a product and a price. */
export const setup = (
  start: string,
  price: Partial<PriceRules.PriceInput> = {},
  merchant: Partial<Merchants.CreateMerchant> = {}
) =>
  Effect.gen(function* () {
    const { merchant: m } = yield* (yield* Merchants.Merchants).create({
      name: "Acme",
      currency: "USD",
      frozen_time: iso(start),
      ...merchant
    })
    const catalog = yield* Catalog.Catalog
    const product = yield* catalog.createProduct(m.merchant_id, { product_name: "Pro" })
    const pv = yield* catalog.createPrice(m.merchant_id, {
      name: "Pro monthly",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "30.00" },
      ...price
    })
    return { merchantId: m.merchant_id, priceId: pv.id, pv }
  })

/**
 * Opens a checkout session from the merchant API's body, decoded as the REST adapter and the
 * facade decode it (`@recur/contract`'s `Requests.sessionCommand`).
 */
const openSession = (merchantId: string, body: Requests.SessionRequest) =>
  Effect.flatMap(Requests.sessionCommand(body), (command) =>
    Checkout.Checkout.use((checkout) => checkout.createSession(merchantId, command))
  )

/** Checkout: a session for the price, paid with `number`. */
export const subscribe = (
  merchantId: string,
  priceId: string,
  number = "4242424242424242",
  extra: Partial<Requests.SessionRequest> = {}
) =>
  Effect.gen(function* () {
    const _billing = yield* Billing.Billing
    const sessionPayments = yield* SessionPayments.SessionPayments
    const session = yield* openSession(merchantId, {
      payer_id: `payer-${Math.random().toString(36).slice(2)}`,
      line_items: [{ price_id: priceId }],
      return_url: "https://shop.example/done",
      ...extra
    })
    const result = yield* sessionPayments.paySession(merchantId, session.session_id, card(number))
    return { session, result }
  })

/** Every invoice of a subscription, oldest first. */
export const invoicesOf = (merchantId: string, subscriptionId: string) =>
  Effect.map(
    Billing.Billing.use((b) =>
      b.listInvoices(merchantId, {
        limit: 100,
        filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
      })
    ),
    (p) => [...p.list].reverse()
  )

/** Event types written for an object, in order. */
export const eventsOf = (merchantId: string, businessId: string) =>
  Effect.gen(function* () {
    const page = yield* Effect.orDie(
      (yield* Store.Storage)
        .repository(Entities.webhookEvent)
        .list(merchantId, { limit: 100, filters: [{ column: "business_id", op: "in", values: [businessId] }] })
    )
    return [...page.list].sort((a, b) => a.sequence - b.sequence).map((e) => e.type)
  })

/**
 * Registers the scenario suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "120 seconds" })(`Engine scenarios: ${name}`, (it) => {
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

    it.effect(
      "free trial: a zero trial invoice, the expiring notice 3 days before, the first charge at trial end",
      () =>
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
        expect(tradeEvents).toEqual([
          "v2.trades.created",
          ...Array.from({ length: 5 }, () => "v2.trades.payment_failed")
        ])
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
          expect(second.result.subscription.pipe((o) => (o._tag === "Some" ? o.value.status : undefined))).toBe(
            "active"
          )
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

    it.effect(
      "a refund in flight that fails does not count: the trade is fully refunded only by refunds that succeeded",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
          const { result } = yield* subscribe(merchantId, priceId)
          const tradeId = result.trade.trade_id
          // a gateway that holds the 20.00 refund until released, then declines it
          const release = yield* Deferred.make<void>()
          const holding = Layer.effect(
            Ports.PaymentGateway,
            Effect.gen(function* () {
              const real = yield* Ports.PaymentGateway
              return Ports.PaymentGateway.of({
                ...real,
                refund: (request) =>
                  request.amount.amount === 2000n
                    ? Effect.as(Deferred.await(release), Ports.RefundOutcome.Failed({ code: "x", message: "declined" }))
                    : real.refund(request)
              })
            })
          )
          const refundWith = (amount: string) =>
            Refunds.Refunds.use((s) => s.refund(merchantId, Refunds.refundOf(tradeId, { amount }))).pipe(
              Effect.provide(Engine.layer.pipe(Layer.provide(holding)), { local: true })
            )
          const first = yield* Effect.forkChild(refundWith("20.00"))
          // wait until the 20.00 is reserved on the trade
          yield* Effect.gen(function* () {
            while ((yield* billing.getTrade(merchantId, tradeId)).total_refunded_amount !== "20.00")
              yield* Effect.yieldNow
          })
          const second = yield* refundWith("10.00")
          expect(second.refund_status).toBe("succeeded")
          // 30.00 reserved, but 20.00 of it is still in flight: not fully refunded yet
          expect((yield* billing.getTrade(merchantId, tradeId)).refund_status).toBe("partially_refunded")
          yield* Deferred.succeed(release, undefined)
          expect((yield* Fiber.join(first)).refund_status).toBe("failed")
          const trade = yield* billing.getTrade(merchantId, tradeId)
          expect([trade.refund_status, trade.total_refunded_amount]).toEqual(["partially_refunded", "10.00"])
          // the rest can still be refunded (through the real gateway), and then it is full
          const last = yield* Refunds.Refunds.use((s) =>
            s.refund(merchantId, Refunds.refundOf(tradeId, { amount: "20.00" }))
          )
          expect(last.refund_status).toBe("succeeded")
          const after = yield* billing.getTrade(merchantId, tradeId)
          expect([after.refund_status, after.total_refunded_amount]).toEqual(["refunded", "30.00"])
        }),
      60_000
    )

    it.effect("a declined first payment leaves the subscription incomplete; it expires after 23 hours", () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const checkout = yield* Checkout.Checkout
        const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
        const { result } = yield* subscribe(merchantId, priceId, "4000000000000002")
        expect(result.status).toBe("failed")
        expect(result.error.pipe((o) => (o._tag === "Some" ? o.value.code : undefined))).toBe("card_declined")
        const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        expect(sub.status).toBe("incomplete")
        const [pending] = yield* invoicesOf(merchantId, sub.id)
        // declined: the invoice is not issued (no number, no links)
        expect([pending!.biz_status, pending!.number, pending!.hosted_invoice_url]).toEqual(["pending", null, null])
        yield* sandboxClock.advanceClock(merchantId, iso("2024-01-02T00:00:00Z"))
        const after = yield* billing.getSubscription(merchantId, sub.id)
        expect([after.status, after.cancel_reason]).toEqual(["canceled", "incomplete_expired"])
        // the whole first payment ends through the machines: trade closed, invoice voided unnumbered, session expired
        const trade = yield* billing.getTrade(merchantId, result.trade.trade_id)
        expect([trade.trade_status, trade.closed_reason]).toEqual(["closed", "expired"])
        const [voided] = yield* invoicesOf(merchantId, sub.id)
        expect([voided!.biz_status, voided!.number]).toEqual(["void", null])
        expect((yield* checkout.getSession(merchantId, result.trade.session_id!)).status).toBe("expired")
        expect(yield* eventsOf(merchantId, sub.id)).toEqual(["v2.subscription.canceled"])
        expect(yield* eventsOf(merchantId, voided!.invoice_id)).toEqual(["v2.invoice.voided"])
        expect(yield* eventsOf(merchantId, trade.trade_id)).toEqual(["v2.trades.created", "v2.trades.payment_failed"])
      })
    )

    it.effect(
      "an abandoned 3-D Secure checkout ends with its session's expiry: trade closed, subscription canceled, invoice voided",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const sandboxClock = yield* SandboxClock.SandboxClock
          const checkout = yield* Checkout.Checkout
          const reconciliation = yield* Reconciliation.Reconciliation
          const sessionPayments = yield* SessionPayments.SessionPayments
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
          const { result, session } = yield* subscribe(merchantId, priceId, "4000000000003220")
          expect(result.status).toBe("requires_action")
          const sub = Option.getOrThrow(result.subscription)
          // an hour before the session expires nothing has ended
          yield* sandboxClock.advanceClock(merchantId, iso("2024-01-01T23:00:00Z"))
          expect((yield* billing.getTrade(merchantId, result.trade.trade_id)).trade_status).toBe("processing")
          expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("init")
          yield* sandboxClock.advanceClock(merchantId, iso("2024-01-02T00:00:00Z"))
          const trade = yield* billing.getTrade(merchantId, result.trade.trade_id)
          expect([trade.trade_status, trade.closed_reason, trade.next_action]).toEqual(["closed", "expired", null])
          const after = yield* billing.getSubscription(merchantId, sub.id)
          expect([after.status, after.cancel_reason]).toEqual(["canceled", "incomplete_expired"])
          const [voided] = yield* invoicesOf(merchantId, sub.id)
          expect([voided!.biz_status, voided!.number, voided!.hosted_invoice_url]).toEqual(["void", null, null])
          expect((yield* checkout.getSession(merchantId, session.session_id)).status).toBe("expired")
          expect(yield* eventsOf(merchantId, sub.id)).toEqual(["v2.subscription.canceled"])
          expect(yield* eventsOf(merchantId, voided!.invoice_id)).toEqual(["v2.invoice.voided"])
          // the challenge was canceled at the gateway: the payer can no longer pay it, nothing is charged
          expect(yield* (yield* SandboxGateway.SandboxControls).completeChallenge(result.trade.trade_id, true)).toBe(
            false
          )
          const gateway = yield* Ports.PaymentGateway
          expect((yield* gateway.retrieve(result.trade.trade_id))._tag).toBe("Failed")
          yield* reconciliation.reconcileTrade(merchantId, result.trade.trade_id)
          expect((yield* billing.getTrade(merchantId, result.trade.trade_id)).trade_status).toBe("closed")
          // a later pay of the expired session is refused
          const again = yield* Effect.flip(
            sessionPayments.paySession(merchantId, session.session_id, card("4242424242424242"))
          )
          expect(again._tag).toBe("SessionNotPayable")
        })
    )

    it.effect("a challenge approved at the processor but never reported: the expiry asks, and it is paid", () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
        const { result } = yield* subscribe(merchantId, priceId, "4000000000003220")
        const sub = Option.getOrThrow(result.subscription)
        yield* (yield* SandboxGateway.SandboxControls).completeChallenge(result.trade.trade_id, true)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-01-02T00:00:00Z"))
        expect((yield* billing.getTrade(merchantId, result.trade.trade_id)).trade_status).toBe("succeeded")
        expect((yield* billing.getSubscription(merchantId, sub.id)).status).toBe("active")
        const [first] = yield* invoicesOf(merchantId, sub.id)
        expect([first!.biz_status, first!.number]).toEqual(["success", "INV-000001"])
      })
    )

    it.effect(
      "on a live merchant the worker ends an abandoned checkout at its session's expiry on the Effect clock",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const worker = yield* Worker.Worker
          yield* TestClock.setTime(Date.UTC(2024, 0, 1))
          const { merchant } = yield* (yield* Merchants.Merchants).create({ name: "Live", currency: "USD" })
          const catalog = yield* Catalog.Catalog
          const product = yield* catalog.createProduct(merchant.merchant_id, { product_name: "Live" })
          const pv = yield* catalog.createPrice(merchant.merchant_id, {
            name: "Monthly",
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "9.00" }
          })
          const { result } = yield* subscribe(merchant.merchant_id, pv.id, "4000000000003220")
          const run = Effect.flatMap(Clock.currentTimeMillis, (now) => worker.runDue({ now, owner: "test" }))
          yield* TestClock.adjust("23 hours")
          yield* run
          expect((yield* billing.getTrade(merchant.merchant_id, result.trade.trade_id)).trade_status).toBe("processing")
          yield* TestClock.adjust("1 hour")
          yield* run
          expect((yield* billing.getTrade(merchant.merchant_id, result.trade.trade_id)).trade_status).toBe("closed")
          const sub = yield* billing.getSubscription(merchant.merchant_id, Option.getOrThrow(result.subscription).id)
          expect([sub.status, sub.cancel_reason]).toEqual(["canceled", "incomplete_expired"])
          expect((yield* invoicesOf(merchant.merchant_id, sub.id)).map((i) => i.biz_status)).toEqual(["void"])
        })
    )

    it.effect(
      "an issued invoice states the customer and the merchant as they were at issue, whatever changes after",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const storage = yield* Store.Storage
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
          const customers = yield* Customers.Customers
          const { id } = yield* customers.create(merchantId, {
            name: "Erika Mustermann",
            email: "erika@example.de",
            address: new Customer.Address({ line1: "Unter den Linden 1", city: "Berlin", country: "DE" })
          })
          const { result } = yield* subscribe(merchantId, priceId, "4242424242424242", { customer_id: id })
          const [issued] = yield* invoicesOf(merchantId, Option.getOrThrow(result.subscription).id)
          yield* customers.update(merchantId, {
            customer_id: id,
            name: "Jean Dupont",
            email: "jean@example.fr",
            address: new Customer.Address({ line1: "1 rue de Rivoli", city: "Paris", country: "FR" })
          })
          const merchants = storage.repository(Entities.merchant)
          const m = Option.getOrThrow(yield* merchants.get(merchantId, merchantId))
          yield* merchants.update(new Merchant.Merchant({ ...m.value, name: "Renamed Inc" }), m.version)
          const token = issued!.hosted_invoice_url!.split("/").at(-1)!
          const doc = Option.getOrThrow(yield* billing.invoiceDocument(issued!.invoice_id, token))
          expect([doc.merchantName, doc.customer]).toEqual([
            "Acme",
            { name: "Erika Mustermann", email: "erika@example.de", address: "Unter den Linden 1, Berlin, DE" }
          ])
          expect(yield* billing.getInvoice(merchantId, issued!.invoice_id)).toMatchObject({
            customer_name: "Erika Mustermann",
            merchant_name: "Acme"
          })
        })
    )

    it.effect(
      "invoice numbers go to paid invoices only: a declined and an abandoned checkout take none, a retry is paid under the next number",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const sessionPayments = yield* SessionPayments.SessionPayments
          const sandboxClock = yield* SandboxClock.SandboxClock
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
          const declined = yield* subscribe(merchantId, priceId, "4000000000000002")
          yield* subscribe(merchantId, priceId, "4000000000003220")
          const paid = yield* subscribe(merchantId, priceId)
          const retried = yield* sessionPayments.paySession(
            merchantId,
            declined.session.session_id,
            card("4242424242424242")
          )
          expect(retried.status).toBe("succeeded")
          const numberOf = (r: { readonly subscription: Option.Option<Subscription.Subscription> }) =>
            Effect.map(invoicesOf(merchantId, Option.getOrThrow(r.subscription).id), (l) => l[0]!.number)
          expect(yield* numberOf(paid.result)).toBe("INV-000001")
          // the retry of the declined checkout is paid under a fresh number, after the one paid meanwhile
          expect(yield* numberOf(retried)).toBe("INV-000002")
          yield* sandboxClock.advanceClock(merchantId, iso("2024-01-03T00:00:00Z"))
          const all = (yield* billing.listInvoices(merchantId, { limit: 100 })).list
          expect(
            all
              .filter((i) => i.number !== null)
              .map((i) => i.number)
              .sort()
          ).toEqual(["INV-000001", "INV-000002"])
          expect(all.filter((i) => i.number === null).map((i) => i.biz_status)).toEqual(["void"])
        })
    )

    it.effect("a customer retries a declined payment with another card on the same session", () =>
      Effect.gen(function* () {
        const sessionPayments = yield* SessionPayments.SessionPayments
        const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z")
        const { result, session } = yield* subscribe(merchantId, priceId, "4000000000009995")
        expect(result.status).toBe("failed")
        const second = yield* sessionPayments.paySession(merchantId, session.session_id, card("4242424242424242"))
        expect(second.status).toBe("succeeded")
        expect(second.trade.trade_id).toBe(result.trade.trade_id)
        expect(second.subscription.pipe((o) => (o._tag === "Some" ? o.value.status : undefined))).toBe("active")
        expect(yield* eventsOf(merchantId, second.trade.trade_id)).toEqual([
          "v2.trades.created",
          "v2.trades.payment_failed",
          "v2.trades.succeeded"
        ])
      })
    )

    it.effect("a fixed term of 3 cycles ends after the third paid cycle", () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-01-15T00:00:00Z")
        const { result } = yield* subscribe(merchantId, priceId, "4242424242424242", { total_cycles: 3 })
        const sub = result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        yield* sandboxClock.advanceClock(merchantId, iso("2024-06-01T00:00:00Z"))
        expect((yield* invoicesOf(merchantId, sub.id)).map((i) => i.cycle_index)).toEqual([0, 1, 2])
        const after = yield* billing.getSubscription(merchantId, sub.id)
        expect([after.status, after.cancel_reason, day(DateTime.toEpochMillis(after.cancel_at!))]).toEqual([
          "canceled",
          "term_completed",
          "2024-04-15"
        ])
      })
    )

    it.effect("JPY prices bill whole yen; a USD price settles in JPY at the merchant_rate", () =>
      Effect.gen(function* () {
        const sandboxClock = yield* SandboxClock.SandboxClock
        const jp = yield* setup(
          "2024-01-01T00:00:00Z",
          { currency: "JPY", price_plan: { billing_cycle_unit: "month", base_price_val: "3000" } },
          { currency: "JPY" }
        )
        const { result } = yield* subscribe(jp.merchantId, jp.priceId)
        expect([result.trade.amount, result.trade.currency]).toEqual(["3000", "JPY"])
        const us = yield* setup("2024-01-01T00:00:00Z")
        const converted = yield* subscribe(us.merchantId, us.priceId, "4242424242424242", {
          target_currency: "JPY",
          merchant_rate: 150.5
        })
        expect([converted.session.amount, converted.session.currency, converted.result.trade.amount]).toEqual([
          "4515",
          "JPY",
          "4515"
        ])
        const sub = converted.result.subscription.pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        yield* sandboxClock.advanceClock(us.merchantId, iso("2024-02-02T00:00:00Z"))
        expect((yield* invoicesOf(us.merchantId, sub.id)).map((i) => [i.amount, i.currency])).toEqual([
          ["4515", "JPY"],
          ["4515", "JPY"]
        ])
        const fxDay = yield* subscribe(us.merchantId, us.priceId, "4242424242424242", { target_currency: "JPY" })
        expect(fxDay.session.amount).toBe("4515")
      })
    )

    it.effect(
      "amounts are bounded at input: price × quantity, rates, usage and quantity changes; nothing is written",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const sandboxClock = yield* SandboxClock.SandboxClock
          const priceChanges = yield* PriceChanges.PriceChanges
          const metering = yield* Metering.Metering
          const catalog = yield* Catalog.Catalog
          const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {
            price_plan: { billing_cycle_unit: "month", base_price_val: "1000000000.00" }
          })
          const bad = (input: Requests.SessionRequest) => Effect.flip(openSession(merchantId, input))
          // 1,000,000,000.00 × 999,999,999 is far above 9,999,999,999.99
          expect(
            yield* bad({ email: "a@b.co", line_items: [{ price_id: priceId, quantity: "999999999" }] })
          ).toMatchObject({ _tag: "SessionRefused", reason: "quantity" })
          expect(yield* bad({ email: "a@b.co", line_items: [{ price_id: priceId, quantity: "10" }] })).toMatchObject({
            _tag: "SessionRefused",
            reason: "quantity"
          })
          expect(
            (yield* openSession(merchantId, {
              email: "a@b.co",
              line_items: [{ price_id: priceId, quantity: "9" }]
            })).amount
          ).toBe("9000000000.00")
          // rates: out of range, too precise, or rounding a price to nothing
          const thirty = (yield* catalog.createPrice(merchantId, {
            name: "30",
            product_id: (yield* catalog.listProducts(merchantId, {})).list[0]!.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
          })).id
          const line = [{ price_id: thirty }]
          for (const merchant_rate of [1e308, "1e308", 1000001, "0.0000000000001", -1]) {
            expect(
              yield* bad({ email: "a@b.co", line_items: line, target_currency: "EUR", merchant_rate })
            ).toMatchObject({ param: "merchant_rate" })
          }
          expect(
            yield* bad({ email: "a@b.co", line_items: line, target_currency: "EUR", merchant_rate: 1e-7 })
          ).toMatchObject({
            _tag: "SessionRefused",
            reason: "rate",
            rateGiven: true,
            detail: expect.stringContaining("into 0")
          })
          expect(
            yield* bad({
              email: "a@b.co",
              line_items: [{ price_id: priceId }],
              target_currency: "JPY",
              merchant_rate: 1000
            })
          ).toMatchObject({ _tag: "SessionRefused", reason: "quantity" })
          expect(
            yield* bad({ email: "a@b.co", mode: "payment", amount: "10000000000.00", currency: "USD" })
          ).toMatchObject({ _tag: "SessionRefused", reason: "amount" })
          // a price above the bound is refused where it is created
          expect(
            yield* Effect.flip(
              catalog.createPrice(merchantId, {
                name: "huge",
                product_id: (yield* catalog.listProducts(merchantId, {})).list[0]!.product_id,
                currency: "USD",
                billing_type: "one_time",
                price_type: "flat_price",
                price_val: "10000000000.00"
              })
            )
          ).toMatchObject({ _tag: "InvalidParameter", param: "price_val" })
          // a quantity change that would bill above the bound
          const sub = Option.getOrThrow((yield* subscribe(merchantId, thirty)).result.subscription)
          expect(
            yield* Effect.flip(
              priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { quantity: 999999999n }))
            )
          ).toMatchObject({ _tag: "QuantityRefused", subscriptionId: sub.id })
          expect(
            yield* Effect.flip(
              priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: priceId, quantity: 100n }))
            )
          ).toMatchObject({ _tag: "QuantityRefused" })
          expect((yield* billing.getSubscription(merchantId, sub.id)).pending_change).toBe(null)
          // usage: one event near 2^53, or a cycle that would bill above the bound
          const usagePrice = (yield* catalog.createPrice(merchantId, {
            name: "calls",
            product_id: (yield* catalog.listProducts(merchantId, {})).list[0]!.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "based_on_usage",
            model_type: "per_unit",
            billing_threshold: "1",
            usage_unit_price: "1000.00",
            payment_timing: "postpaid",
            billing_dimension: "usage",
            usage_amount: "1",
            usage_unit: "call",
            price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
          })).id
          const metered = Option.getOrThrow((yield* subscribe(merchantId, usagePrice)).result.subscription)
          expect(
            yield* Effect.flip(metering.recordUsage(merchantId, Subscriptions.usageOf(metered.id, 2 ** 53 - 1)))
          ).toMatchObject({ _tag: "UsageRefused", reason: "count" })
          yield* metering.recordUsage(merchantId, Subscriptions.usageOf(metered.id, 9_000_000))
          expect(
            yield* Effect.flip(
              metering.recordUsageBatch(
                merchantId,
                usageEventsOf([
                  { subscription_id: metered.id, usage_count: 1 },
                  { subscription_id: metered.id, usage_count: 1_000_000 }
                ])
              )
            )
          ).toMatchObject({ _tag: "UsageRefused", reason: "above_bound", index: 0, subscriptionId: metered.id })
          const summary = yield* metering.usageSummary(merchantId, metered.id)
          expect([summary.total_usage_count, summary.billing_amount]).toEqual([9_000_000, "9000000000.00"])
          yield* sandboxClock.advanceClock(merchantId, iso("2024-02-01T00:00:00Z"))
          expect(
            (yield* invoicesOf(merchantId, metered.id)).map((i) => [i.invoice_type, i.amount, i.biz_status])
          ).toEqual([
            ["initial", "0.00", "success"],
            ["renewal", "9000000000.00", "success"]
          ])
        })
    )

    it.effect("checkout validation: identity, rates, URLs, channels, inactive prices", () =>
      Effect.gen(function* () {
        const _billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const checkout = yield* Checkout.Checkout
        const sessionPayments = yield* SessionPayments.SessionPayments
        const { merchantId, priceId, pv } = yield* setup("2024-01-01T00:00:00Z")
        const bad = (input: Requests.SessionRequest) => Effect.flip(openSession(merchantId, input))
        const line = [{ price_id: priceId }]
        expect(yield* bad({ line_items: line })).toMatchObject({ _tag: "InvalidParameter" })
        expect(yield* bad({ email: "a@b.co", line_items: line, merchant_rate: 2 })).toMatchObject({
          param: "merchant_rate"
        })
        expect(
          yield* bad({ email: "a@b.co", line_items: line, target_currency: "JPY", merchant_rate: 0 })
        ).toMatchObject({ param: "merchant_rate" })
        expect(
          yield* bad({ email: "a@b.co", line_items: line, terms_of_service_url: "http://x.example" })
        ).toMatchObject({ param: "terms_of_service_url" })
        expect(
          yield* bad({ email: "a@b.co", line_items: line, privacy_policy_url: `https://x.example/${"a".repeat(520)}` })
        ).toMatchObject({ param: "privacy_policy_url" })
        expect(yield* bad({ email: "a@b.co", line_items: line, first_source_channel: "x".repeat(51) })).toMatchObject({
          param: "first_source_channel"
        })
        expect(yield* bad({ email: "a@b.co", line_items: [...line, ...line] })).toMatchObject({ param: "line_items" })
        expect(yield* bad({ customer_id: "cus_missing", line_items: line })).toMatchObject({
          _tag: "SessionRefused",
          reason: "customer"
        })
        expect(yield* bad({ customer_id: "not-an-id", line_items: line })).toMatchObject({ param: "customer_id" })
        expect(yield* bad({ email: "a@b.co", mode: "payment" })).toMatchObject({ param: "amount" })
        expect(yield* bad({ email: "a@b.co", line_items: [{ price_id: priceId, quantity: "0" }] })).toMatchObject({
          _tag: "InvalidParameter"
        })
        const ok = yield* openSession(merchantId, {
          email: "a@b.co",
          line_items: line,
          terms_of_service_url: ""
        })
        expect(ok.session_url).toContain(`/checkout/${ok.session_id}`)
        const payment = yield* openSession(merchantId, {
          email: "a@b.co",
          mode: "payment",
          amount: "12.5",
          currency: "USD"
        })
        expect(payment.amount).toBe("12.50")
        yield* (yield* Catalog.Catalog).setVersionStatus(merchantId, pv.price_version_id, "frozen")
        expect(yield* bad({ email: "a@b.co", line_items: line })).toMatchObject({ _tag: "StateConflict" })
        // sessions expire after 24 h
        yield* sandboxClock.advanceClock(merchantId, iso("2024-01-02T00:00:01Z"))
        expect((yield* checkout.getSession(merchantId, ok.session_id)).status).toBe("expired")
        expect(
          yield* Effect.flip(sessionPayments.paySession(merchantId, ok.session_id, card("4242424242424242")))
        ).toMatchObject({
          _tag: "SessionNotPayable",
          sessionId: ok.session_id,
          state: "expired"
        })
      })
    )
  })
