/**
 * Subscription scenarios of price and quantity changes: upgrades and downgrades with proration
 * (preview equals commit), several changes in one cycle, discounts through a change, proration
 * none, changes at the period's end and quantity changes. Registered in order by
 * `SubscriptionScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import { Requests } from "@recur/contract"
import { Billing, Catalog, Entities, Invoicing, Money, PriceChanges, SandboxClock, Store } from "@recur/core"
import type { Invoice } from "@recur/core"
import { Effect, Option } from "effect"
import {
  eventsOf,
  invoicesOf,
  setup,
  subscribe,
  type Services,
  iso,
  minor,
  monthlyOfFirstProduct,
  subscriptionOf
} from "../ScenarioKit.js"

/** What a cycle cost the customer in minor units: its invoices less its refunds. */
const cycleNet = (invoices: ReadonlyArray<Invoice.Invoice>, cycle: number) =>
  invoices
    .filter((i) => i.cycle_index === cycle)
    .reduce((a, i) => (i.invoice_type === "refund" ? a - minor(i.amount) : a + minor(i.amount)), 0n)

/**
 * Registers the price-change scenarios.
 *
 * @since 0.1.0
 */
export const priceChangeStories = (it: Vitest.MethodsNonLive<Services>) => {
  it.effect(
    "upgrade half-way with immediate proration: preview equals commit, +5.00 charged now, the next renewal bills the new price",
    () =>
      Effect.gen(function* () {
        const priceChanges = yield* PriceChanges.PriceChanges
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
          price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
        })
        const pro = yield* monthlyOfFirstProduct(merchantId, "20.00")
        const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-04-16T00:00:00Z"))
        const quote = yield* priceChanges.previewChange(
          merchantId,
          PriceChanges.change(sub.id, {
            priceId: pro,
            effective: "immediate",
            proration: "immediate"
          })
        )
        expect([quote.credit, quote.charge, quote.net, quote.outcome]).toEqual(["5.00", "10.00", "5.00", "upgrade"])
        const committed = yield* priceChanges.changePrice(
          merchantId,
          PriceChanges.change(sub.id, {
            priceId: pro,
            effective: "immediate",
            proration: "immediate",
            quoteId: quote.quote_id
          })
        )
        expect(committed).toEqual(quote)
        // the quote is spent: the subscription moved
        expect(
          (yield* Effect.flip(
            priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: pro, quoteId: quote.quote_id }))
          ))._tag
        ).toBe("QuoteStale")
        const invoices = yield* invoicesOf(merchantId, sub.id)
        expect(invoices.map((i) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
          ["initial", "10.00", "success"],
          ["upgrade", "5.00", "success"]
        ])
        expect((yield* billing.getSubscription(merchantId, sub.id)).price_id).toBe(pro)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
        expect((yield* invoicesOf(merchantId, sub.id)).map((i) => i.amount)).toEqual(["10.00", "5.00", "20.00"])
        expect(yield* eventsOf(merchantId, sub.id)).toEqual(["v2.subscription.first", "v2.subscription.price_changed"])
      })
  )

  it.effect(
    "two changes in one cycle credit the plan in force: 10 → 20 → 30 on Jan 16 costs 20.32 for January (was 25.48)",
    () =>
      Effect.gen(function* () {
        const priceChanges = yield* PriceChanges.PriceChanges
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {
          price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
        })
        const twenty = yield* monthlyOfFirstProduct(merchantId, "20.00")
        const thirty = yield* monthlyOfFirstProduct(merchantId, "30.00")
        const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        const other = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-01-16T00:00:00Z"))
        // 16 of 31 days left: 10.00 → 5.16, 20.00 → 10.32, 30.00 → 15.48
        const first = yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: twenty }))
        expect([first.credit, first.charge, first.net]).toEqual(["5.16", "10.32", "5.16"])
        const preview = yield* priceChanges.previewChange(merchantId, PriceChanges.change(sub.id, { priceId: thirty }))
        const second = yield* priceChanges.changePrice(
          merchantId,
          PriceChanges.change(sub.id, { priceId: thirty, quoteId: preview.quote_id })
        )
        expect(second).toEqual(preview)
        expect([second.credit, second.charge, second.net]).toEqual(["10.32", "15.48", "5.16"])
        const invoices = yield* invoicesOf(merchantId, sub.id)
        expect(invoices.map((i) => [i.invoice_type, i.amount])).toEqual([
          ["initial", "10.00"],
          ["upgrade", "5.16"],
          ["upgrade", "5.16"]
        ])
        expect(cycleNet(invoices, 0)).toBe(2032n)
        // the two changes at one instant equal one: 10 → 30 directly nets the same 10.32
        expect(
          (yield* priceChanges.previewChange(merchantId, PriceChanges.change(other.id, { priceId: thirty }))).net
        ).toBe("10.32")
      })
  )

  it.effect("10 → 20 → 10 at one instant nets 0.00: the 5.16 paid for the upgrade is refunded", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {
        price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
      })
      const twenty = yield* monthlyOfFirstProduct(merchantId, "20.00")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-01-16T00:00:00Z"))
      yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: twenty }))
      const back = yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: priceId }))
      expect([back.credit, back.charge, back.net, back.outcome]).toEqual(["10.32", "5.16", "-5.16", "refund"])
      const invoices = yield* invoicesOf(merchantId, sub.id)
      const upgrade = invoices.find((i) => i.invoice_type === "upgrade")!
      expect(invoices.map((i) => [i.invoice_type, i.amount, i.biz_status, i.original_invoice_id])).toEqual([
        ["initial", "10.00", "success", null],
        ["upgrade", "5.16", "refunded", null],
        ["refund", "5.16", "success", upgrade.invoice_id]
      ])
      expect(cycleNet(invoices, 0)).toBe(1000n)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-02-01T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).at(-1)!.amount).toBe("10.00")
    })
  )

  it.effect(
    "three 30 ↔ 60 round trips in one cycle: the cycle costs what the plans in force cost (30.00 at one instant, 40.00 over ten days)",
    () =>
      Effect.gen(function* () {
        const priceChanges = yield* PriceChanges.PriceChanges
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const sixty = yield* monthlyOfFirstProduct(merchantId, "60.00")
        const a = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        const b = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-04-11T00:00:00Z"))
        for (let i = 0; i < 3; i++) {
          expect((yield* priceChanges.changePrice(merchantId, PriceChanges.change(a.id, { priceId: sixty }))).net).toBe(
            "20.00"
          )
          expect(
            (yield* priceChanges.changePrice(merchantId, PriceChanges.change(a.id, { priceId: priceId }))).net
          ).toBe("-20.00")
        }
        const ia = yield* invoicesOf(merchantId, a.id)
        expect(ia.filter((i) => i.invoice_type === "upgrade").map((i) => i.amount)).toEqual(["20.00", "20.00", "20.00"])
        expect(ia.filter((i) => i.invoice_type === "refund").map((i) => i.amount)).toEqual(["20.00", "20.00", "20.00"])
        expect(cycleNet(ia, 0)).toBe(3000n)
        // b: on 60.00 from Apr 11 to Apr 21 (10 of 30 days), then back: 30.00 + 30.00 × 10/30
        yield* priceChanges.changePrice(merchantId, PriceChanges.change(b.id, { priceId: sixty }))
        yield* sandboxClock.advanceClock(merchantId, iso("2024-04-21T00:00:00Z"))
        expect((yield* priceChanges.changePrice(merchantId, PriceChanges.change(b.id, { priceId: priceId }))).net).toBe(
          "-10.00"
        )
        expect(cycleNet(yield* invoicesOf(merchantId, b.id), 0)).toBe(4000n)
      })
  )

  it.effect("a downgrade under credit_balance after an upgrade credits what the upgrade paid", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {}, { proration_credit: "credit_balance" })
      const sixty = yield* monthlyOfFirstProduct(merchantId, "60.00")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-04-11T00:00:00Z"))
      yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: sixty }))
      yield* sandboxClock.advanceClock(merchantId, iso("2024-04-21T00:00:00Z"))
      yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: priceId }))
      expect((yield* billing.getSubscription(merchantId, sub.id)).credit_balance).toBe("10.00")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "30.00"],
        ["upgrade", "20.00"],
        ["renewal", "20.00"]
      ])
    })
  )

  it.effect(
    "an interval switch is immediate only (end_of_period is a 400), a one-time price is a 400; refusals and previews change nothing",
    () =>
      Effect.gen(function* () {
        const priceChanges = yield* PriceChanges.PriceChanges
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const catalog = yield* Catalog.Catalog
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const productId = (yield* catalog.listProducts(merchantId, {})).list[0]!.product_id
        const recurring = (unit: "month" | "year", count: number) =>
          Effect.map(
            catalog.createPrice(merchantId, {
              name: `every ${count} ${unit}`,
              product_id: productId,
              currency: "USD",
              billing_type: "recurring",
              price_type: "flat_price",
              price_plan: { billing_cycle_unit: unit, billing_cycle_count: count, base_price_val: "300.00" }
            }),
            (p) => p.id
          )
        const yearly = yield* recurring("year", 1)
        const quarterly = yield* recurring("month", 3)
        const oneTime = (yield* catalog.createPrice(merchantId, {
          name: "setup fee",
          product_id: productId,
          currency: "USD",
          billing_type: "one_time",
          price_type: "flat_price",
          price_val: "50.00"
        })).id
        const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-04-11T00:00:00Z"))
        for (const price_id of [yearly, quarterly, oneTime]) {
          for (const effective_type of ["immediate", "end_of_period"] as const) {
            // an immediate interval switch goes through a quote (issue 33): previewed, not refused
            if (price_id !== oneTime && effective_type === "immediate") {
              const q = yield* priceChanges.previewChange(
                merchantId,
                PriceChanges.change(sub.id, { priceId: price_id, effective: effective_type })
              )
              expect(q.outcome).toBe("interval_switch")
              continue
            }
            expect(
              yield* Effect.flip(
                priceChanges.changePrice(
                  merchantId,
                  PriceChanges.change(sub.id, { priceId: price_id, effective: effective_type })
                )
              )
            ).toMatchObject({
              _tag: "PriceChangeRefused",
              priceId: price_id,
              reason: price_id === oneTime ? "not_recurring" : "interval"
            })
            expect(
              yield* Effect.flip(
                priceChanges.previewChange(
                  merchantId,
                  PriceChanges.change(sub.id, { priceId: price_id, effective: effective_type })
                )
              )
            ).toMatchObject({
              _tag: "PriceChangeRefused",
              priceId: price_id,
              reason: price_id === oneTime ? "not_recurring" : "interval"
            })
          }
        }
        const after = yield* billing.getSubscription(merchantId, sub.id)
        expect([after.price_id, after.billing_cycle_unit]).toEqual([priceId, "month"])
        expect(yield* invoicesOf(merchantId, sub.id)).toHaveLength(1)
      })
  )

  it.effect("a subscription's discounts reach its invoices: after tax, on the invoice's Discounts", () =>
    Effect.gen(function* () {
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const storage = yield* Store.Storage
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      const repo = storage.repository(Entities.subscription)
      const sv = Option.getOrThrow(yield* repo.get(merchantId, sub.id))
      yield* repo.update(
        {
          ...sv.value,
          discounts: [
            // 10 % for one paid cycle (the next), 2.00 for every cycle
            {
              discount_id: "dis_10pct",
              discount_code: "TENOFF",
              basis_points: "1000",
              amount: null,
              first_cycle: 1,
              cycles: 1
            },
            {
              discount_id: "dis_2usd",
              discount_code: "TWO",
              basis_points: null,
              amount: "2.00",
              first_cycle: null,
              cycles: null
            }
          ]
        },
        sv.version
      )
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
      const renewal = (yield* invoicesOf(merchantId, sub.id)).at(-1)!
      expect([renewal.invoice_type, renewal.amount]).toEqual(["renewal", "25.00"])
      expect(renewal.Discounts.current_period).toEqual([
        { discount_id: "dis_10pct", discount_code: "TENOFF", discount_amount: "3.00" },
        { discount_id: "dis_2usd", discount_code: "TWO", discount_amount: "2.00" }
      ])
      // the one-cycle discount's window has passed; the other goes on
      yield* sandboxClock.advanceClock(merchantId, iso("2024-06-01T00:00:00Z"))
      const next = (yield* invoicesOf(merchantId, sub.id)).at(-1)!
      expect([next.cycle_index, next.amount]).toEqual([2, "28.00"])
      expect(next.Discounts.current_period).toEqual([
        { discount_id: "dis_2usd", discount_code: "TWO", discount_amount: "2.00" }
      ])
      // a draft's own discounts survive tax
      const draft = Invoicing.total({
        invoice_type: "renewal",
        cycle_index: 1,
        currency: "USD",
        lines: [{ kind: "subscription", description: "x", quantity: 1n, amount: Money.make(3000n, "USD") }],
        discounts: [
          Invoicing.DiscountRule.Amount({ discount_id: "d", discount_code: "D", amount: Money.make(500n, "USD") })
        ]
      })
      const taxed = yield* billing.withTax(draft, merchantId, sub.customer_id)
      expect([taxed.discounts.map((d) => d.amount.amount), taxed.total.amount]).toEqual([[500n], 2500n])
    })
  )

  it.effect("downgrade refunds the unused difference against the cycle's invoice", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
        price_plan: { billing_cycle_unit: "month", base_price_val: "20.00" }
      })
      const basic = yield* monthlyOfFirstProduct(merchantId, "10.00")
      const { result } = yield* subscribe(merchantId, priceId)
      const sub = subscriptionOf(result)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-04-16T00:00:00Z"))
      const quote = yield* priceChanges.changePrice(
        merchantId,
        PriceChanges.change(sub.id, {
          priceId: basic,
          effective: "immediate",
          proration: "immediate"
        })
      )
      expect([quote.net, quote.outcome]).toEqual(["-5.00", "refund"])
      const invoices = yield* invoicesOf(merchantId, sub.id)
      expect(invoices.map((i) => [i.invoice_type, i.amount, i.biz_status, i.original_invoice_id])).toEqual([
        ["initial", "20.00", "partially_refunded", null],
        ["refund", "5.00", "success", invoices[0]!.invoice_id]
      ])
      const trade = yield* billing.getTrade(merchantId, result.trade.trade_id)
      expect([trade.refund_status, trade.total_refunded_amount]).toEqual(["partially_refunded", "5.00"])
    })
  )

  it.effect("downgrade with credit_balance keeps the difference as credit for the next invoice", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup(
        "2024-04-01T00:00:00Z",
        { price_plan: { billing_cycle_unit: "month", base_price_val: "20.00" } },
        { proration_credit: "credit_balance" }
      )
      const basic = yield* monthlyOfFirstProduct(merchantId, "10.00")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-04-16T00:00:00Z"))
      yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: basic }))
      expect((yield* billing.getSubscription(merchantId, sub.id)).credit_balance).toBe("5.00")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-02T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "20.00"],
        ["renewal", "5.00"]
      ])
      expect((yield* billing.getSubscription(merchantId, sub.id)).credit_balance).toBe("0.00")
    })
  )

  it.effect("proration none switches now, charges nothing now, bills the new price in full next", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
        price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
      })
      const pro = yield* monthlyOfFirstProduct(merchantId, "20.00")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-04-10T00:00:00Z"))
      yield* priceChanges.changePrice(
        merchantId,
        PriceChanges.change(sub.id, { priceId: pro, effective: "immediate", proration: "none" })
      )
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "10.00"],
        ["renewal", "20.00"]
      ])
    })
  )

  it.effect("end-of-period change: scheduled, revoked, scheduled again, applied at renewal", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
        price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
      })
      const pro = yield* monthlyOfFirstProduct(merchantId, "20.00")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      expect(yield* priceChanges.revokePriceChange(merchantId, sub.id)).toEqual({
        subscription_id: sub.id,
        result: "no_pending_change"
      })
      const q = yield* priceChanges.changePrice(
        merchantId,
        PriceChanges.change(sub.id, { priceId: pro, effective: "end_of_period" })
      )
      expect(q.outcome).toBe("scheduled")
      expect(yield* priceChanges.revokePriceChange(merchantId, sub.id)).toEqual({
        subscription_id: sub.id,
        result: "revoked"
      })
      expect(yield* priceChanges.revokePriceChange(merchantId, sub.id)).toEqual({
        subscription_id: sub.id,
        result: "no_pending_change"
      })
      yield* priceChanges.changePrice(
        merchantId,
        PriceChanges.change(sub.id, { priceId: pro, effective: "end_of_period" })
      )
      expect((yield* billing.getSubscription(merchantId, sub.id)).price_id).toBe(priceId)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => i.amount)).toEqual(["10.00", "20.00"])
      expect((yield* billing.getSubscription(merchantId, sub.id)).price_id).toBe(pro)
      // an immediate change cannot be revoked: there is nothing pending
      yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: priceId, proration: "none" }))
      expect((yield* priceChanges.revokePriceChange(merchantId, sub.id)).result).toBe("no_pending_change")
    })
  )

  it.effect("a quantity change waits for the next cycle as pending_change", () =>
    Effect.gen(function* () {
      const priceChanges = yield* PriceChanges.PriceChanges
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { quantity: 3n }))
      const pending = (yield* billing.getSubscription(merchantId, sub.id)).pending_change
      expect([pending?.quantity, pending?.cycle_index]).toEqual(["3", 1])
      expect(
        (yield* Effect.flip(priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { quantity: 0n }))))._tag
      ).toBe("QuantityRefused")
      // the request body says which field: 400 on quantity through REST and the facade
      expect(yield* Effect.flip(Requests.changeCommand(sub.id, { quantity: "0" }))).toMatchObject({
        _tag: "InvalidParameter",
        param: "quantity"
      })
      expect(
        (yield* Effect.flip(
          priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { quantity: 1000000000n }))
        ))._tag
      ).toBe("QuantityRefused")
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => i.amount)).toEqual(["30.00", "90.00"])
      const after = yield* billing.getSubscription(merchantId, sub.id)
      expect([after.quantity, after.pending_change]).toEqual(["3", null])
    })
  )
}
