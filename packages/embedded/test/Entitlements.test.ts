import { describe, expect, it } from "@effect/vitest"
import { createBilling, InvalidParameterError, NotFoundError, RecurError } from "../src/index.js"

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

const rejection = async (p: Promise<unknown>): Promise<RecurError> => {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(RecurError)
    return e as RecurError
  }
  throw new Error("the call resolved")
}

describe("billing.entitlements", () => {
  it("check and list answer from the committed subscriptions: after checkout, pause and resume; the policy; errors", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const product = await billing.catalog.createProduct(m, {
        product_name: "Pro",
        entitlements: { sso: true, seats: 10, api_calls: 100000 }
      })
      expect(product.entitlements).toEqual({ sso: true, seats: 10, api_calls: 100000 })
      const price = await billing.catalog.createPrice(m, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" },
        entitlements: { seats: 20 }
      })
      expect(price.entitlements).toEqual({ seats: 20 })
      const session = await billing.checkout.createSession(m, { payer_id: "u1", line_items: [{ price_id: price.id }] })
      const sub = (await billing.checkout.pay(m, session.session_id, card("4242424242424242"))).subscription!
      const customer = sub.customer_id

      expect(await billing.entitlements.check(m, customer, "sso")).toEqual({
        customer_id: customer,
        feature: "sso",
        enabled: true,
        value: true
      })
      expect(await billing.entitlements.list(m, customer)).toEqual({
        customer_id: customer,
        features: { api_calls: 100000, seats: 20, sso: true },
        subscription_ids: [sub.id]
      })

      await billing.subscriptions.pause(m, sub.id)
      expect((await billing.entitlements.check(m, customer, "sso")).enabled).toBe(false)
      await billing.entitlements.updateSettings(m, { granting_statuses: ["active", "paused"] })
      expect((await billing.entitlements.check(m, customer, "seats")).value).toBe(20)
      expect((await billing.entitlements.settings(m)).granting_statuses).toEqual(["active", "paused"])
      await billing.entitlements.updateSettings(m, { granting_statuses: null })
      await billing.subscriptions.resume(m, sub.id)
      expect((await billing.entitlements.check(m, customer, "seats")).value).toBe(20)

      await billing.entitlements.setProductEntitlements(m, product.product_id, { sso: false, audit_log: true })
      expect((await billing.entitlements.list(m, customer)).features).toEqual({
        audit_log: true,
        seats: 20,
        sso: false
      })

      expect(await rejection(billing.entitlements.list(m, "cus_nobody"))).toBeInstanceOf(NotFoundError)
      const bad = await rejection(billing.entitlements.check(m, customer, "Not A Feature"))
      expect([bad.constructor, bad.param]).toEqual([InvalidParameterError, "feature"])
      const badFeatures = await rejection(
        billing.catalog.createProduct(m, { product_name: "X", entitlements: { seats: 1.5 } })
      )
      expect([badFeatures.constructor, badFeatures.param]).toEqual([InvalidParameterError, "entitlements"])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
