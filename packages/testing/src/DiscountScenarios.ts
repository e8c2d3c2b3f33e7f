/**
 * The rules of discounts, told through the engine's services on a frozen sandbox clock: how long
 * a redemption lasts (once, repeating, forever; trial cycles never count), a percentage against
 * an amount off and how each rounds, applying and removing one on a running subscription, what
 * a plan switch credits and charges under one, and what may be redeemed at all. Every amount is
 * exact, in minor units. Run against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Billing, Discounts, Ids, PriceChanges, Refunds, type Store, Subscriptions } from "@recur/core"
import { Effect, type Layer } from "effect"
import {
  invoicesOf,
  discountsByRequest,
  advance,
  merchantAt,
  minor,
  monthly,
  openSession,
  productOf,
  subscribeTo,
  taxedEngine,
  shopAt
} from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"

/** The amounts a subscription's invoices charged, oldest first, in minor units. */
const amountsOf = (merchantId: string, subscriptionId: string) =>
  Effect.map(invoicesOf(merchantId, subscriptionId), (l) => l.map((i) => minor(i.amount)))

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(taxedEngine(storage), { timeout: "120 seconds" })(`Discount scenarios: ${name}`, (it) => {
    it.effect("once: 10 % off 50.00 takes 5.00 off the first paid cycle only — 45.00, then 50.00 and 50.00", () =>
      Effect.gen(function* () {
        const discounts = yield* discountsByRequest
        const { merchantId, priceId } = yield* shopAt(START, "50.00")
        const d = yield* discounts.create(merchantId, {
          name: "Once",
          code: "ONCE10",
          discount_type: "percentage",
          percent_off: 10,
          duration: "once"
        })
        const { opened, subscriptionId, trade } = yield* subscribeTo(merchantId, priceId, {
          discount_code: "ONCE10"
        })
        expect(minor(opened.amount!)).toBe(4500n)
        expect(minor(trade!.amount)).toBe(4500n)
        yield* advance(merchantId, "2026-03-01T00:00:00Z")
        const invoices = yield* invoicesOf(merchantId, subscriptionId)
        expect(invoices.map((i) => [i.cycle_index, minor(i.amount)])).toEqual([
          [0, 4500n],
          [1, 5000n],
          [2, 5000n]
        ])
        expect(invoices.map((i) => i.Discounts.current_period.map((x) => minor(x.discount_amount)))).toEqual([
          [500n],
          [],
          []
        ])
        expect((yield* discounts.get(merchantId, d.discount_id)).times_redeemed).toBe(1)
      })
    )

    it.effect("repeating for 3 cycles: 10 % off 50.00 is 45.00, 45.00, 45.00, then 50.00", () =>
      Effect.gen(function* () {
        const discounts = yield* discountsByRequest
        const { merchantId, priceId } = yield* shopAt(START, "50.00")
        yield* discounts.create(merchantId, {
          name: "Three",
          code: "THREE",
          discount_type: "percentage",
          percent_off: 10,
          duration: "repeating",
          duration_cycles: 3
        })
        const { subscriptionId } = yield* subscribeTo(merchantId, priceId, { discount_code: "THREE" })
        yield* advance(merchantId, "2026-04-15T00:00:00Z")
        expect(yield* amountsOf(merchantId, subscriptionId)).toEqual([4500n, 4500n, 4500n, 5000n])
      })
    )

    it.effect(
      "forever: 5.00 off 30.00 is 25.00 every cycle; an amount off above the cycle's price makes it 0.00, never less",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const { merchantId, productId, priceId } = yield* shopAt(START, "30.00")
          yield* discounts.create(merchantId, {
            name: "Five off",
            code: "FIVE",
            discount_type: "fixed_amount",
            amount_off: "5",
            duration: "forever"
          })
          const five = yield* subscribeTo(merchantId, priceId, { discount_code: "FIVE" })
          const small = yield* monthly(merchantId, productId, "4.00")
          const capped = yield* subscribeTo(merchantId, small, { discount_code: "FIVE" })
          expect(minor(capped.opened.amount!)).toBe(0n)
          yield* advance(merchantId, "2026-04-01T00:00:00Z")
          expect(yield* amountsOf(merchantId, five.subscriptionId)).toEqual([2500n, 2500n, 2500n, 2500n])
          const small4 = yield* invoicesOf(merchantId, capped.subscriptionId)
          expect(small4.map((i) => [minor(i.amount), minor(i.Discounts.current_period[0]!.discount_amount)])).toEqual([
            [0n, 400n],
            [0n, 400n],
            [0n, 400n],
            [0n, 400n]
          ])
        })
    )

    it.effect(
      "a percentage rounds once, half to even: 15 % of 10.10 (1.515) takes 1.52, of 10.30 (1.545) takes 1.54",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const { merchantId, productId, priceId } = yield* shopAt(START, "10.10")
          const other = yield* monthly(merchantId, productId, "10.30")
          yield* discounts.create(merchantId, {
            name: "Fifteen",
            code: "FIFTEEN",
            discount_type: "percentage",
            percent_off: 15,
            duration: "forever"
          })
          const a = yield* subscribeTo(merchantId, priceId, { discount_code: "FIFTEEN" })
          const b = yield* subscribeTo(merchantId, other, { discount_code: "FIFTEEN" })
          const [ia] = yield* invoicesOf(merchantId, a.subscriptionId)
          const [ib] = yield* invoicesOf(merchantId, b.subscriptionId)
          expect([minor(ia!.amount), minor(ia!.Discounts.current_period[0]!.discount_amount)]).toEqual([858n, 152n])
          expect([minor(ib!.amount), minor(ib!.Discounts.current_period[0]!.discount_amount)]).toEqual([876n, 154n])
        })
    )

    it.effect(
      "a trial cycle never counts: once 10 % after a 7-day trial shows a 0.00 discount on the trial, 27.00 on the first paid cycle, then 30.00",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const merchantId = yield* merchantAt(START)
          const priceId = yield* monthly(merchantId, yield* productOf(merchantId), "30.00", {
            has_trial: true,
            trial_period: { trial_period_unit: "day", trial_period_count: 7 }
          })
          yield* discounts.create(merchantId, {
            name: "Ten",
            code: "TENOFF",
            discount_type: "percentage",
            percent_off: 10,
            duration: "once"
          })
          const { opened, subscriptionId } = yield* subscribeTo(merchantId, priceId, { discount_code: "TENOFF" })
          expect([minor(opened.amount!), opened.discount_code]).toEqual([0n, "TENOFF"])
          yield* advance(merchantId, "2026-02-09T00:00:00Z")
          const invoices = yield* invoicesOf(merchantId, subscriptionId)
          expect(
            invoices.map((i) => [
              i.invoice_type,
              i.cycle_index,
              minor(i.amount),
              i.Discounts.current_period.map((x) => minor(x.discount_amount))
            ])
          ).toEqual([
            ["trial", 0, 0n, [0n]],
            ["renewal", 1, 2700n, [300n]],
            ["renewal", 2, 3000n, []]
          ])
        })
    )

    it.effect(
      "applied to a running subscription from its next cycle: 30.00, 15.00 under 50 % — kept when the discount ends, gone when removed: 30.00",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const { merchantId, priceId } = yield* shopAt(START, "30.00")
          const { subscriptionId } = yield* subscribeTo(merchantId, priceId)
          const half = yield* discounts.create(merchantId, {
            name: "Half",
            code: "HALF",
            discount_type: "percentage",
            percent_off: 50,
            duration: "forever"
          })
          expect(yield* discounts.applyToSubscription(merchantId, subscriptionId, { discount_code: "HALF" })).toEqual({
            subscription_id: subscriptionId,
            discounts: [{ discount_id: half.discount_id, discount_code: "HALF", first_cycle: 1, cycles: null }]
          })
          const twice = yield* Effect.flip(
            discounts.applyToSubscription(merchantId, subscriptionId, { discount_id: half.discount_id })
          )
          expect(twice._tag).toBe("StateConflict")
          // ending the discount stops new redemptions, not this subscription's
          yield* discounts.end(merchantId, half.discount_id)
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          expect(yield* amountsOf(merchantId, subscriptionId)).toEqual([3000n, 1500n])
          expect(
            (yield* discounts.removeFromSubscription(merchantId, subscriptionId, half.discount_id)).discounts
          ).toEqual([])
          yield* advance(merchantId, "2026-03-01T00:00:00Z")
          expect(yield* amountsOf(merchantId, subscriptionId)).toEqual([3000n, 1500n, 3000n])
          const after = yield* discounts.get(merchantId, half.discount_id)
          expect([after.status, after.times_redeemed]).toEqual(["ended", 1])
        })
    )

    it.effect(
      "through a plan switch: under 50 % forever, 30.00 → 60.00 on Jan 16 credits 7.74 and charges 15.48 (the plain one: 15.48 and 30.97); the renewal bills 30.00",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const _subs = yield* Subscriptions.Subscriptions
          const { merchantId, productId, priceId } = yield* shopAt(START, "30.00")
          const bigger = yield* monthly(merchantId, productId, "60.00")
          yield* discounts.create(merchantId, {
            name: "Half",
            code: "HALF2",
            discount_type: "percentage",
            percent_off: 50,
            duration: "forever"
          })
          const plain = yield* subscribeTo(merchantId, priceId)
          const discounted = yield* subscribeTo(merchantId, priceId, { discount_code: "HALF2" })
          yield* advance(merchantId, "2026-01-16T00:00:00Z")
          // 16 of January's 31 days left: what was paid for them back, the new plan for them charged
          const p = yield* (yield* PriceChanges.PriceChanges).previewChange(
            merchantId,
            PriceChanges.change(plain.subscriptionId, { priceId: bigger })
          )
          // 30.00 × 16/31 = 15.48; 60.00 × 16/31 = 30.97
          expect([minor(p.credit), minor(p.charge), minor(p.net)]).toEqual([1548n, 3097n, 1549n])
          const quote = yield* (yield* PriceChanges.PriceChanges).previewChange(
            merchantId,
            PriceChanges.change(discounted.subscriptionId, { priceId: bigger })
          )
          // 15.00 paid × 16/31 = 7.74; 60.00 less 50 % = 30.00 × 16/31 = 15.48
          expect([minor(quote.credit), minor(quote.charge), minor(quote.net)]).toEqual([774n, 1548n, 774n])
          const committed = yield* (yield* PriceChanges.PriceChanges).changePrice(
            merchantId,
            PriceChanges.change(discounted.subscriptionId, { priceId: bigger, quoteId: quote.quote_id })
          )
          expect(committed).toEqual(quote)
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const invoices = yield* invoicesOf(merchantId, discounted.subscriptionId)
          expect(invoices.map((i) => [i.invoice_type, minor(i.amount)])).toEqual([
            ["initial", 1500n],
            ["upgrade", 774n],
            ["renewal", 3000n]
          ])
        })
    )

    it.effect(
      "a discount limited to a product stops at a switch to another product: the renewal on it bills the full 60.00",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const _subs = yield* Subscriptions.Subscriptions
          const { merchantId, productId, priceId } = yield* shopAt(START, "30.00")
          const otherProduct = yield* productOf(merchantId, "Team")
          const team = yield* monthly(merchantId, otherProduct, "60.00")
          yield* discounts.create(merchantId, {
            name: "Pro half",
            code: "PROHALF",
            discount_type: "percentage",
            percent_off: 50,
            duration: "forever",
            product_ids: [productId]
          })
          // the engine refuses a product outside the catalog by its index in the command and its id
          const ghost = Ids.ProductId.make("prd_missing")
          expect(
            yield* Effect.flip(
              (yield* Discounts.Discounts).create(
                merchantId,
                Discounts.discountOf(
                  "Ghost",
                  { type: "percentage", percent: 5 },
                  { productIds: [Ids.ProductId.make(productId), ghost] }
                )
              )
            )
          ).toMatchObject({ _tag: "CommandRefused", part: "discountProduct", index: 1, id: ghost })
          const { subscriptionId } = yield* subscribeTo(merchantId, priceId, { discount_code: "PROHALF" })
          const scheduled = yield* (yield* PriceChanges.PriceChanges).changePrice(
            merchantId,
            PriceChanges.change(subscriptionId, { priceId: team, effective: "end_of_period" })
          )
          expect(scheduled.discounts_ending.map((d) => d.discount_code)).toEqual(["PROHALF"])
          yield* advance(merchantId, "2026-03-01T00:00:00Z")
          expect(yield* amountsOf(merchantId, subscriptionId)).toEqual([1500n, 6000n, 6000n])
        })
    )

    it.effect(
      "what may be redeemed: 2 in total and 1 per customer — the third checkout and the same customer's second are refused, naming why",
      () =>
        Effect.gen(function* () {
          const discounts = yield* discountsByRequest
          const { merchantId, priceId } = yield* shopAt(START, "30.00")
          const d = yield* discounts.create(merchantId, {
            name: "Few",
            code: "FEW",
            discount_type: "fixed_amount",
            amount_off: "10",
            max_redemptions: 2,
            max_redemptions_per_customer: 1
          })
          const first = yield* subscribeTo(merchantId, priceId, { discount_code: "FEW" })
          expect(minor(first.trade!.amount)).toBe(2000n)
          const again = yield* Effect.flip(
            openSession(merchantId, {
              customer_id: first.customerId,
              line_items: [{ price_id: priceId }],
              discount_code: "FEW"
            })
          )
          expect(again).toMatchObject({
            _tag: "SessionRefused",
            reason: "discount",
            detail: expect.stringContaining("this customer has already redeemed this discount")
          })
          const second = yield* subscribeTo(merchantId, priceId, { discount_code: "FEW" })
          expect(minor(second.trade!.amount)).toBe(2000n)
          const third = yield* Effect.flip(
            openSession(merchantId, {
              payer_id: "late",
              line_items: [{ price_id: priceId }],
              discount_code: "FEW"
            })
          )
          expect(third).toMatchObject({
            _tag: "SessionRefused",
            reason: "discount",
            detail: expect.stringContaining("this discount has been fully redeemed")
          })
          const after = yield* discounts.get(merchantId, d.discount_id)
          expect([after.times_redeemed, after.status]).toEqual([2, "active"])
        })
    )

    it.effect("a discounted invoice refunds what was paid, 27.00, never the 30.00 before the discount", () =>
      Effect.gen(function* () {
        const discounts = yield* discountsByRequest
        const _subs = yield* Subscriptions.Subscriptions
        const billing = yield* Billing.Billing
        const { merchantId, priceId } = yield* shopAt(START, "30.00")
        yield* discounts.create(merchantId, {
          name: "Ten",
          code: "REFUND10",
          discount_type: "percentage",
          percent_off: 10
        })
        const { trade } = yield* subscribeTo(merchantId, priceId, { discount_code: "REFUND10" })
        expect(minor(trade!.amount)).toBe(2700n)
        const over = yield* Effect.flip(
          (yield* Refunds.Refunds).refund(merchantId, Refunds.refundOf(trade!.trade_id, { amount: "27.01" }))
        )
        expect(over).toMatchObject({ _tag: "RefundRefused", reason: "above_refundable" })
        yield* (yield* Refunds.Refunds).refund(merchantId, Refunds.refundOf(trade!.trade_id))
        expect(minor((yield* billing.getTrade(merchantId, trade!.trade_id)).total_refunded_amount)).toBe(2700n)
      })
    )
  })
