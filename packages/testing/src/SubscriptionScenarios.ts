/**
 * Merchant stories of changes, lifecycle, usage and refunds on a frozen sandbox clock.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Requests } from "@recur/contract"
import {
  Billing,
  Catalog,
  Entities,
  Invoicing,
  Metering,
  Money,
  PriceChanges,
  Refunds,
  SandboxClock,
  Store,
  Subscriptions
} from "@recur/core"
import type { Invoice } from "@recur/core"
import { DateTime, Effect, type Layer, Option } from "effect"
import { engine, eventsOf, invoicesOf, setup, subscribe } from "./EngineScenarios.js"
import { usageEventsOf } from "./Fixtures.js"

const iso = (s: string) => Date.parse(s)
const subOf = (r: Billing.PaymentResult) => Option.getOrThrow(r.subscription)
const minor = (amount: string) => BigInt(amount.replace(".", ""))
/** What a cycle cost the customer in minor units: its invoices less its refunds. */
const cycleNet = (invoices: ReadonlyArray<Invoice.Invoice>, cycle: number) =>
  invoices
    .filter((i) => i.cycle_index === cycle)
    .reduce((a, i) => (i.invoice_type === "refund" ? a - minor(i.amount) : a + minor(i.amount)), 0n)

const usageTiers = {
  price_type: "based_on_usage",
  model_type: "tiers_price",
  payment_timing: "postpaid",
  billing_dimension: "usage",
  usage_amount: "1",
  usage_unit: "call",
  price_tier_type: "graduated",
  usage_tiers: [
    { usage_min: "0", usage_max: "100", unit_price: "0.20", flat_amount: "" },
    { usage_min: "101", usage_max: "500", unit_price: "0.15", flat_amount: "" },
    { usage_min: "501", usage_max: "", unit_price: "0.10", flat_amount: "" }
  ]
} as const

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "120 seconds" })(`Subscription scenarios: ${name}`, (it) => {
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
          const pro = yield* setupPrice(merchantId, "20.00")
          const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
              priceChanges.changePrice(
                merchantId,
                PriceChanges.change(sub.id, { priceId: pro, quoteId: quote.quote_id })
              )
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
          expect(yield* eventsOf(merchantId, sub.id)).toEqual([
            "v2.subscription.first",
            "v2.subscription.price_changed"
          ])
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
          const twenty = yield* setupPrice(merchantId, "20.00")
          const thirty = yield* setupPrice(merchantId, "30.00")
          const sub = subOf((yield* subscribe(merchantId, priceId)).result)
          const other = subOf((yield* subscribe(merchantId, priceId)).result)
          yield* sandboxClock.advanceClock(merchantId, iso("2024-01-16T00:00:00Z"))
          // 16 of 31 days left: 10.00 → 5.16, 20.00 → 10.32, 30.00 → 15.48
          const first = yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: twenty }))
          expect([first.credit, first.charge, first.net]).toEqual(["5.16", "10.32", "5.16"])
          const preview = yield* priceChanges.previewChange(
            merchantId,
            PriceChanges.change(sub.id, { priceId: thirty })
          )
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
        const twenty = yield* setupPrice(merchantId, "20.00")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
          const sixty = yield* setupPrice(merchantId, "60.00")
          const a = subOf((yield* subscribe(merchantId, priceId)).result)
          const b = subOf((yield* subscribe(merchantId, priceId)).result)
          yield* sandboxClock.advanceClock(merchantId, iso("2024-04-11T00:00:00Z"))
          for (let i = 0; i < 3; i++) {
            expect(
              (yield* priceChanges.changePrice(merchantId, PriceChanges.change(a.id, { priceId: sixty }))).net
            ).toBe("20.00")
            expect(
              (yield* priceChanges.changePrice(merchantId, PriceChanges.change(a.id, { priceId: priceId }))).net
            ).toBe("-20.00")
          }
          const ia = yield* invoicesOf(merchantId, a.id)
          expect(ia.filter((i) => i.invoice_type === "upgrade").map((i) => i.amount)).toEqual([
            "20.00",
            "20.00",
            "20.00"
          ])
          expect(ia.filter((i) => i.invoice_type === "refund").map((i) => i.amount)).toEqual([
            "20.00",
            "20.00",
            "20.00"
          ])
          expect(cycleNet(ia, 0)).toBe(3000n)
          // b: on 60.00 from Apr 11 to Apr 21 (10 of 30 days), then back: 30.00 + 30.00 × 10/30
          yield* priceChanges.changePrice(merchantId, PriceChanges.change(b.id, { priceId: sixty }))
          yield* sandboxClock.advanceClock(merchantId, iso("2024-04-21T00:00:00Z"))
          expect(
            (yield* priceChanges.changePrice(merchantId, PriceChanges.change(b.id, { priceId: priceId }))).net
          ).toBe("-10.00")
          expect(cycleNet(yield* invoicesOf(merchantId, b.id), 0)).toBe(4000n)
        })
    )

    it.effect("a downgrade under credit_balance after an upgrade credits what the upgrade paid", () =>
      Effect.gen(function* () {
        const priceChanges = yield* PriceChanges.PriceChanges
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {}, { proration_credit: "credit_balance" })
        const sixty = yield* setupPrice(merchantId, "60.00")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
      "a price change keeps the interval: another interval, count or a one-time price is a 400 and changes nothing",
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
          const sub = subOf((yield* subscribe(merchantId, priceId)).result)
          yield* sandboxClock.advanceClock(merchantId, iso("2024-04-11T00:00:00Z"))
          for (const price_id of [yearly, quarterly, oneTime]) {
            for (const effective_type of ["immediate", "end_of_period"] as const) {
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
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
        const basic = yield* setupPrice(merchantId, "10.00")
        const { result } = yield* subscribe(merchantId, priceId)
        const sub = subOf(result)
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
        const basic = yield* setupPrice(merchantId, "10.00")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
        const pro = yield* setupPrice(merchantId, "20.00")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
        const pro = yield* setupPrice(merchantId, "20.00")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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
        yield* priceChanges.changePrice(
          merchantId,
          PriceChanges.change(sub.id, { priceId: priceId, proration: "none" })
        )
        expect((yield* priceChanges.revokePriceChange(merchantId, sub.id)).result).toBe("no_pending_change")
      })
    )

    it.effect("a quantity change waits for the next cycle as pending_change", () =>
      Effect.gen(function* () {
        const priceChanges = yield* PriceChanges.PriceChanges
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
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

    it.effect("cancel at period end (revocable), immediate cancel, and nothing runs after", () =>
      Effect.gen(function* () {
        const subs = yield* Subscriptions.Subscriptions
        const priceChanges = yield* PriceChanges.PriceChanges
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const a = subOf((yield* subscribe(merchantId, priceId)).result)
        yield* subs.cancel(merchantId, Subscriptions.cancelOf(a.id, { when: "end_of_period" }))
        yield* subs.revokeCancel(merchantId, a.id)
        expect(yield* Effect.flip(subs.revokeCancel(merchantId, a.id))).toMatchObject({
          _tag: "SubscriptionActionRefused",
          action: "revoke cancel"
        })
        const requested = yield* subs.cancel(
          merchantId,
          Subscriptions.cancelOf(a.id, {
            when: "end_of_period",
            reason: "too_expensive"
          })
        )
        expect(requested.cancel_at_period_end).toBe(true)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-06-15T00:00:00Z"))
        const ended = yield* billing.getSubscription(merchantId, a.id)
        expect([ended.status, ended.cancel_reason, DateTime.formatIso(ended.cancel_at!)]).toEqual([
          "canceled",
          "too_expensive",
          "2024-05-01T00:00:00.000Z"
        ])
        expect(yield* invoicesOf(merchantId, a.id)).toHaveLength(1)
        expect(yield* eventsOf(merchantId, a.id)).toEqual([
          "v2.subscription.first",
          "v2.subscription.cancellation_requested",
          "v2.subscription.cancellation_revoked",
          "v2.subscription.cancellation_requested",
          "v2.subscription.canceled"
        ])
        const b = subOf((yield* subscribe(merchantId, priceId)).result)
        yield* subs.cancel(merchantId, Subscriptions.cancelOf(b.id))
        expect(
          yield* Effect.flip(priceChanges.changePrice(merchantId, PriceChanges.change(b.id, { quantity: 2n })))
        ).toMatchObject({ _tag: "SubscriptionNotLive", subscriptionId: b.id, state: "canceled", action: "change" })
        expect(yield* Effect.flip(subs.pause(merchantId, b.id))).toMatchObject({
          _tag: "SubscriptionActionRefused",
          subscriptionId: b.id,
          state: "canceled",
          action: "pause"
        })
      })
    )

    it.effect("pause stops billing; resume starts a new period and bills it", () =>
      Effect.gen(function* () {
        const subs = yield* Subscriptions.Subscriptions
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-04-20T00:00:00Z"))
        yield* subs.pause(merchantId, sub.id)
        yield* sandboxClock.advanceClock(merchantId, iso("2024-07-10T00:00:00Z"))
        expect(yield* invoicesOf(merchantId, sub.id)).toHaveLength(1)
        const resumed = yield* subs.resume(merchantId, sub.id)
        expect([
          resumed.status,
          DateTime.formatIso(resumed.current_period_start!),
          DateTime.formatIso(resumed.current_period_end!)
        ]).toEqual(["active", "2024-07-10T00:00:00.000Z", "2024-08-10T00:00:00.000Z"])
        expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
          ["initial", "30.00", "success"],
          ["renewal", "30.00", "success"]
        ])
        expect(yield* eventsOf(merchantId, sub.id)).toEqual([
          "v2.subscription.first",
          "v2.subscription.paused",
          "v2.subscription.resumed"
        ])
      })
    )

    it.effect("postpaid usage with graduated tiers is invoiced in arrears; duplicates by event_id count once", () =>
      Effect.gen(function* () {
        const metering = yield* Metering.Metering
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
          ...usageTiers,
          price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
        })
        const { result } = yield* subscribe(merchantId, priceId)
        expect(result.trade.amount).toBe("0.00")
        const sub = subOf(result)
        expect(
          (yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 400, { eventId: "e1" }))).duplicate
        ).toBe(false)
        expect(
          (yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 400, { eventId: "e1" }))).duplicate
        ).toBe(true)
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 50, { eventId: "e2" }))
        const summary = yield* metering.usageSummary(merchantId, sub.id)
        expect([
          summary.total_usage_count,
          summary.billing_usage_count,
          summary.trial_usage_count,
          summary.billing_amount
        ]).toEqual([450, 450, 0, "72.50"])
        expect((yield* Effect.flip(metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 0))))._tag).toBe(
          "UsageRefused"
        )
        yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
        const invoices = yield* invoicesOf(merchantId, sub.id)
        expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
          ["initial", 0, "0.00"],
          ["renewal", 0, "72.50"]
        ])
        expect((yield* metering.usageSummary(merchantId, sub.id)).total_usage_count).toBe(0)
      })
    )

    it.effect("over_threshold bills as soon as accrued usage reaches the threshold", () =>
      Effect.gen(function* () {
        const metering = yield* Metering.Metering
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
          price_type: "based_on_usage",
          model_type: "per_unit",
          billing_threshold: "1",
          usage_unit_price: "0.10",
          payment_timing: "postpaid",
          billing_dimension: "usage",
          usage_amount: "1",
          usage_unit: "call",
          usage_threshold: "100",
          price_plan: { billing_cycle_unit: "over_threshold", base_price_val: "0" }
        })
        const sub = subOf((yield* subscribe(merchantId, priceId)).result)
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 60))
        expect(yield* invoicesOf(merchantId, sub.id)).toHaveLength(1)
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 50))
        expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
          ["initial", "0.00", "success"],
          ["renewal", "11.00", "success"]
        ])
      })
    )

    it.effect(
      "usage batches: many subscriptions in one call, re-sends counted once, all or nothing, thresholds billed",
      () =>
        Effect.gen(function* () {
          const metering = yield* Metering.Metering
          const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
            price_type: "based_on_usage",
            model_type: "per_unit",
            billing_threshold: "1",
            usage_unit_price: "0.10",
            payment_timing: "postpaid",
            billing_dimension: "usage",
            usage_amount: "1",
            usage_unit: "call",
            usage_threshold: "100",
            price_plan: { billing_cycle_unit: "over_threshold", base_price_val: "0" }
          })
          const a = subOf((yield* subscribe(merchantId, priceId)).result)
          const b = subOf((yield* subscribe(merchantId, priceId)).result)
          const flat = subOf((yield* subscribe(merchantId, yield* setupPrice(merchantId, "10.00"))).result)
          yield* metering.recordUsage(merchantId, Subscriptions.usageOf(a.id, 5, { eventId: "a-0" }))
          const batch = yield* metering.recordUsageBatch(
            merchantId,
            usageEventsOf([
              { subscription_id: a.id, usage_count: 10, event_id: "a-1" },
              { subscription_id: b.id, usage_count: 7, event_id: "b-1" },
              { subscription_id: a.id, usage_count: 5, event_id: "a-0" }, // recorded before
              { subscription_id: b.id, usage_count: 7, event_id: "b-1" }, // twice in this batch
              { subscription_id: a.id, usage_count: 3 } // no event id: never a duplicate
            ])
          )
          expect([batch.accepted, batch.duplicates]).toEqual([3, 2])
          expect(batch.records.map((r) => [r.subscription_id, r.usage_count, r.duplicate])).toEqual([
            [a.id, 10, false],
            [b.id, 7, false],
            [a.id, 5, true],
            [b.id, 7, true],
            [a.id, 3, false]
          ])
          expect((yield* metering.usageSummary(merchantId, a.id)).total_usage_count).toBe(18)
          expect((yield* metering.usageSummary(merchantId, b.id)).total_usage_count).toBe(7)

          // one bad record rejects the batch and writes nothing
          const before = yield* Effect.all([
            metering.usageSummary(merchantId, a.id),
            metering.usageSummary(merchantId, b.id)
          ])
          const bad = [
            [{ subscription_id: b.id, usage_count: 0 }, "count"],
            [{ subscription_id: b.id, usage_count: 1.5 }, "count"],
            [{ subscription_id: b.id, usage_count: 1, event_id: "" }, "event_id"],
            [{ subscription_id: flat.id, usage_count: 1 }, "not_metered"]
          ] as const
          for (const [record, reason] of bad) {
            expect(
              yield* Effect.flip(
                metering.recordUsageBatch(
                  merchantId,
                  usageEventsOf([{ subscription_id: a.id, usage_count: 1, event_id: "never" }, record])
                )
              )
            ).toMatchObject({ _tag: "UsageRefused", index: 1, reason })
          }
          expect(
            yield* Effect.flip(
              metering.recordUsageBatch(
                merchantId,
                usageEventsOf([
                  { subscription_id: a.id, usage_count: 1, event_id: "never" },
                  { subscription_id: "sub_missing", usage_count: 1 }
                ])
              )
            )
          ).toMatchObject({ _tag: "NotFound", id: "sub_missing" })
          expect(yield* Effect.flip(metering.recordUsageBatch(merchantId, usageEventsOf([])))).toMatchObject({
            _tag: "UsageBatchRefused",
            size: 0
          })
          expect(
            yield* Effect.flip(
              metering.recordUsageBatch(
                merchantId,
                usageEventsOf(
                  Array.from({ length: Subscriptions.MAX_USAGE_BATCH + 1 }, () => ({
                    subscription_id: a.id,
                    usage_count: 1
                  }))
                )
              )
            )
          ).toMatchObject({ _tag: "UsageBatchRefused", size: Subscriptions.MAX_USAGE_BATCH + 1 })
          expect(
            yield* Effect.all([metering.usageSummary(merchantId, a.id), metering.usageSummary(merchantId, b.id)])
          ).toEqual(before)

          // concurrent batches on the same subscriptions, overlapping event ids: every event counted exactly once
          const batches = Array.from({ length: 8 }, (_, k) =>
            Array.from({ length: 10 }, (_, i) => ({
              subscription_id: i % 2 === 0 ? b.id : a.id,
              usage_count: 1,
              event_id: `c-${k * 4 + i}`
            }))
          )
          const distinct = new Set(batches.flat().map((r) => `${r.subscription_id}/${r.event_id}`)).size
          expect(distinct).toBeLessThan(80)
          const results = yield* Effect.forEach(
            batches,
            (records) => metering.recordUsageBatch(merchantId, usageEventsOf(records)),
            {
              concurrency: 8
            }
          )
          expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(distinct)
          const totals = yield* Effect.all([
            metering.usageSummary(merchantId, a.id),
            metering.usageSummary(merchantId, b.id)
          ])
          expect(totals[0].total_usage_count + totals[1].total_usage_count).toBe(18 + 7 + distinct)

          // a batch that takes a subscription over its threshold invoices it
          yield* metering.recordUsageBatch(
            merchantId,
            usageEventsOf([{ subscription_id: a.id, usage_count: 100, event_id: "big" }])
          )
          expect((yield* invoicesOf(merchantId, a.id)).map((i) => i.invoice_type)).toEqual(["initial", "renewal"])
          expect((yield* invoicesOf(merchantId, b.id)).map((i) => i.invoice_type)).toEqual(["initial"])
        })
    )

    it.effect("refunds: partial then full, never more than paid, even when requested concurrently", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        const billing = yield* Billing.Billing
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const { result } = yield* subscribe(merchantId, priceId)
        const tradeId = result.trade.trade_id
        const partial = yield* refunds.refund(
          merchantId,
          Refunds.refundOf(tradeId, { amount: "10.00", reason: "goodwill", requestKey: "req-refund-1" })
        )
        expect([partial.refund_status, partial.refund_amount]).toEqual(["succeeded", "10.00"])
        // the same request again (a client's retry after a crash): the same refund, nothing more refunded
        const again = yield* refunds.refund(
          merchantId,
          Refunds.refundOf(tradeId, { amount: "10.00", reason: "goodwill", requestKey: "req-refund-1" })
        )
        expect(again.refund_id).toBe(partial.refund_id)
        expect((yield* billing.getTrade(merchantId, tradeId)).total_refunded_amount).toBe("10.00")
        expect(
          yield* Effect.flip(refunds.refund(merchantId, Refunds.refundOf(tradeId, { amount: "25.00" })))
        ).toMatchObject({
          _tag: "RefundRefused",
          reason: "above_refundable"
        })
        // six concurrent 5.00 refunds against 20.00 left; a client retries "in progress" conflicts
        const attempts = yield* Effect.all(
          Array.from({ length: 6 }, () =>
            Effect.result(
              refunds
                .refund(merchantId, Refunds.refundOf(tradeId, { amount: "5.00" }))
                .pipe(Effect.retry({ while: (e) => e._tag === "ConcurrentUpdate", times: 50 }))
            )
          ),
          { concurrency: 6 }
        )
        const ok = attempts.filter((a) => a._tag === "Success").length
        expect(ok).toBe(4)
        const trade = yield* billing.getTrade(merchantId, tradeId)
        expect([trade.refund_status, trade.total_refunded_amount]).toEqual(["refunded", "30.00"])
        const invoices = yield* invoicesOf(merchantId, Option.getOrThrow(result.subscription).id)
        expect(invoices[0]!.biz_status).toBe("refunded")
        expect(invoices.filter((i) => i.invoice_type === "refund").map((i) => i.amount)).toEqual([
          "10.00",
          "5.00",
          "5.00",
          "5.00",
          "5.00"
        ])
        expect(
          (yield* refunds.listRefunds(merchantId, {
            limit: 100,
            filters: [{ column: "trade_id", op: "in", values: [tradeId] }]
          })).list
        ).toHaveLength(5)
      })
    )

    it.effect(
      "search: the subscription of an invoice, and of a refund through its trade's invoice; none for an unknown id or another merchant's",
      () =>
        Effect.gen(function* () {
          const subs = yield* Subscriptions.Subscriptions
          const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
          const { result } = yield* subscribe(merchantId, priceId)
          const sub = Option.getOrThrow(result.subscription)
          const invoice = (yield* invoicesOf(merchantId, sub.id))[0]!
          const refund = yield* (yield* Refunds.Refunds).refund(
            merchantId,
            Refunds.refundOf(result.trade.trade_id, { amount: "1.00" })
          )
          expect(yield* subs.search(merchantId, { invoiceId: invoice.invoice_id })).toEqual(Option.some(sub.id))
          expect(yield* subs.search(merchantId, { refundId: refund.refund_id })).toEqual(Option.some(sub.id))
          expect(yield* subs.search(merchantId, { invoiceId: "inv_unknown" })).toEqual(Option.none())
          expect(yield* subs.search(merchantId, { refundId: "rfd_unknown" })).toEqual(Option.none())
          const other = yield* setup("2024-04-01T00:00:00Z")
          expect(yield* subs.search(other.merchantId, { invoiceId: invoice.invoice_id })).toEqual(Option.none())
          expect(yield* subs.search(other.merchantId, { refundId: refund.refund_id })).toEqual(Option.none())
        })
    )
  })

/** Adds a monthly flat price to the merchant's first product. */
const setupPrice = (merchantId: string, base: string) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog.Catalog
    const products = yield* catalog.listProducts(merchantId, {})
    const pv = yield* catalog.createPrice(merchantId, {
      name: `Plan ${base}`,
      product_id: products.list[0]!.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: base }
    })
    return pv.id
  })
