import { describe, expect, it, vi } from "@effect/vitest"
import { Portal, Ports, Store } from "@recur/core"
import { Cause, Effect, Option } from "effect"
import { fromCause } from "../src/Errors.js"
import {
  type BillingClient,
  ConflictError,
  createBilling,
  InvalidParameterError,
  NotFoundError,
  RecurError,
  SystemError
} from "../src/index.js"

/** A change quote's fields, in order (as REST lists them). */
const QUOTE_KEYS = [
  "subscription_id",
  "effective_type",
  "proration",
  "at",
  "currency",
  "credit",
  "charge",
  "net",
  "tax",
  "total",
  "outcome",
  "lines",
  "effective_at",
  "discounts_ending",
  "quote_id"
]

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

/** The rejection of a call, which must be one. */
const rejection = async (p: Promise<unknown>): Promise<RecurError> => {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(RecurError)
    return e as RecurError
  }
  throw new Error("the call resolved")
}

const withBilling = async (f: (billing: BillingClient, merchantId: string) => Promise<void>) => {
  const billing = await createBilling({ storage: "memory" })
  try {
    const { merchant_id } = await billing.merchants.create({
      name: "Acme",
      currency: "USD",
      frozen_time: Date.parse("2024-01-01T00:00:00Z")
    })
    await f(billing, merchant_id)
  } finally {
    await billing.close()
  }
}

const monthly = async (billing: BillingClient, merchantId: string) => {
  const product = await billing.catalog.createProduct(merchantId, { product_name: "Pro" })
  return billing.catalog.createPrice(merchantId, {
    name: "Pro monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
  })
}

describe("the facade's failures", () => {
  it("a lost race (a store's version conflict, even as a defect) rejects with ConflictError 409 state_conflict, not SystemError", () => {
    const e = fromCause(Cause.die(new Store.VersionConflict({ entity: "subscription", id: "sub_x" })))
    expect(e).toBeInstanceOf(ConflictError)
    expect([e.code, e.status, e.error?._tag]).toEqual(["state_conflict", 409, "ConcurrentUpdate"])
    expect(fromCause(Cause.die(new Error("boom")))).toBeInstanceOf(SystemError)
  })

  it("an unknown subscription rejects with NotFoundError: code, status and the engine's error", async () => {
    await withBilling(async (billing, m) => {
      const e = await rejection(billing.subscriptions.get(m, "sub_unknown"))
      expect(e).toBeInstanceOf(NotFoundError)
      expect(e).toBeInstanceOf(Error)
      expect([e.name, e.code, e.status]).toEqual(["NotFoundError", "resource_not_found", 404])
      expect(e.error?._tag).toBe("NotFound")
      expect(e.message).toContain("sub_unknown")
    })
  }, 60_000)

  it("plain-JS input of the wrong type is InvalidParameterError naming the field, as REST names it", async () => {
    await withBilling(async (billing, m) => {
      // what a caller without TypeScript can send
      const untyped = billing.catalog.createProduct as (m: string, input: unknown) => Promise<unknown>
      const e = await rejection(untyped(m, { product_name: 42 }))
      expect(e).toBeInstanceOf(InvalidParameterError)
      expect([e.code, e.status, e.param]).toEqual(["InvalidParameter", 400, "product_name"])
      const price = billing.catalog.createPrice as (m: string, input: unknown) => Promise<unknown>
      const nested = await rejection(price(m, { name: "x", price_plan: { base_price_val: 30 } }))
      expect(nested.param).toBe("price_plan.base_price_val")
      const session = billing.checkout.createSession as (m: string, input: unknown) => Promise<unknown>
      expect((await rejection(session(m, { line_items: [{ price_id: 7 }] }))).param).toBe("line_items[0].price_id")
      expect((await rejection(session(m, null))).status).toBe(400)
      const pay = billing.checkout.pay as (m: string, s: unknown, c: unknown) => Promise<unknown>
      expect((await rejection(pay(m, "ses_x", { number: 4242 }))).param).toBe("number")
      expect((await rejection(billing.subscriptions.get(m, undefined as unknown as string))).status).toBe(400)
    })
  }, 60_000)

  it("the engine's own refusals keep their REST code and param", async () => {
    await withBilling(async (billing, m) => {
      const e = await rejection(
        billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: "pri_x" }] })
      )
      expect([e.constructor, e.status, e.code, e.param]).toEqual([
        NotFoundError,
        404,
        "resource_not_found",
        "line_items[0].price_id"
      ])
      const price = await monthly(billing, m)
      const q = await rejection(
        billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: price.id, quantity: "0" }] })
      )
      expect(q).toBeInstanceOf(InvalidParameterError)
      expect(q.param).toBe("line_items[0].quantity")
      // a price's broken rule: the engine names the phase, the facade the request field
      const phase = await rejection(
        billing.catalog.createPrice(m, {
          name: "Intro",
          product_id: price.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00", price_plan_tiers: [{ period_count: 0 }] }
        })
      )
      expect(phase).toBeInstanceOf(InvalidParameterError)
      expect([phase.status, phase.code, phase.param]).toEqual([
        400,
        "InvalidParameter",
        "price_plan.price_plan_tiers[0].period_count"
      ])
    })
  }, 60_000)

  it("a state conflict is ConflictError (409 state_conflict)", async () => {
    await withBilling(async (billing, m) => {
      const price = await monthly(billing, m)
      const session = await billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: price.id }] })
      const paid = await billing.checkout.pay(m, session.session_id, card("4242424242424242"))
      const id = paid.subscription!.id
      await billing.subscriptions.cancel(m, id, { cancel_type: "immediate" })
      const e = await rejection(billing.subscriptions.pause(m, id))
      expect(e).toBeInstanceOf(ConflictError)
      expect([e.status, e.code]).toEqual([409, "state_conflict"])
    })
  }, 60_000)

  it("discounts through the facade: created, listed, ended once; a bad one is InvalidParameterError; a taken code ConflictError", async () => {
    await withBilling(async (billing, m) => {
      const d = await billing.discounts.create(m, {
        name: "Ten",
        code: "TEN",
        discount_type: "percentage",
        percent_off: 10,
        duration: "repeating",
        duration_cycles: 3
      })
      expect([d.status, d.percent_off, d.duration_cycles]).toEqual(["active", 10, 3])
      expect((await billing.discounts.get(m, d.discount_id)).code).toBe("TEN")
      const bad = await rejection(
        billing.discounts.create(m, { name: "x", discount_type: "percentage", percent_off: 0 })
      )
      expect([bad.constructor, bad.param]).toEqual([InvalidParameterError, "percent_off"])
      const taken = await rejection(
        billing.discounts.create(m, { name: "y", code: "TEN", discount_type: "percentage", percent_off: 5 })
      )
      expect([taken.constructor, taken.code, taken.param]).toEqual([ConflictError, "duplicate_resource", "code"])
      const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(m, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const session = await billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: price.id }] })
      const sub = (await billing.checkout.pay(m, session.session_id, card("4242424242424242"))).subscription!.id
      const applied = await billing.discounts.applyToSubscription(m, sub, { discount_code: "TEN" })
      expect(applied.discounts.map((t) => [t.discount_code, t.first_cycle, t.cycles])).toEqual([["TEN", 1, 3]])
      expect((await billing.discounts.removeFromSubscription(m, sub, d.discount_id)).discounts).toEqual([])
      expect((await billing.discounts.end(m, d.discount_id)).status).toBe("ended")
      expect((await rejection(billing.discounts.end(m, d.discount_id))).status).toBe(409)
      expect((await billing.discounts.list(m, { status: ["ended"] })).list.map((x) => x.discount_id)).toEqual([
        d.discount_id
      ])
    })
  }, 60_000)

  it("issue 33: create_prorations and an interval switch through the facade, committed as quoted", async () => {
    await withBilling(async (billing, m) => {
      const a = await monthly(billing, m)
      const big = await billing.catalog.createPrice(m, {
        name: "Pro big",
        product_id: a.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" }
      })
      const yearly = await billing.catalog.createPrice(m, {
        name: "Pro yearly",
        product_id: a.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "year", base_price_val: "300.00" }
      })
      const session = await billing.checkout.createSession(m, { payer_id: "p-33", line_items: [{ price_id: a.id }] })
      const sub = (await billing.checkout.pay(m, session.session_id, card("4242424242424242"))).subscription!.id
      await billing.advanceClock(m, new Date("2024-01-16T00:00:00Z"))
      const pending = await billing.subscriptions.previewChange(m, sub, {
        price_id: big.id,
        proration: "create_prorations"
      })
      expect([pending.outcome, pending.credit, pending.charge, pending.total, pending.billed_at]).toEqual([
        "pending_prorations",
        "15.48",
        "30.97",
        "0.00",
        Date.parse("2024-02-01T00:00:00Z")
      ])
      await billing.subscriptions.change(m, sub, {
        price_id: big.id,
        proration: "create_prorations",
        quote_id: pending.quote_id
      })
      const next = await billing.subscriptions.upcomingInvoice(m, sub)
      expect(next?.lines.map((l) => l.amount)).toEqual(["60.00", "-15.48", "30.97"])
      // the cycle has pending lines: an invoiced change is refused naming proration, the switch too
      const refused = await rejection(
        billing.subscriptions.previewChange(m, sub, { price_id: a.id, proration: "always_invoice" })
      )
      expect([refused.constructor, refused.param]).toEqual([InvalidParameterError, "proration"])
      await billing.advanceClock(m, new Date("2024-02-16T00:00:00Z"))
      // a month → year switch after the renewal billed them: 60.00 × 14/29 = 28.97 credited
      const sw = await billing.subscriptions.previewChange(m, sub, { price_id: yearly.id })
      expect([sw.outcome, sw.credit, sw.total]).toEqual(["interval_switch", "28.97", "271.03"])
      await billing.subscriptions.change(m, sub, { price_id: yearly.id, quote_id: sw.quote_id })
      const after = await billing.subscriptions.get(m, sub)
      expect([after.billing_cycle_unit, after.price_id]).toEqual(["year", yearly.id])
    })
  }, 60_000)

  it("money where features meet through the facade: discount scope, redemptions, give-back, the invariant, net taxable", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z"),
        proration_credit: "credit_balance"
      })
      const a = await monthly(billing, m)
      const other = await billing.catalog.createProduct(m, { product_name: "Other" })
      const b = await billing.catalog.createPrice(m, {
        name: "Other monthly",
        product_id: other.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" }
      })
      const half = await billing.discounts.create(m, {
        name: "Half",
        code: "HALF",
        discount_type: "percentage",
        percent_off: 50,
        duration: "forever",
        product_ids: [a.product_id],
        max_redemptions_per_customer: 1
      })
      const buy = async (price: string, extra: Record<string, unknown> = {}) => {
        const session = await billing.checkout.createSession(m, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: price }],
          ...extra
        })
        return billing.checkout.pay(m, session.session_id, card("4242424242424242"))
      }
      // item 1: the product-limited discount ends with a switch to another product
      const discounted = (await buy(a.id, { discount_code: "HALF" })).subscription!.id
      await billing.advanceClock(m, new Date("2024-01-16T00:00:00Z"))
      const quote = await billing.subscriptions.previewChange(m, discounted, { price_id: b.id })
      expect([quote.credit, quote.charge, quote.discounts_ending.map((d) => d.discount_code)]).toEqual([
        "7.74",
        "30.97",
        ["HALF"]
      ])
      // the quote's fields in the order they have always had (the facade answers the object as it is)
      expect(Object.keys(quote)).toEqual(QUOTE_KEYS)
      await billing.subscriptions.change(m, discounted, { price_id: b.id, quote_id: quote.quote_id })
      // item 2: the redemption outlives the term: the same customer cannot redeem it again
      const again = await rejection(billing.discounts.applyToSubscription(m, discounted, { discount_code: "HALF" }))
      expect(again).toBeInstanceOf(InvalidParameterError)
      expect((await billing.discounts.get(m, half.discount_id)).times_redeemed).toBe(1)
      // items 3 and 4: 60.00 paid, a downgrade credits 15.49 to the balance; a refund takes only the rest
      const paid = await buy(b.id)
      const sub = paid.subscription!.id
      await billing.advanceClock(m, new Date("2024-01-31T00:00:00Z"))
      const down = await billing.subscriptions.previewChange(m, sub, { price_id: a.id })
      expect([down.total, down.tax, down.outcome]).toEqual(["-15.49", "0.00", "credit_balance"])
      await billing.subscriptions.change(m, sub, { price_id: a.id })
      expect((await billing.subscriptions.get(m, sub)).credit_balance).toBe("15.49")
      const tooMuch = await rejection(billing.refunds.create(m, { trade_id: paid.trade.trade_id, amount: "60.00" }))
      expect([tooMuch.constructor, tooMuch.param]).toEqual([InvalidParameterError, "amount"])
      expect((await billing.refunds.create(m, { trade_id: paid.trade.trade_id })).refund_amount).toBe("44.51")
      // item 9: an inclusive tax line states its net
      await billing.taxRates.create(m, { name: "VAT", percentage: "19", country: "DE", inclusive: true })
      const taxed = (await buy(a.id, { billing_address: { country_code: "DE" } })).subscription!.id
      const [invoice] = (await billing.invoices.list(m, { subscription_id: taxed })).list
      expect(invoice?.tax_lines?.map((t) => [t.taxable_amount, t.amount])).toEqual([["25.21", "4.79"]])
    } finally {
      await billing.close()
    }
  }, 60_000)

  it("taxes through the facade: a configured table for every merchant, the merchant's own rates before it", async () => {
    await expect(
      createBilling({ storage: "memory", taxRates: [{ name: "VAT", percentage: "190", country: "DE" }] })
    ).rejects.toThrow("tax_rates[0].percentage")
    const billing = await createBilling({
      storage: "memory",
      taxRates: [{ name: "VAT", percentage: "19", country: "DE", inclusive: true }]
    })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
      })
      const price = await monthly(billing, m)
      const buy = async (country: string) => {
        const session = await billing.checkout.createSession(m, {
          payer_id: `p-${country}-${Math.random()}`,
          line_items: [{ price_id: price.id }],
          billing_address: { country_code: country }
        })
        return (await billing.checkout.pay(m, session.session_id, card("4242424242424242"))).trade
      }
      // the configured table: 19 % inside 30.00
      expect([(await buy("DE")).amount, (await buy("DE")).tax_amount]).toEqual(["30.00", "4.79"])
      // the merchant's own rate wins over the table's; archived, the table's applies again
      const own = await billing.taxRates.create(m, { name: "MwSt", percentage: "7", country: "DE" })
      expect([own.percentage, own.inclusive, own.status]).toEqual(["7", false, "active"])
      expect([(await buy("DE")).amount, (await buy("DE")).tax_amount]).toEqual(["32.10", "2.10"])
      expect((await billing.taxRates.get(m, own.tax_rate_id)).name).toBe("MwSt")
      expect((await billing.taxRates.list(m, { countries: ["DE"] })).list.map((r) => r.tax_rate_id)).toEqual([
        own.tax_rate_id
      ])
      expect((await billing.taxRates.archive(m, own.tax_rate_id)).status).toBe("archived")
      expect((await buy("DE")).tax_amount).toBe("4.79")
      expect((await buy("FR")).tax_amount).toBe("0.00")
      const bad = await rejection(billing.taxRates.create(m, { name: "x", percentage: "5", country: "Deutschland" }))
      expect([bad.constructor, bad.param]).toEqual([InvalidParameterError, "country"])
      const wrongType = await rejection(
        billing.taxRates.create(m, { name: "x", percentage: 5 as never, country: "DE" })
      )
      expect([wrongType.constructor, wrongType.param]).toEqual([InvalidParameterError, "percentage"])
    } finally {
      await billing.close()
    }
  }, 60_000)

  it("a tax calculator of one's own replaces the rate table", async () => {
    const billing = await createBilling({ storage: "memory", taxes: Ports.taxRate(1000n) })
    try {
      const { merchant_id: m } = await billing.merchants.create({ name: "Acme", currency: "USD" })
      const price = await monthly(billing, m)
      const session = await billing.checkout.createSession(m, { payer_id: "p", line_items: [{ price_id: price.id }] })
      expect([session.amount, session.tax_amount]).toEqual(["33.00", "3.00"])
      const trade = (await billing.checkout.pay(m, session.session_id, card("4242424242424242"))).trade
      expect([trade?.amount, trade?.tax_amount]).toEqual(["33.00", "3.00"])
      const taxLines = (await billing.invoices.list(m)).list.flatMap((i) => i.tax_lines ?? [])
      expect(taxLines.map((t) => [t.name, t.percentage, t.tax_rate_id, t.amount])).toEqual([
        ["Tax", "10", null, "3.00"]
      ])
    } finally {
      await billing.close()
    }
  }, 60_000)

  it("invoice documents through the facade: numbers from the merchant's prefix, signed links, a new prefix", async () => {
    const billing = await createBilling({ storage: "memory", publicUrl: "https://billing.example/recur" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        invoice_prefix: "ACME",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
      })
      const bad = await rejection(billing.merchants.create({ name: "B", currency: "USD", invoice_prefix: "a-b" }))
      expect([bad.constructor, bad.param]).toEqual([InvalidParameterError, "invoice_prefix"])
      const price = await monthly(billing, m)
      const buy = async () => {
        const session = await billing.checkout.createSession(m, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: price.id }]
        })
        await billing.checkout.pay(m, session.session_id, card("4242424242424242"))
      }
      await buy()
      expect(await billing.merchants.setInvoicePrefix(m, "ACME2")).toEqual({ invoice_prefix: "ACME2" })
      await buy()
      const list = (await billing.invoices.list(m)).list
      expect(list.map((i) => i.number).sort()).toEqual(["ACME-000001", "ACME2-000001"])
      expect(list[0]!.hosted_invoice_url).toMatch(/^https:\/\/billing\.example\/recur\/invoice\/inv_/)
      const wrong = await rejection(billing.merchants.setInvoicePrefix(m, "x"))
      expect([wrong.constructor, wrong.param]).toEqual([InvalidParameterError, "invoice_prefix"])
      // renewals under an open fraud dispute: held by default, charged when the merchant says so
      expect(await billing.merchants.setDisputeSettings(m, { fraud_dispute_renewals: "charge" })).toEqual({
        fraud_dispute_renewals: "charge"
      })
      expect(await billing.merchants.setDisputeSettings(m, { fraud_dispute_renewals: "hold" })).toEqual({
        fraud_dispute_renewals: "hold"
      })
      const policy = await rejection(billing.merchants.setDisputeSettings(m, { fraud_dispute_renewals: "x" as "hold" }))
      expect(policy.constructor).toBe(InvalidParameterError)
    } finally {
      await billing.close()
    }
  }, 60_000)

  it("issued invoices through the facade: the parties kept at issue; a declined and an abandoned checkout take no number and end voided at expiry", async () => {
    await withBilling(async (billing, m) => {
      const price = await monthly(billing, m)
      const erika = await billing.customers.create(m, {
        name: "Erika Mustermann",
        email: "erika@example.de",
        address: { line1: "Unter den Linden 1", city: "Berlin", country: "DE" }
      })
      const checkout = async (number: string) => {
        const session = await billing.checkout.createSession(m, {
          customer_id: erika.id,
          line_items: [{ price_id: price.id }]
        })
        return (await billing.checkout.pay(m, session.session_id, card(number))).status
      }
      expect(await checkout("4000000000000002")).toBe("failed")
      expect(await checkout("4000000000003220")).toBe("requires_action")
      expect(await checkout("4242424242424242")).toBe("succeeded")
      const issued = (await billing.invoices.list(m)).list.filter((i) => i.number !== null)
      expect(
        issued.map((i) => [i.number, i.customer_name, i.customer_email, i.customer_address, i.merchant_name])
      ).toEqual([["INV-000001", "Erika Mustermann", "erika@example.de", "Unter den Linden 1, Berlin, DE", "Acme"]])
      await billing.advanceClock(m, new Date("2024-01-02T00:00:00Z"))
      const unissued = (await billing.invoices.list(m)).list.filter((i) => i.number === null)
      expect(unissued.map((i) => [i.biz_status, i.hosted_invoice_url])).toEqual([
        ["void", null],
        ["void", null]
      ])
    })
  }, 60_000)

  it("a new payment method through the facade: a past-due subscription recovers; a refused card is InvalidParameterError", async () => {
    await withBilling(async (billing, m) => {
      const price = await monthly(billing, m)
      const session = await billing.checkout.createSession(m, {
        payer_id: "late",
        line_items: [{ price_id: price.id }]
      })
      const sub = (await billing.checkout.pay(m, session.session_id, card("4000000000000341"))).subscription!.id
      await billing.advanceClock(m, new Date("2024-02-01T12:00:00Z"))
      expect((await billing.subscriptions.get(m, sub)).status).toBe("past_due")
      const refused = await rejection(billing.subscriptions.updatePaymentMethod(m, sub, card("4000000000000002")))
      expect([refused.constructor, refused.param]).toEqual([InvalidParameterError, "card_number"])
      const updated = await billing.subscriptions.updatePaymentMethod(m, sub, card("4242424242424242"))
      expect([updated.status, updated.payment_method.last4, updated.retry?.trade_status]).toEqual([
        "active",
        "4242",
        "succeeded"
      ])
    })
  }, 60_000)

  it("portal settings and the upcoming invoice through the facade; a bad portal option is a RangeError", async () => {
    await expect(createBilling({ storage: "memory", portal: { cancel: "no" as never } })).rejects.toThrow(
      "portal.cancel must be true or false"
    )
    const billing = await createBilling({ storage: "memory", portal: { cancel: false } })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
      })
      const price = await monthly(billing, m)
      // the option is the default of a merchant without its own settings
      expect(await billing.portal.settings(m)).toEqual({
        payment_method_update: true,
        cancel: false,
        invoice_history: true,
        switch_prices: [],
        adjust_quantities: []
      })
      expect(await billing.portal.updateSettings(m, { switch_prices: [price.id] })).toMatchObject({
        cancel: false,
        switch_prices: [price.id]
      })
      const bad = await rejection(billing.portal.updateSettings(m, { switch_prices: ["pri_nope"] }))
      expect([bad.constructor, bad.param]).toEqual([NotFoundError, "switch_prices[0]"])
      expect((await billing.portal.updateSettings(m, { reset: true })).cancel).toBe(false)
      const session = await billing.checkout.createSession(m, { payer_id: "ada", line_items: [{ price_id: price.id }] })
      const sub = (await billing.checkout.pay(m, session.session_id, card("4242424242424242"))).subscription!.id
      expect(await billing.subscriptions.upcomingInvoice(m, sub)).toMatchObject({
        invoice_date: "2024-02-01T00:00:00Z",
        amount: "30.00",
        lines: [{ kind: "subscription", amount: "30.00" }]
      })
      await billing.subscriptions.cancel(m, sub, { cancel_type: "end_of_period" })
      expect(await billing.subscriptions.upcomingInvoice(m, sub)).toBeNull()
      const missing = await rejection(billing.subscriptions.upcomingInvoice(m, "sub_01jd0000000000000000000000"))
      expect(missing).toBeInstanceOf(NotFoundError)
    } finally {
      await billing.close()
    }
  }, 60_000)

  for (const storage of ["memory", "pglite"] as const)
    it(`a deleted customer's portal links and a revoked link stop working at once (${storage})`, async () => {
      const billing = await createBilling({ storage: storage === "memory" ? "memory" : {} })
      try {
        const { merchant_id: m } = await billing.merchants.create({ name: "Acme", currency: "USD" })
        const ada = await billing.customers.create(m, { payer_id: "ada", name: "Ada" })
        const bob = await billing.customers.create(m, { payer_id: "bob", name: "Bob" })
        const context = await billing.context()
        /** Whether a link opens its portal: what every portal route asks first. */
        const opens = (url: string) => {
          const [id, token] = new URL(url).pathname.split("/").slice(2)
          return Effect.runPromise(
            Portal.Portal.use((p) => p.sessionOf(id!, token!)).pipe(Effect.map(Option.isSome), Effect.provide(context))
          )
        }
        const adaLink = await billing.portal.createSession(m, { customer_id: ada.id })
        const bobLink = await billing.portal.createSession(m, { customer_id: bob.id })
        expect([await opens(adaLink.url), await opens(bobLink.url)]).toEqual([true, true])
        await billing.customers.delete(m, ada.id)
        expect(await opens(adaLink.url)).toBe(false)
        expect(await rejection(billing.portal.createSession(m, { customer_id: ada.id }))).toBeInstanceOf(NotFoundError)
        const revoked = await billing.portal.revokeSession(m, bobLink.portal_session_id)
        expect(revoked.revoked_at).not.toBeNull()
        expect(await opens(bobLink.url)).toBe(false)
        expect((await billing.portal.revokeSession(m, bobLink.portal_session_id)).revoked_at).toBe(revoked.revoked_at)
        expect(await rejection(billing.portal.revokeSession(m, "bps_01jd0000000000000000000000"))).toBeInstanceOf(
          NotFoundError
        )
        expect(await opens((await billing.portal.createSession(m, { customer_id: bob.id })).url)).toBe(true)
      } finally {
        await billing.close()
      }
    }, 60_000)

  it("the engine's log lines show no secret: createBilling logs through the redacting logger", async () => {
    const lines: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
      lines.push(args.map(String).join(" "))
    })
    const billing = await createBilling({ storage: "memory" })
    try {
      const context = await billing.context()
      await Effect.runPromise(
        Effect.logError(
          "charge failed",
          new Error("Stripe refused sk_test_FacadeKey123 for pi_1_secret_FacadeCS")
        ).pipe(
          Effect.annotateLogs({ link: "http://localhost/invoice/inv_1/FacadeSignature123/pdf" }),
          Effect.provide(context)
        )
      )
    } finally {
      spy.mockRestore()
      await billing.close()
    }
    const line = lines.find((l) => l.includes("charge failed"))
    expect(line).toBeDefined()
    for (const secret of ["FacadeKey123", "FacadeCS", "FacadeSignature123"]) expect(line).not.toContain(secret)
    expect(line).toContain("/invoice/inv_1/[redacted]/pdf")
  }, 60_000)

  it("billing settings, a subscription's discount terms and a refund's credit note through the facade", async () => {
    await withBilling(async (billing, m) => {
      expect(await billing.merchants.billingSettings(m)).toEqual({
        proration_policy: "per_second",
        proration_credit: "refund",
        dunning_final_state: "unpaid",
        dunning_retry_days: null,
        dunning_on_decline: null,
        invoice_draft_grace_seconds: 0,
        usage_adjustments: "automatic"
      })
      expect(await billing.merchants.setBillingSettings(m, { proration_policy: "per_day" })).toMatchObject({
        proration_policy: "per_day",
        proration_credit: "refund"
      })
      const bad = await rejection(billing.merchants.setBillingSettings(m, { proration_policy: "hourly" }))
      expect([bad.constructor, bad.param]).toEqual([InvalidParameterError, "proration_policy"])
      const wrongType = await rejection(billing.merchants.setBillingSettings(m, { dunning_retry_days: "1,3" as any }))
      expect([wrongType.constructor, wrongType.param]).toEqual([InvalidParameterError, "dunning_retry_days"])
      expect((await billing.merchants.billingSettings(m)).proration_policy).toBe("per_day")

      const price = await monthly(billing, m)
      await billing.discounts.create(m, {
        name: "Two months",
        code: "TWO",
        discount_type: "percentage",
        percent_off: 25,
        duration: "repeating",
        duration_cycles: 2
      })
      const session = await billing.checkout.createSession(m, {
        payer_id: "facade-terms",
        line_items: [{ price_id: price.id }],
        discount_code: "TWO"
      })
      const paid = await billing.checkout.pay(m, session.session_id, card("4242424242424242"))
      const sub = paid.subscription!.id
      expect((await billing.subscriptions.get(m, sub)).discounts).toEqual([
        expect.objectContaining({
          discount_code: "TWO",
          percent_off: 25,
          duration: "repeating",
          first_cycle: 0,
          last_cycle: 1,
          cycles_remaining: 1
        })
      ])
      expect((await billing.subscriptions.list(m, { subscription_ids: [sub] })).list[0]?.discounts).toEqual(
        (await billing.subscriptions.get(m, sub)).discounts
      )
      const refund = await billing.refunds.create(m, { trade_id: paid.trade.trade_id, amount: "5.00" })
      expect(refund.credit_note_number).toBe("INV-CN-000001")
      const note = await billing.invoices.get(m, refund.credit_note_id!)
      expect([note.invoice_type, note.refund_order_id, note.amount]).toEqual(["refund", refund.refund_id, "5.00"])
      expect((await billing.refunds.get(m, refund.refund_id)).credit_note_id).toBe(refund.credit_note_id)
    })
  }, 60_000)

  it("a storage failure is SystemError (500 system_error) with its cause", async () => {
    const billing = await createBilling({
      storage: { postgres: "postgres://nobody@127.0.0.1:9/none" },
      masterKey: "ab".repeat(32)
    }).catch((e: unknown) => e)
    // the layer fails while building: createBilling itself rejects, as a RecurError
    expect(billing).toBeInstanceOf(SystemError)
    expect((billing as SystemError).status).toBe(500)
  }, 60_000)
})
