import { describe, expect, it } from "@effect/vitest"
import { Result, Option } from "effect"
import { BalanceCredit, Common, CreditNotes, GiveBack, Invoicing, Money, Price, Proration } from "../../src/index.js"
import { priceVersion } from "../fixtures.js"

const usd = (n: bigint) => Money.make(n, "USD")
const draft = <E>(e: Result.Result<Invoicing.Draft, E>) => Result.getOrThrow(e)

describe("Invoicing.cycle", () => {
  it("bills a prepaid flat price times seats", () => {
    const d = draft(
      Invoicing.cycle({ invoice_type: "renewal", price: priceVersion(), cycle_index: 1, quantity: 3n, existing: [] })
    )
    expect(Money.format(d.total)).toBe("90.00")
    expect(d.lines).toHaveLength(1)
  })

  it("bills an intro phase, then the base price", () => {
    const pv = priceVersion({
      price_plan: new Price.PricePlan({
        price_plan_id: "pln_x",
        plan_name: "Intro",
        billing_cycle_unit: "month",
        billing_cycle_count: 1,
        is_infinite: true,
        base_price_val: "30.00",
        plan_description: "",
        price_plan_tiers: [
          new Price.PricePlanTier({
            period_count: 2,
            period_unit: "month",
            original_price: "30.00",
            due_price: "",
            discount_type: "percentage",
            discount_value: "50"
          })
        ]
      })
    })
    const at = (i: number) =>
      Money.format(
        draft(
          Invoicing.cycle({
            invoice_type: i === 0 ? "initial" : "renewal",
            price: pv,
            cycle_index: i,
            quantity: 1n,
            existing: []
          })
        ).total
      )
    expect([0, 1, 2, 3].map(at)).toEqual(["15.00", "15.00", "30.00", "30.00"])
  })

  it("bills free and paid trials", () => {
    const trial = new Price.TrialPeriod({ trial_period_unit: "day", trial_period_count: 14 })
    const free = priceVersion({ has_trial: true, trial_type: 0, trial_period: trial })
    const paid = priceVersion({ has_trial: true, trial_type: 1, trial_amount: "1.00", trial_period: trial })
    expect(
      Money.format(
        draft(Invoicing.cycle({ invoice_type: "trial", price: free, cycle_index: 0, quantity: 1n, existing: [] })).total
      )
    ).toBe("0.00")
    expect(
      Money.format(
        draft(Invoicing.cycle({ invoice_type: "trial", price: paid, cycle_index: 0, quantity: 1n, existing: [] })).total
      )
    ).toBe("1.00")
  })

  it("bills postpaid usage in arrears with graduated tiers", () => {
    const pv = priceVersion({
      price_type: "based_on_usage",
      model_type: "tiers_price",
      payment_timing: "postpaid",
      billing_dimension: "usage",
      price_tier_type: "graduated",
      usage_amount: "1",
      usage_unit: "call",
      usage_tiers: [
        new Common.UsageTier({ usage_min: "0", usage_max: "100", unit_price: "0.20", flat_amount: "" }),
        new Common.UsageTier({ usage_min: "101", usage_max: "500", unit_price: "0.15", flat_amount: "" }),
        new Common.UsageTier({ usage_min: "501", usage_max: "", unit_price: "0.10", flat_amount: "" })
      ]
    })
    const d = draft(
      Invoicing.cycle({ invoice_type: "renewal", price: pv, cycle_index: 0, quantity: 1n, usage: 450n, existing: [] })
    )
    expect(Money.format(d.total)).toBe("72.50")
    expect(d.lines[0]?.kind).toBe("usage")
  })

  it("applies discounts, then tax, then customer credit", () => {
    const tenPercentTax = Invoicing.flatTax("Tax", 100_000n)
    const d = draft(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: priceVersion(),
        cycle_index: 2,
        quantity: 1n,
        existing: [],
        discounts: [
          Invoicing.DiscountRule.Percentage({ discount_id: "dsc_1", discount_code: "SAVE20", basisPoints: 2000n })
        ],
        tax: tenPercentTax,
        creditBalance: usd(500n)
      })
    )
    // 30.00 − 6.00 = 24.00; tax 2.40; 26.40 − 5.00 credit = 21.40
    expect([d.subtotal, d.discounts[0]!.amount, d.tax, d.creditApplied, d.total].map(Money.format)).toEqual([
      "30.00",
      "6.00",
      "2.40",
      "5.00",
      "21.40"
    ])
  })

  it("never discounts or credits below zero", () => {
    const d = draft(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: priceVersion(),
        cycle_index: 2,
        quantity: 1n,
        existing: [],
        discounts: [
          Invoicing.DiscountRule.Amount({ discount_id: "dsc_2", discount_code: "BIG", amount: usd(10_000n) })
        ],
        creditBalance: usd(500n)
      })
    )
    expect([d.discounts[0]!.amount, d.creditApplied, d.total].map(Money.format)).toEqual(["30.00", "0.00", "0.00"])
  })

  it("issues at most one invoice per (cycle, type)", () => {
    const r = Invoicing.cycle({
      invoice_type: "renewal",
      price: priceVersion(),
      cycle_index: 4,
      quantity: 1n,
      existing: [{ cycle_index: 4, invoice_type: "renewal" }]
    })
    expect(Result.isFailure(r) && r.failure._tag).toBe("DuplicateInvoice")
    expect(
      Result.isSuccess(
        Invoicing.cycle({
          invoice_type: "renewal",
          price: priceVersion(),
          cycle_index: 5,
          quantity: 1n,
          existing: [{ cycle_index: 4, invoice_type: "renewal" }]
        })
      )
    ).toBe(true)
  })
})

describe("Invoicing.upgrade / CreditNotes.draft", () => {
  const period = { start: Date.parse("2024-01-01T00:00:00Z"), end: Date.parse("2024-02-01T00:00:00Z") }
  it("an upgrade invoice carries the credit and charge lines of the proration", () => {
    const proration = Result.getOrThrow(
      Proration.prorate({
        policy: Proration.defaultPolicy,
        period,
        at: Date.parse("2024-01-16T00:00:00Z"),
        paid: usd(1000n),
        newAmount: usd(2000n),
        creditMode: "refund"
      })
    )
    const d = draft(Invoicing.upgrade({ proration, cycle_index: 0, fromName: "Basic", toName: "Pro", existing: [] }))
    expect(d.lines.map((l) => l.amount.amount)).toEqual([-516n, 1032n])
    expect(d.total).toEqual(usd(516n))
    expect(d.invoice_type).toBe("upgrade")
  })
  it("a refund invoice references its original and refunds never exceed what was paid", () => {
    const d = CreditNotes.draft({
      amount: usd(300n),
      cycle_index: 0,
      original_invoice_id: "inv_1",
      reason: "requested_by_customer"
    })
    expect(d.total).toEqual(usd(300n))
    expect(d.original_invoice_id).toEqual(Option.some("inv_1"))
    expect(GiveBack.refundable(usd(1000n), usd(300n))).toEqual(usd(700n))
    expect(GiveBack.refundable(usd(1000n), usd(1200n))).toEqual(usd(0n))
  })
})

describe("GiveBack.giveBack / Invoicing.change: what a change gives back, invoice by invoice", () => {
  const usd = (minor: bigint) => Money.make(minor, "USD")
  const vat = (taxable: bigint, amount: bigint): Invoicing.TaxLine => ({
    tax_rate_id: "txr_1",
    name: "TVA",
    percentage: "20",
    country: "FR",
    region: null,
    inclusive: false,
    taxable: usd(taxable),
    amount: usd(amount)
  })
  // the cycle's invoices, newest first: an upgrade 21.68 (6.19 tax on 30.97), the first 30.00 untaxed
  const upgrade: GiveBack.PaidInvoice = {
    invoice_id: "inv_up",
    trade_id: "trd_up",
    paid: usd(2168n),
    tax_lines: [vat(3097n, 619n)],
    givenBack: usd(0n)
  }
  const first: GiveBack.PaidInvoice = {
    invoice_id: "inv_1",
    trade_id: "trd_1",
    paid: usd(3000n),
    tax_lines: [],
    givenBack: usd(0n)
  }
  const collected: GiveBack.Collected = {
    paid: usd(5168n),
    exclusiveTax: usd(619n),
    tax_lines: [vat(3097n, 619n)],
    givenBack: usd(0n),
    invoices: [upgrade, first]
  }

  it("takes the newest invoice first, each share taxed by its own invoice's lines; the sum is the whole", () => {
    const given = GiveBack.giveBack(collected, usd(2500n))
    // 25.00 × 51.68 / 45.49 = 28.40: 21.68 from the upgrade (all of its 6.19 tax), 6.72 untaxed
    expect(given.shares.map((s) => [s.invoice_id, s.amount.amount, s.tax_lines.map((t) => t.amount.amount)])).toEqual([
      ["inv_up", 2168n, [619n]],
      ["inv_1", 672n, []]
    ])
    expect([given.total.amount, given.tax.amount]).toEqual([2840n, 619n])
  })

  it("an invoice already given back in part gives only the rest, and only the tax not given back yet", () => {
    const given = GiveBack.giveBack(
      { ...collected, givenBack: usd(1000n), invoices: [{ ...upgrade, givenBack: usd(1000n) }, first] },
      usd(1000n)
    )
    // 11.36 gross: 11.36 of the upgrade's last 11.68; tax 6.19 × 21.36/21.68 − 6.19 × 10.00/21.68
    expect(given.shares.map((s) => [s.invoice_id, s.amount.amount])).toEqual([["inv_up", 1136n]])
    expect(given.tax.amount).toBe(610n - 286n)
  })

  it("an upgrade's credit carries the old invoice's own tax (none), its charge today's", () => {
    const { draft, shares } = Invoicing.change({
      cycle_index: 0,
      currency: "USD",
      lines: [
        { kind: "proration_credit", description: "Unused", quantity: 1n, amount: usd(-1548n) },
        { kind: "proration_charge", description: "Remaining", quantity: 1n, amount: usd(3097n) }
      ],
      credit: usd(1548n),
      chargeTax: [vat(3097n, 619n)],
      collected: { paid: usd(3000n), exclusiveTax: usd(0n), tax_lines: [], givenBack: usd(0n), invoices: [first] }
    })
    expect([draft.total.amount, draft.tax.amount]).toEqual([2168n, 619n])
    expect(shares.map((s) => [s.invoice_id, s.amount.amount])).toEqual([["inv_1", 1548n]])
  })
})

describe("BalanceCredit.creditToBalance: a renewal's proration credits its lines cannot absorb", () => {
  const taxLine = (amount: bigint, taxable: bigint, inclusive: boolean): Invoicing.TaxLine => ({
    tax_rate_id: null,
    name: "VAT",
    percentage: inclusive ? "19" : "20",
    country: null,
    region: null,
    inclusive,
    taxable: usd(taxable),
    amount: usd(amount)
  })
  const renewal = () =>
    Invoicing.total({
      invoice_type: "renewal",
      cycle_index: 1,
      currency: "USD",
      lines: [
        { kind: "subscription", description: "Plan", quantity: 1n, amount: usd(1000n) },
        { kind: "proration_credit", description: "Unused", quantity: 1n, amount: usd(-5000n) },
        { kind: "proration_charge", description: "Remaining", quantity: 1n, amount: usd(500n) }
      ]
    })

  it("the rest goes to the balance with its exclusive tax in proportion; the document adds up to its total", () => {
    // the 50.00 credit was paid with 10.00 exclusive tax: 35.00 of it is left, with 7.00 tax
    const { draft: d, credited } = BalanceCredit.creditToBalance(
      renewal(),
      [taxLine(1000n, 5000n, false)],
      usd(5000n),
      "Credited to your balance"
    )
    expect(Money.format(credited)).toBe("42.00")
    expect(d.credited).toEqual(credited)
    expect(d.lines.at(-1)).toMatchObject({ kind: "refund", amount: usd(4200n) })
    expect(d.tax_lines.map((t) => [Money.format(t.taxable), Money.format(t.amount)])).toEqual([["-35.00", "-7.00"]])
    const exclusive = d.tax_lines.reduce((a, t) => (t.inclusive ? a : a + t.amount.amount), 0n)
    expect(d.subtotal.amount - Invoicing.sumOfDiscounts(d.discounts) + exclusive - d.creditApplied.amount).toBe(
      d.total.amount
    )
    expect(Money.format(d.total)).toBe("0.00")
  })

  it("an inclusive tax is inside the credit: the rest goes as it is, the tax stated; nothing left over changes nothing", () => {
    const { draft: d, credited } = BalanceCredit.creditToBalance(
      renewal(),
      [taxLine(798n, 4202n, true)],
      usd(5000n),
      "Credited to your balance"
    )
    expect(Money.format(credited)).toBe("35.00")
    expect(d.tax_lines.map((t) => [t.inclusive, Money.format(t.amount)])).toEqual([[true, "-5.59"]])
    expect(Money.format(d.total)).toBe("0.00")
    const none = Invoicing.total({
      invoice_type: "renewal",
      cycle_index: 1,
      currency: "USD",
      lines: [{ kind: "subscription", description: "Plan", quantity: 1n, amount: usd(1000n) }]
    })
    expect(BalanceCredit.creditToBalance(none, [taxLine(1000n, 5000n, false)], usd(5000n), "x")).toEqual({
      draft: none,
      credited: usd(0n)
    })
  })
})
