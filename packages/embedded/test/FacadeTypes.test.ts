/**
 * The facade's types guide: enumerated fields are literal unions, required fields are required,
 * and results carry the fields the engine always writes. Checked by `pnpm typecheck` (each
 * `@ts-expect-error` line must be an error); the function body never runs.
 */
import { describe, expect, it } from "@effect/vitest"
import type { BillingClient, PriceJson, SubscriptionJson } from "../src/index.js"

const typeChecks = async (billing: BillingClient, m: string) => {
  // @ts-expect-error a price needs a name, a product, a currency and its billing and price types
  await billing.catalog.createPrice(m, {})
  await billing.catalog.createPrice(m, {
    name: "Pro monthly",
    product_id: "prd_1",
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
  })
  await billing.catalog.createPrice(m, {
    name: "Pro",
    product_id: "prd_1",
    currency: "USD",
    // @ts-expect-error billing_type is one_time or recurring
    billing_type: "monthly",
    price_type: "flat_price"
  })
  await billing.catalog.createPrice(m, {
    name: "Pro",
    product_id: "prd_1",
    currency: "USD",
    billing_type: "one_time",
    // @ts-expect-error price_type is flat_price, package_price or based_on_usage
    price_type: "flat"
  })
  await billing.catalog.createPrice(m, {
    name: "Pro",
    product_id: "prd_1",
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    // @ts-expect-error billing_cycle_unit is week, month, quarter, year, …
    price_plan: { billing_cycle_unit: "months", base_price_val: "30.00" }
  })
  // @ts-expect-error a product needs its name
  await billing.catalog.createProduct(m, {})

  // @ts-expect-error a change needs a price or a quantity
  await billing.subscriptions.change(m, "sub_1", {})
  await billing.subscriptions.change(m, "sub_1", { quantity: "2", effective_type: "end_of_period", proration: "none" })
  // @ts-expect-error effective_type is immediate or end_of_period
  await billing.subscriptions.change(m, "sub_1", { price_id: "pri_1", effective_type: "later" })
  // @ts-expect-error proration is immediate or none
  await billing.subscriptions.previewChange(m, "sub_1", { price_id: "pri_1", proration: "always" })
  // @ts-expect-error cancel_type is immediate or end_of_period
  await billing.subscriptions.cancel(m, "sub_1", { cancel_type: "now" })
  await billing.subscriptions.cancel(m, "sub_1", { cancel_type: "end_of_period" })

  // @ts-expect-error a refund names its trade
  await billing.refunds.create(m, { amount: "1.00" })
  // @ts-expect-error an endpoint needs its url
  await billing.webhooks.createEndpoint(m, { all_events: true })
  // @ts-expect-error discount_type is percentage or fixed_amount
  await billing.discounts.create(m, { name: "Spring", discount_type: "percent", percent_off: 10 })
  // @ts-expect-error provider is sandbox or stripe
  await billing.merchants.setPaymentSettings(m, { provider: "paypal" })
  // @ts-expect-error a usage event needs its count
  await billing.subscriptions.recordUsage(m, "sub_1", { event_id: "e1" })
  // @ts-expect-error statuses are the subscription's states
  await billing.subscriptions.list(m, { status: ["live"] })

  // results: a created price answers price_id; defaulted fields are present
  const price = await billing.catalog.createPrice(m, {
    name: "Once",
    product_id: "prd_1",
    currency: "USD",
    billing_type: "one_time",
    price_type: "flat_price",
    price_val: "10.00"
  })
  const priceId: string = price.price_id
  const sub: SubscriptionJson = await billing.subscriptions.get(m, "sub_1")
  const status: string = sub.status
  const version: PriceJson = price
  const session = await billing.checkout.getSession(m, "cs_1")
  // allow_discount_codes has a decoding default: always written, so not optional
  const codes: boolean = session.allow_discount_codes
  // a payment's outcome is told by its status: a decline's error (its decline code) is there
  // once narrowed, and may be null before
  const paid = await billing.checkout.pay(m, "ses_1", {
    number: "4000000000000002",
    exp_month: 12,
    exp_year: 2099,
    cvc: "1"
  })
  // @ts-expect-error the error is null unless the payment failed or was unavailable
  const unnarrowed: string = paid.error.code
  const declineCode: string | undefined = paid.status === "failed" ? paid.error.code : undefined
  const none: null = paid.status === "succeeded" ? paid.error : null
  return [priceId, status, version, codes, unnarrowed, declineCode, none]
}

describe("the facade's types", () => {
  it("are checked by the typechecker", () => {
    expect(typeof typeChecks).toBe("function")
  })
})
