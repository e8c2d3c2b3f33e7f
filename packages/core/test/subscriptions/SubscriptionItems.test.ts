import { describe, expect, it } from "@effect/vitest"
import { DateTime, Result, Schema } from "effect"
import fc from "fast-check"
import { Entities, Invoicing, Money, Price, Subscription, SubscriptionItems } from "../../src/index.js"
import * as ChangeCommit from "../../src/subscriptions/ChangeCommit.js"
import { priceVersion } from "../fixtures.js"
import { prop } from "../prop.js"

const at = DateTime.makeUnsafe(Date.UTC(2026, 0, 1))
const subscription = new Subscription.Subscription({
  id: "sub_01jd0000000000000000000001",
  customer_id: "cus_01jd0000000000000000000000",
  email: null,
  cancel_reason: null,
  sub_merchant_id: null,
  status: "active",
  price_id: "pri_01jd0000000000000000000000",
  current_period_start: at,
  current_period_end: at,
  next_invoice_date: at,
  created_at: at,
  updated_at: at,
  cancel_at: null,
  order_id: null,
  source_trade_id: null,
  price_type: "flat_price",
  price_version_id: "prv_01jd0000000000000000000000",
  first_source_channel: null,
  last_source_channel: null,
  quantity: "3",
  quantity_unit: null,
  payment_timing: "prepaid",
  billing_dimension: "quantity",
  quantity_tier_type: null,
  price_tier_type: null,
  usage_amount: null,
  merchant_price_id: null,
  cycle_index: 0,
  total_cycles: null,
  metadata: {},
  quantity_tiers: [],
  usage_tiers: [],
  pending_change: null,
  billing_cycle_unit: "month",
  cancel_at_period_end: false,
  credit_balance: "0.00"
})
/** A record as it was stored before items existed: no `extra_items`. */
const before = {
  merchant_id: "mch_01jd0000000000000000000000",
  subscription: Schema.encodeSync(Subscription.Subscription)(subscription),
  anchor: 0,
  trial_end: null,
  payment_token: null,
  scheduled_price_version_id: null,
  dunning_attempts: 0,
  accrued_usage: "0",
  fx_rate: null,
  currency: "USD",
  convert_to_continuous: false,
  paused_at: null
}

describe("SubscriptionItems", () => {
  it("a record stored before items existed decodes to one item, the base item", () => {
    const rec = Schema.decodeUnknownSync(Entities.SubscriptionRecord)(before)
    expect(rec.extra_items).toEqual([])
    expect(SubscriptionItems.termsOf(rec)).toEqual([
      {
        id: "si_01jd0000000000000000000001",
        price_id: subscription.price_id,
        price_version_id: subscription.price_version_id,
        quantity: "3",
        created_at: Date.UTC(2026, 0, 1)
      }
    ])
    const answer = SubscriptionItems.itemAnswer(SubscriptionItems.termsOf(rec)[0]!, priceVersion())
    expect([answer.unit_amount, answer.currency, answer.billing_dimension]).toEqual(["30.00", "USD", "quantity"])
  })

  it("items share the first item's interval and currency; a mismatch names the item", () => {
    const monthly = priceVersion()
    const yearly = priceVersion({
      price_plan: new Price.PricePlan({ ...monthly.price_plan!, billing_cycle_unit: "year" })
    })
    const euro = priceVersion({ currency: "EUR" })
    const oneTime = priceVersion({ billing_type: "one_time", price_plan: null })
    const seat = priceVersion({ id: "pri_01jd0000000000000000000002" })
    const sso = priceVersion({ id: "pri_01jd0000000000000000000003" })
    expect(Result.isSuccess(SubscriptionItems.compatible([monthly, seat, sso]))).toBe(true)
    const refused = (pvs: ReadonlyArray<Price.PriceVersion>) => {
      const r = SubscriptionItems.compatible(pvs)
      if (Result.isSuccess(r)) throw new Error("expected a refusal")
      return r.failure.index
    }
    expect(refused([monthly, seat, monthly])).toBe(2)
    expect(refused([monthly, seat, { ...yearly, id: "pri_01jd0000000000000000000004" } as Price.PriceVersion])).toBe(2)
    expect(refused([monthly, { ...euro, id: seat.id } as Price.PriceVersion])).toBe(1)
    expect(refused([monthly, { ...oneTime, id: seat.id } as Price.PriceVersion])).toBe(1)
    expect(refused([])).toBe(null)
    expect(refused(Array.from({ length: 21 }, (_, i) => priceVersion({ id: `pri_${i}` })))).toBe(null)
  })
})

describe("an add-on item's next-cycle changes", () => {
  it("a pending quantity and a scheduled version apply from the cycle they are for, and are cleared; an old record decodes without them", () => {
    const rec = Schema.decodeUnknownSync(Entities.SubscriptionRecord)(before)
    const seat = priceVersion({ id: "pri_01jd0000000000000000000002", price_version_id: "prv_seat1" })
    const seat2 = priceVersion({ id: seat.id, price_version_id: "prv_seat2" })
    const item: Entities.ItemTerm = {
      id: "si_addon",
      price_id: seat.id,
      price_version_id: seat.price_version_id,
      quantity: "2",
      created_at: 0,
      version: seat
    }
    const withItem = { ...rec, extra_items: [item] }
    expect(SubscriptionItems.hasItemChange(withItem)).toBe(false)
    expect(SubscriptionItems.nextCycleItems(withItem.extra_items, 1)).toEqual([item])
    const pending = ChangeCommit.withItemPendingQuantity(withItem, "si_addon", 5n, Date.UTC(2026, 1, 1))
    expect(pending.extra_items[0]!.pending_change).toMatchObject({ quantity: "5", cycle_index: 1, version: 1 })
    expect(SubscriptionItems.hasItemChange(pending)).toBe(true)
    // asking the current quantity again drops the pending one
    expect(
      ChangeCommit.withItemPendingQuantity(pending, "si_addon", 2n, Date.UTC(2026, 1, 1)).extra_items[0]!.pending_change
    ).toBeNull()
    const both = { ...pending, extra_items: [{ ...pending.extra_items[0]!, scheduled_version: seat2 }] }
    // not yet due for cycle 0 (the quantity), the version applies at the next renewal
    const [next] = SubscriptionItems.nextCycleItems(both.extra_items, 1)
    expect([next!.quantity, next!.pending_change, next!.price_version_id, next!.scheduled_version]).toEqual([
      "5",
      null,
      "prv_seat2",
      null
    ])
    expect(next!.version).toBe(seat2)
    // the stored form round-trips
    const encoded = Schema.encodeSync(Entities.SubscriptionRecord)(both)
    expect(
      Schema.decodeUnknownSync(Entities.SubscriptionRecord)(encoded).extra_items[0]!.pending_change?.quantity
    ).toBe("5")
  })
})

describe("a multi-item cycle invoice (properties, fixed seed)", () => {
  const amount = fc.integer({ min: 0, max: 999_999 }).map((minor) => (minor / 100).toFixed(2))
  const item = fc.record({ price: amount, quantity: fc.integer({ min: 1, max: 50 }) })
  const plan = (base: string) =>
    priceVersion({
      price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: base })
    })
  const term = (i: number, x: { readonly price: string; readonly quantity: number }): Entities.ItemTerm => {
    const version = plan(x.price)
    return {
      id: `si_${i}`,
      price_id: version.id,
      price_version_id: version.price_version_id,
      quantity: String(x.quantity),
      created_at: 0,
      version
    }
  }
  const rules = fc.array(
    fc.oneof(
      fc
        .integer({ min: 0, max: 10_000 })
        .map((bp) =>
          Invoicing.DiscountRule.Percentage({ discount_id: "d", discount_code: "P", basisPoints: BigInt(bp) })
        ),
      fc.integer({ min: 0, max: 5_000_000 }).map((minor) =>
        Invoicing.DiscountRule.Amount({
          discount_id: "d",
          discount_code: "A",
          amount: Money.make(BigInt(minor), "USD")
        })
      )
    ),
    { maxLength: 3 }
  )
  prop(
    "one line per item; the total is the lines' sum less discounts plus tax, never negative, as one computation over the sum",
    [item, fc.array(item, { maxLength: 19 }), rules, fc.integer({ min: 0, max: 300_000 })] as const,
    ([base, others, discounts, taxUnits]) => {
      const draft = SubscriptionItems.withItemLines(
        Result.getOrThrow(
          Invoicing.cycle({
            invoice_type: "renewal",
            price: plan(base.price),
            cycle_index: 1,
            quantity: BigInt(base.quantity),
            existing: []
          })
        ),
        others.map((x, i) => term(i + 1, x)),
        1
      )
      expect(draft.lines).toHaveLength(1 + others.length)
      const expected = [base, ...others].map(
        (x) => Result.getOrThrow(Money.parse(x.price, "USD")).amount * BigInt(x.quantity)
      )
      expect(draft.lines.map((l) => l.amount.amount)).toEqual(expected)
      const tax = Invoicing.flatTax("Tax", BigInt(taxUnits))
      const t = Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: draft.lines,
        discounts,
        tax
      })
      const sum = expected.reduce((a, b) => a + b, 0n)
      expect(t.subtotal.amount).toBe(sum)
      expect(t.total.amount >= 0n).toBe(true)
      expect(t.total.amount).toBe(sum - Invoicing.sumOfDiscounts(t.discounts) + t.tax.amount)
      const single = Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: [{ kind: "subscription", description: "sum", quantity: 1n, amount: Money.make(sum, "USD") }],
        discounts,
        tax
      })
      expect([t.total, t.tax, t.discounts]).toEqual([single.total, single.tax, single.discounts])
    },
    { numRuns: 200 }
  )
})

describe("the worked example of docs/pricing.md, Several items", () => {
  it("Team plan 49.00 + 12.00 per seat × 5 + SSO add-on 99.00, 10 % off, 8.25 % sales tax", () => {
    const version = (price: string) =>
      priceVersion({ price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: price }) })
    const draft = SubscriptionItems.withItemLines(
      Result.getOrThrow(
        Invoicing.cycle({
          invoice_type: "renewal",
          price: version("49.00"),
          cycle_index: 1,
          quantity: 1n,
          existing: []
        })
      ),
      [
        { id: "si_2", price_id: "p2", price_version_id: "v2", quantity: "5", created_at: 0, version: version("12.00") },
        { id: "si_3", price_id: "p3", price_version_id: "v3", quantity: "1", created_at: 0, version: version("99.00") }
      ],
      1
    )
    const t = Invoicing.total({
      invoice_type: draft.invoice_type,
      cycle_index: draft.cycle_index,
      currency: draft.currency,
      lines: draft.lines,
      discounts: [Invoicing.DiscountRule.Percentage({ discount_id: "d", discount_code: "TEAM10", basisPoints: 1000n })],
      tax: Invoicing.flatTax("Sales tax", 82_500n)
    })
    expect(t.lines.map((l) => Money.format(l.amount))).toEqual(["49.00", "60.00", "99.00"])
    expect([t.subtotal, t.discounts[0]!.amount, t.tax, t.total].map(Money.format)).toEqual([
      "208.00",
      "20.80",
      "15.44",
      "202.64"
    ])
    // the discount's share of each line, allocated by the lines' amounts
    expect(
      Money.allocate(
        t.discounts[0]!.amount,
        t.lines.map((l) => l.amount.amount)
      ).map(Money.format)
    ).toEqual(["4.90", "6.00", "9.90"])
  })
})
