import { describe, expect, it } from "@effect/vitest"
import { DateTime, Result, Schema } from "effect"
import { Entities, Price, Subscription, SubscriptionItems } from "../../src/index.js"
import { priceVersion } from "../fixtures.js"

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
    expect(Result.isSuccess(SubscriptionItems.compatible([monthly, monthly, monthly]))).toBe(true)
    const refused = (pvs: ReadonlyArray<Price.PriceVersion>) => {
      const r = SubscriptionItems.compatible(pvs)
      if (Result.isSuccess(r)) throw new Error("expected a refusal")
      return r.failure.index
    }
    expect(refused([monthly, monthly, yearly])).toBe(2)
    expect(refused([monthly, euro])).toBe(1)
    expect(refused([monthly, oneTime])).toBe(1)
    expect(refused([])).toBe(null)
    expect(refused(Array.from({ length: 21 }, () => monthly))).toBe(null)
  })
})
