/**
 * Engine scenarios of checkouts and their invoices: refunds in flight, abandoned and expiring
 * checkouts, challenges never reported, invoices as issued and their numbers, retries with another
 * card, fixed terms, JPY and settlement rates, bounds at input and checkout validation.
 * Registered in order by `EngineScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
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
  Reconciliation,
  Ports,
  PriceChanges,
  Refunds,
  SandboxClock,
  SessionPayments,
  Store,
  type Subscription,
  Subscriptions,
  Worker
} from "@recur/core"
import type { Requests } from "@recur/contract"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Clock, DateTime, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { day, eventsOf, invoicesOf, iso, setup, subscribe, type Services, card, openSession } from "../ScenarioKit.js"
import { usageEventsOf } from "../Fixtures.js"

/**
 * Registers the checkout scenarios.
 *
 * @since 0.1.0
 */
export const checkoutStories = (it: Vitest.MethodsNonLive<Services>) => {
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
        ).toMatchObject({ _tag: "PriceRuleViolation", issues: [{ field: "price_val" }] })
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
      expect(yield* bad({ email: "a@b.co", line_items: line, target_currency: "JPY", merchant_rate: 0 })).toMatchObject(
        { param: "merchant_rate" }
      )
      expect(yield* bad({ email: "a@b.co", line_items: line, terms_of_service_url: "http://x.example" })).toMatchObject(
        { param: "terms_of_service_url" }
      )
      expect(
        yield* bad({ email: "a@b.co", line_items: line, privacy_policy_url: `https://x.example/${"a".repeat(520)}` })
      ).toMatchObject({ param: "privacy_policy_url" })
      expect(yield* bad({ email: "a@b.co", line_items: line, first_source_channel: "x".repeat(51) })).toMatchObject({
        param: "first_source_channel"
      })
      // several line items make one subscription (issue 33), each price once
      expect(yield* bad({ email: "a@b.co", line_items: [...line, ...line] })).toMatchObject({
        _tag: "SessionRefused",
        reason: "price",
        item: 1
      })
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
}
