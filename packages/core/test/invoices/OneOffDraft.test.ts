import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { DateTime, Result } from "effect"
import { InvoiceItem, InvoiceItems, Invoicing, Money, OneOffInvoices } from "../../src/index.js"
import { documentOf } from "../../src/invoices/InvoiceDocuments.js"
import { prop } from "../prop.js"

const itemOf = (n: number, unitMinor: bigint, quantity: number): InvoiceItem.InvoiceItem =>
  new InvoiceItem.InvoiceItem({
    invoice_item_id: `ii_${n}`,
    merchant_id: "m",
    customer_id: "c",
    subscription_id: null,
    currency: "USD",
    description: `Item ${n}`,
    quantity,
    unit_amount: Money.format(Money.make(unitMinor, "USD")),
    amount: Money.format(Money.make(unitMinor * BigInt(quantity), "USD")),
    price_id: null,
    status: "pending",
    invoice_id: null,
    metadata: {},
    created_at: DateTime.makeUnsafe(0)
  })

describe("one-off invoice drafts", () => {
  it("one invoice_item line per item, in order; a one_off invoice of cycle 0 without service periods", () => {
    const draft = OneOffInvoices.draftOf("USD", [itemOf(1, 1250n, 3), itemOf(2, 250n, 1)])
    expect([draft.invoice_type, draft.cycle_index, Money.format(draft.subtotal), Money.format(draft.total)]).toEqual([
      "one_off",
      0,
      "40.00",
      "40.00"
    ])
    expect(draft.lines.map((l) => [l.kind, l.description, l.quantity, Money.format(l.amount)])).toEqual([
      ["invoice_item", "Item 1", 3n, "37.50"],
      ["invoice_item", "Item 2", 1n, "2.50"]
    ])
    const doc = documentOf(draft, { start: 0, end: 1 })
    expect(doc.lines.map((l) => [l.kind, l.period_start, l.period_end])).toEqual([
      ["invoice_item", null, null],
      ["invoice_item", null, null]
    ])
  }, 10_000)

  it("refuses quantities outside 1..1,000,000, negative units and products over the largest amount", () => {
    const usd = (n: bigint) => Money.make(n, "USD")
    for (const q of [0, -2, 1.5, 1_000_001, Number.NaN])
      expect(Result.isFailure(InvoiceItems.lineAmount(usd(100n), q)), String(q)).toBe(true)
    expect(Result.isFailure(InvoiceItems.lineAmount(usd(-1n), 1))).toBe(true)
    expect(Result.isFailure(InvoiceItems.lineAmount(usd(Money.MAX_AMOUNT_MINOR), 2))).toBe(true)
    expect(Result.getOrThrow(InvoiceItems.lineAmount(usd(Money.MAX_AMOUNT_MINOR), 1)).amount).toBe(
      Money.MAX_AMOUNT_MINOR
    )
  }, 10_000)

  prop(
    "the draft adds up: subtotal = Σ lines, total = subtotal − discounts + exclusive tax, tax shares sum to the tax",
    [
      fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 10_000_000n }), fc.integer({ min: 1, max: 1000 })), {
        minLength: 1,
        maxLength: 20
      }),
      fc.bigInt({ min: 0n, max: 1_000_000n }),
      fc.boolean()
    ],
    ([specs, units, inclusive]) => {
      const items = specs.map(([unit, q], n) => itemOf(n, unit, q))
      const untaxed = OneOffInvoices.draftOf("USD", items)
      const draft = Invoicing.total({
        invoice_type: untaxed.invoice_type,
        cycle_index: 0,
        currency: "USD",
        lines: untaxed.lines,
        tax: Invoicing.flatTax("Tax", units, inclusive)
      })
      const lines = draft.lines.reduce((a, l) => a + l.amount.amount, 0n)
      expect(draft.subtotal.amount).toBe(lines)
      expect(lines).toBe(specs.reduce((a, [unit, q]) => a + unit * BigInt(q), 0n))
      const exclusive = draft.tax_lines.reduce((a, t) => (t.inclusive ? a : a + t.amount.amount), 0n)
      expect(draft.total.amount).toBe(draft.subtotal.amount + exclusive)
      const doc = documentOf(draft, undefined)
      const shares = doc.lines.reduce(
        (a, l) => a + Result.getOrThrow(Money.parse(l.tax_amount ?? "0", "USD")).amount,
        0n
      )
      expect(shares).toBe(draft.tax.amount)
    }
  )
})
