import { describe, expect, it } from "@effect/vitest"
import { createBilling, InvalidParameterError } from "../src/index.js"

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

describe("createBilling({ dunning })", () => {
  it("the facade's default dunning policy: one retry after 2 days, then canceled", async () => {
    const billing = await createBilling({ storage: "memory", dunning: { retryDays: [2], finalState: "canceled" } })
    try {
      const { merchant_id } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2024-01-01T00:00:00Z")
      })
      const product = await billing.catalog.createProduct(merchant_id, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(merchant_id, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      const session = await billing.checkout.createSession(merchant_id, {
        payer_id: "p1",
        line_items: [{ price_id: price.id }]
      })
      const paid = await billing.checkout.pay(merchant_id, session.session_id, card("4000000000000341"))
      const id = paid.subscription!.id
      await billing.advanceClock(merchant_id, new Date("2024-02-02T23:00:00Z"))
      expect((await billing.subscriptions.get(merchant_id, id)).status).toBe("past_due")
      await billing.advanceClock(merchant_id, new Date("2024-02-03T00:00:00Z"))
      const after = await billing.subscriptions.get(merchant_id, id)
      expect([after.status, after.cancel_reason]).toEqual(["canceled", "payment_failed"])
    } finally {
      await billing.close()
    }
  })

  it("refuses a malformed policy at once", async () => {
    await expect(createBilling({ storage: "memory", dunning: { retryDays: [5, 2] } })).rejects.toThrow(/retryDays/)
    await expect(
      createBilling({ storage: "memory", dunning: { onDecline: { hard: "later" as "stop" } } })
    ).rejects.toThrow(/onDecline.hard/)
    await expect(
      createBilling({ storage: "memory", dunning: { onDecline: { medium: "stop" } as unknown as { hard: "stop" } } })
    ).rejects.toThrow(/onDecline.medium/)
  }, 60_000)

  it("what each decline class does: the facade's default, a merchant's own, and the preview of a proposed policy", async () => {
    const billing = await createBilling({ storage: "memory", dunning: { onDecline: { hard: "retry" } } })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      // the facade's default: hard declines retried on the standard days
      const hard = await billing.merchants.dunningPreview(m, { decline_class: "hard" })
      expect([hard.action, hard.dunning_on_decline]).toEqual([
        "retry",
        { hard: "retry", soft: "retry", expired_card: "stop" }
      ])
      expect(hard.steps.map((s) => s.at)).toEqual([
        "2026-01-01T00:00:00Z",
        "2026-01-02T00:00:00Z",
        "2026-01-04T00:00:00Z",
        "2026-01-06T00:00:00Z",
        "2026-01-08T00:00:00Z",
        "2026-01-08T00:00:00Z"
      ])
      // the merchant's own: expired cards retried too
      const set = await billing.merchants.setBillingSettings(m, { dunning_on_decline: { expired_card: "retry" } })
      expect(set.dunning_on_decline).toEqual({ hard: "retry", soft: "retry", expired_card: "retry" })
      // a proposed policy, previewed without saving
      const proposed = await billing.merchants.dunningPreview(m, {
        decline_class: "expired_card",
        dunning_on_decline: { expired_card: "stop" },
        failed_at: "2026-03-01T00:00:00Z"
      })
      expect(proposed.steps.map((s) => [s.kind, s.at])).toEqual([
        ["failed", "2026-03-01T00:00:00Z"],
        ["stop", "2026-03-01T00:00:00Z"]
      ])
      expect([proposed.final_status, proposed.next_action]).toEqual(["unpaid", "new_payment_method"])
      expect((await billing.merchants.billingSettings(m)).dunning_on_decline?.expired_card).toBe("retry")
      const bad = await billing.merchants.dunningPreview(m, { decline_class: "soft", dunning_retry_days: [3, 3] }).then(
        () => undefined,
        (e: unknown) => e as InvalidParameterError
      )
      expect([bad?.constructor, bad?.param]).toEqual([InvalidParameterError, "dunning_retry_days"])
      const badClass = await billing.merchants
        .setBillingSettings(m, { dunning_on_decline: { soft: "never" as "stop" } })
        .then(
          () => undefined,
          (e: unknown) => e as InvalidParameterError
        )
      expect([badClass?.constructor, badClass?.param]).toEqual([InvalidParameterError, "dunning_on_decline.soft"])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
