import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BillingClient, createBilling } from "@recur/embedded"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"

// Issue 30, items 6 and 7, through the facade (`createBilling`) with the Stripe adapter on the
// local fake: ISK reaches Stripe in its units, a free trial saves the card with a SetupIntent, and
// an upgrade under Stripe's minimum is carried to the next invoice.
describe("amounts in Stripe's units through the facade", { timeout: 120_000 }, () => {
  let fake: Fake.StripeFake
  let billing: BillingClient
  beforeAll(async () => {
    fake = await Fake.start()
    fake.account({ secret_key: "sk_test_facadeunits", publishable_key: "pk_test_facadeunits" })
    billing = await createBilling({
      storage: "memory",
      payments: StripeGateway.layer({ secretKey: "sk_test_facadeunits", apiBase: fake.base, timeoutMs: 5_000 })
    })
  }, 120_000)
  afterAll(async () => {
    await billing.close()
    await fake.close()
  })

  const merchant = async (currency: string) =>
    (await billing.merchants.create({ name: currency, currency, frozen_time: Date.parse("2026-01-01T00:00:00Z") }))
      .merchant_id
  const price = async (m: string, currency: string, amount: string, fields: Record<string, unknown> = {}) => {
    const product = await billing.catalog.createProduct(m, { product_name: "Plan" })
    return (
      await billing.catalog.createPrice(m, {
        name: `${amount} ${currency}`,
        product_id: product.product_id,
        currency,
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: amount },
        ...fields
      } as never)
    ).id
  }
  const checkout = async (m: string, priceId: string) => {
    const session = await billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: priceId }] })
    const paid = await billing.checkout.pay(m, session.session_id, { payment_method: "pm_card_visa" })
    expect(paid.status).toBe("succeeded")
    return paid
  }
  const intentsOf = (trade: string) =>
    ([...fake.intents.values()] as Array<any>).filter((i) => i.metadata.recur_trade_id === trade)

  it("ISK 4,990 is charged 499000; a free trial saves the card, its first renewal charges it", async () => {
    const isk = await merchant("ISK")
    const paid = await checkout(isk, await price(isk, "ISK", "4990"))
    expect(intentsOf(paid.trade.trade_id).map((i) => i.amount)).toEqual([499000])

    const usd = await merchant("USD")
    const trial = await checkout(
      usd,
      await price(usd, "USD", "30.00", {
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
    )
    expect(intentsOf(trial.trade.trade_id)).toEqual([])
    const sub = trial.subscription!.id
    await billing.advanceClock(usd, new Date("2026-01-08T01:00:00Z"))
    const first = (await billing.invoices.list(usd, { subscription_id: sub })).list.find((i) => i.cycle_index === 1)!
    expect([first.amount, first.biz_status]).toEqual(["30.00", "success"])
    expect(intentsOf(first.trade_id!).map((i) => [i.amount, i.status])).toEqual([[3000, "succeeded"]])
    expect(fake.violations).toEqual([])
  })

  it("an upgrade under Stripe's minimum is carried, and the next renewal charges it", async () => {
    const m = await merchant("USD")
    const basic = await price(m, "USD", "30.00")
    const plus = await price(m, "USD", "30.60")
    const sub = (await checkout(m, basic)).subscription!.id
    await billing.advanceClock(m, new Date("2026-01-25T00:00:00Z"))
    const quote = await billing.subscriptions.previewChange(m, sub, { price_id: plus })
    const before = fake.intents.size
    await billing.subscriptions.change(m, sub, { price_id: plus, quote_id: quote.quote_id })
    expect(fake.intents.size).toBe(before)
    expect((await billing.subscriptions.get(m, sub)).credit_balance).toBe(`-${quote.total}`)
    await billing.advanceClock(m, new Date("2026-02-01T01:00:00Z"))
    const next = (await billing.invoices.list(m, { subscription_id: sub })).list.find(
      (i) => i.invoice_type === "renewal" && i.cycle_index === 1
    )!
    const expected = 3060 + Number(quote.total.replace(".", ""))
    expect([next.amount, next.biz_status]).toEqual([(expected / 100).toFixed(2), "success"])
    expect(intentsOf(next.trade_id!).map((i) => i.amount)).toEqual([expected])
    expect(fake.violations).toEqual([])
  })
})
