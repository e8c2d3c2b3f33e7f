import { describe, expect, it } from "@effect/vitest"
import { ConflictError, createBilling, InvalidParameterError, type RecurError } from "../src/index.js"

const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e as RecurError
  }
  throw new Error("not refused")
}

describe("one-off charges through the facade (issue 34)", () => {
  it("invoice items → a one-off invoice, open without a card on file; an invoiced item is not deleted", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const { customer_id } = await billing.customers.create(m, { payer_id: "p-1" })
      const setup = await billing.invoiceItems.create(m, {
        customer_id,
        currency: "USD",
        unit_amount: "150.00",
        description: "Onboarding"
      })
      expect([setup.status, setup.amount, setup.invoice_id]).toEqual(["pending", "150.00", null])
      const bad = await refusal(
        billing.invoiceItems.create(m, { customer_id, currency: "USD", unit_amount: "1.00", quantity: 0 })
      )
      expect([bad instanceof InvalidParameterError, bad.param]).toEqual([true, "quantity"])
      expect((await billing.invoiceItems.list(m, { customer_id, pending: true })).list.length).toBe(1)
      const invoice = await billing.invoiceItems.createInvoice(m, { customer_id })
      expect([invoice.invoice_type, invoice.biz_status, invoice.amount]).toEqual(["one_off", "open", "150.00"])
      expect(invoice.number).toMatch(/^INV-\d{6}$/)
      const billed = await billing.invoiceItems.get(m, setup.invoice_item_id)
      expect([billed.status, billed.invoice_id]).toEqual(["invoiced", invoice.invoice_id])
      expect(await refusal(billing.invoiceItems.delete(m, setup.invoice_item_id))).toBeInstanceOf(ConflictError)
    } finally {
      await billing.close()
    }
  }, 60_000)
})
