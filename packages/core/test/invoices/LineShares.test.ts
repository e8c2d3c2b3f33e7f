import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Schema } from "effect"
import { Invoice, Invoicing, LineShares, Money } from "../../src/index.js"
import { documentOf } from "../../src/invoices/InvoiceDocuments.js"
import { prop } from "../prop.js"

const usd = (n: bigint) => Money.make(n, "USD")
const sum = (xs: ReadonlyArray<Money.Money>) => xs.reduce((a, m) => a + m.amount, 0n)

const line = (kind: Invoicing.Line["kind"], amount: bigint, description: string = kind): Invoicing.Line => ({
  kind,
  description,
  quantity: 1n,
  amount: usd(amount)
})

/** The Team example: 49.00 plan + 5 seats at 12.00 + SSO 99.00, 10 % off, 20 % exclusive tax. */
const team = () =>
  Invoicing.total({
    invoice_type: "renewal",
    cycle_index: 1,
    currency: "USD",
    lines: [
      line("subscription", 4900n, "Team plan"),
      line("subscription", 6000n, "Seats"),
      line("subscription", 9900n, "SSO")
    ],
    discounts: [Invoicing.DiscountRule.Percentage({ discount_id: "d", discount_code: "TEN", basisPoints: 1000n })],
    tax: Invoicing.flatTax("VAT", 200_000n)
  })

describe("LineShares.sharesOf", () => {
  it("splits the Team example's discount and tax by the lines' amounts", () => {
    const d = team()
    const shares = LineShares.sharesOf(d)
    expect(shares.map((s) => Money.format(s.discount))).toEqual(["4.90", "6.00", "9.90"])
    expect(shares.map((s) => Money.format(s.tax))).toEqual(["8.82", "10.80", "17.82"])
    expect(Money.format(d.tax)).toBe("37.44")
    expect(Money.format(d.total)).toBe("224.64")
  })

  it("gives credits and zero lines nothing, and a carried balance neither discount nor tax", () => {
    const d = Invoicing.total({
      invoice_type: "renewal",
      cycle_index: 2,
      currency: "USD",
      lines: [
        line("subscription", 1000n),
        line("trial", 0n),
        line("proration_credit", -300n),
        line("proration_charge", 500n)
      ],
      discounts: [Invoicing.DiscountRule.Amount({ discount_id: "d", discount_code: "OFF", amount: usd(100n) })],
      tax: Invoicing.flatTax("Tax", 100_000n),
      creditBalance: usd(-250n)
    })
    const shares = LineShares.sharesOf(d)
    expect(d.lines.map((l) => l.kind)).toEqual([
      "subscription",
      "trial",
      "proration_credit",
      "proration_charge",
      "balance"
    ])
    expect(shares.map((s) => s.discount.amount)).toEqual([100n, 0n, 0n, 0n, 0n])
    // taxable 10.00 − 1.00 − 3.00 + 5.00 = 11.00 → 1.10, carried by the charged lines (9.00 and 5.00)
    expect(shares.map((s) => s.tax.amount)).toEqual([71n, 0n, 0n, 39n, 0n])
    expect(sum(shares.map((s) => s.tax))).toBe(d.tax.amount)
  })

  it("splits a negative tax over the negative lines (tax given back)", () => {
    const shares = LineShares.sharesOf({
      lines: [line("refund", -2000n), line("refund", -1000n)],
      discounts: [],
      tax: usd(-600n),
      currency: "USD"
    })
    expect(shares.map((s) => s.tax.amount)).toEqual([-400n, -200n])
  })

  it("states the shares on the document, the discount rows without", () => {
    const doc = documentOf(team(), undefined)
    expect(doc.lines.map((l) => [l.kind, l.discount_amount, l.tax_amount])).toEqual([
      ["subscription", "4.90", "8.82"],
      ["subscription", "6.00", "10.80"],
      ["subscription", "9.90", "17.82"],
      ["discount", null, null]
    ])
  })

  it("a line stored before the shares existed reads null in both", () => {
    const old = Schema.decodeUnknownSync(Invoice.InvoiceLine)({
      kind: "subscription",
      description: "Pro monthly × 1",
      quantity: "1",
      amount: "30.00",
      period_start: null,
      period_end: null
    })
    expect([old.amount, old.discount_amount, old.tax_amount]).toEqual(["30.00", null, null])
  })

  const kinds = fc.constantFrom<Invoicing.Line["kind"]>(
    "subscription",
    "subscription",
    "one_time",
    "usage",
    "trial",
    "proration_credit",
    "proration_charge",
    "refund"
  )
  const lineArb = fc
    .tuple(kinds, fc.bigInt({ min: 0n, max: 5_000_000n }))
    .map(([kind, n]) => line(kind, kind === "proration_credit" || kind === "refund" ? -n : kind === "trial" ? 0n : n))
  const ruleArb = fc.oneof(
    fc
      .bigInt({ min: 0n, max: 10_000n })
      .map((basisPoints) => Invoicing.DiscountRule.Percentage({ discount_id: "p", discount_code: "P", basisPoints })),
    fc
      .bigInt({ min: 0n, max: 3_000_000n })
      .map((n) => Invoicing.DiscountRule.Amount({ discount_id: "a", discount_code: "A", amount: usd(n) }))
  )

  prop(
    "the lines' shares sum exactly to the invoice's discounts and tax, whatever the lines",
    [
      fc.array(lineArb, { minLength: 1, maxLength: 20 }),
      fc.array(ruleArb, { maxLength: 3 }),
      fc.bigInt({ min: 0n, max: 300_000n }),
      fc.boolean(),
      fc.bigInt({ min: -5_000n, max: 5_000n })
    ],
    ([lines, rules, units, inclusive, balance]) => {
      const d = Invoicing.total({
        invoice_type: "renewal",
        cycle_index: 1,
        currency: "USD",
        lines,
        discounts: rules,
        tax: Invoicing.flatTax("Tax", units, inclusive),
        creditBalance: usd(balance)
      })
      const shares = LineShares.sharesOf(d)
      expect(shares).toHaveLength(d.lines.length)
      expect(sum(shares.map((s) => s.discount))).toBe(Invoicing.sumOfDiscounts(d.discounts))
      expect(sum(shares.map((s) => s.tax))).toBe(d.tax.amount)
      d.lines.forEach((l, i) => {
        const s = shares[i]!
        expect(s.discount.amount >= 0n).toBe(true)
        expect(s.discount.amount <= (l.amount.amount > 0n ? l.amount.amount : 0n)).toBe(true)
        if (l.kind === "balance") expect([s.discount.amount, s.tax.amount]).toEqual([0n, 0n])
        if (l.kind === "proration_credit" || l.kind === "proration_charge") expect(s.discount.amount).toBe(0n)
        if (l.amount.amount <= 0n) expect(s.tax.amount).toBe(0n)
      })
    },
    { numRuns: 300 }
  )
})
