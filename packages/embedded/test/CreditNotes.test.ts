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

describe("credit notes by method through the facade (issue 34)", () => {
  it("reduce_invoice on an open one-off invoice, then in full: settled; the answer is the credit note", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const { customer_id } = await billing.customers.create(m, { payer_id: "p-1" })
      await billing.invoiceItems.create(m, { customer_id, currency: "USD", unit_amount: "40.00" })
      const invoice = await billing.invoiceItems.createInvoice(m, { customer_id })
      expect([invoice.biz_status, invoice.amount_remaining]).toEqual(["open", "40.00"])
      const note = await billing.balances.creditNote(m, invoice.invoice_id, {
        amount: "15.00",
        method: "reduce_invoice",
        reason: "agreed discount"
      })
      expect([note?.invoice_type, note?.amount, note?.number]).toEqual(["refund", "15.00", "INV-CN-000001"])
      const reduced = await billing.invoices.get(m, invoice.invoice_id)
      expect([reduced.amount, reduced.amount_remaining, reduced.pre_payment_credit_notes_amount]).toEqual([
        "40.00",
        "25.00",
        "15.00"
      ])
      const over = await refusal(
        billing.balances.creditNote(m, invoice.invoice_id, { amount: "25.01", method: "reduce_invoice" })
      )
      expect([over instanceof InvalidParameterError, (over as InvalidParameterError).param]).toEqual([true, "amount"])
      await billing.balances.creditNote(m, invoice.invoice_id, { amount: "25.00", method: "reduce_invoice" })
      const settled = await billing.invoices.get(m, invoice.invoice_id)
      expect([settled.biz_status, settled.status, settled.amount_remaining]).toEqual(["success", "paid", "0.00"])
      expect(
        await refusal(billing.balances.creditNote(m, invoice.invoice_id, { amount: "1.00", method: "reduce_invoice" }))
      ).toBeInstanceOf(ConflictError)
    } finally {
      await billing.close()
    }
  }, 60_000)
})
