import { prop } from "../prop.js"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { BillingAnchor, BillingPeriod, Invoicing, Money, Price, SubscriptionItems } from "../../src/index.js"
import { lineDues } from "../../src/checkout/SessionAmounts.js"
import { priceVersion } from "../fixtures.js"

const at = (s: string) => Date.parse(s)

const priceOf = (i: number, amount: string, unit: "week" | "month" | "quarter" | "year") =>
  priceVersion({
    id: `pri_01jd00000000000000000000${String(i).padStart(2, "0")}`,
    price_version_id: `prv_01jd00000000000000000000${String(i).padStart(2, "0")}`,
    price_name: `Item ${i}`,
    price_plan: new Price.PricePlan({
      price_plan_id: "pln_01jd0000000000000000000000",
      plan_name: "Plan",
      billing_cycle_unit: unit,
      billing_cycle_count: 1,
      is_infinite: true,
      base_price_val: amount,
      plan_description: "",
      price_plan_tiers: []
    })
  })

interface Line {
  readonly pv: Price.PriceVersion
  readonly quantity: bigint
}

/** The first invoice of an anchored checkout of `lines` paid at `paid`, built as the payment builds it. */
const firstInvoice = (lines: ReadonlyArray<Line>, policy: string, anchor: number, paid: number) => {
  const [base, ...others] = lines
  const first = BillingAnchor.firstPeriod(policy, base!.pv, anchor, "create_prorations", paid)!
  const draft = SubscriptionItems.withItemLines(
    Result.getOrThrow(
      Invoicing.cycle({
        invoice_type: "initial",
        price: base!.pv,
        cycle_index: 0,
        paidCycles: 0,
        quantity: base!.quantity,
        usage: 0n,
        existing: [],
        share: first.share
      })
    ),
    others.map((l) => ({
      id: `si_${l.pv.id}`,
      price_id: l.pv.id,
      price_version_id: l.pv.price_version_id,
      quantity: l.quantity.toString(),
      created_at: paid,
      version: l.pv
    })),
    0,
    { share: first.share }
  )
  return { share: first.share, draft }
}

/** The rows of docs/proration.md's table of anchors over several items. */
const vectors = () => {
  const doc = readFileSync(fileURLToPath(new URL("../../../../docs/proration.md", import.meta.url)), "utf8")
  const table = doc.split("<!-- anchor-items-vectors:start -->")[1]!.split("<!-- anchor-items-vectors:end -->")[0]!
  return table
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| items"))
    .map((l) =>
      l
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim())
    )
}

/** `30.00 + 12.00 × 5 month` → the lines and their interval. */
const itemsOf = (text: string): ReadonlyArray<Line> => {
  const unit = text.split(" ").pop() as "week" | "month" | "year"
  return text
    .slice(0, -unit.length)
    .split("+")
    .map((part, i) => {
      const [amount, quantity] = part.split("×").map((s) => s.trim())
      return { pv: priceOf(i, amount!, unit), quantity: BigInt(quantity ?? "1") }
    })
}

describe("a billing anchor over several items", () => {
  it("the vectors in docs/proration.md: each line its share rounded once, the invoice their sum, the page the same", () => {
    const rows = vectors()
    expect(rows.length).toBeGreaterThanOrEqual(4)
    for (const [items, policy, paid, anchor, share, lineAmounts, amount, once] of rows) {
      const lines = itemsOf(items!)
      const first = firstInvoice(lines, policy!, at(anchor!), at(paid!))
      expect(`${first.share.unused}/${first.share.total}`, items).toBe(share)
      expect(first.draft.lines.map((l) => Money.format(l.amount)).join(", "), items).toBe(lineAmounts)
      expect(Money.format(first.draft.total), items).toBe(amount)
      // what the checkout page shows is what the invoice charges
      const dues = lineDues(lines, true, first.share)
      expect(dues.map((d) => Money.format(d)).join(", "), items).toBe(lineAmounts)
      // the sum of the whole periods rounded once, for comparison: not what is charged
      const whole = lines.reduce(
        (a, l) => a + Money.parse(l.pv.price_plan!.base_price_val, "USD").pipe(Result.getOrThrow).amount * l.quantity,
        0n
      )
      expect(
        Money.format(Money.proportion(Money.make(whole, "USD"), first.share.unused, first.share.total)),
        items
      ).toBe(once)
    }
  })

  const policies = fc.oneof(
    fc.constant("per_second"),
    fc.constant("per_day"),
    fc.integer({ min: 28, max: 31 }).map((n) => `fixed_days(${n})`)
  )
  const units = fc.constantFrom("week", "month", "quarter", "year") as fc.Arbitrary<
    "week" | "month" | "quarter" | "year"
  >

  prop(
    "each line is its whole period's share rounded once; their sum is the invoice and the page, within half a cent a line of the sum rounded once",
    [
      fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      units,
      policies,
      fc.array(fc.tuple(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 50 })), {
        minLength: 2,
        maxLength: 6
      })
    ],
    ([paid, where, unit, policy, specs]) => {
      const latest = BillingPeriod.add(paid, unit, 1)
      const anchor = Math.min(latest, paid + 1 + Math.floor(where * (latest - paid - 1)))
      const lines = specs.map(([minor, quantity], i) => ({
        pv: priceOf(i, Money.format(Money.make(BigInt(minor), "USD")), unit),
        quantity: BigInt(quantity)
      }))
      const first = firstInvoice(lines, policy, anchor, paid)
      const { unused, total } = first.share
      const wholes = lines.map((l, i) => BigInt(specs[i]![0]) * l.quantity)
      // one rounding step per line: its whole period's amount × share, half-even
      expect(first.draft.lines.map((l) => l.amount.amount)).toEqual(
        wholes.map((w) => Money.proportion(Money.make(w, "USD"), unused, total).amount)
      )
      const sum = first.draft.lines.reduce((a, l) => a + l.amount.amount, 0n)
      expect(first.draft.total.amount).toBe(sum)
      expect(lineDues(lines, true, first.share).reduce((a, d) => a + d.amount, 0n)).toBe(sum)
      // never more than the whole periods, and within half a minor unit a line (and the sum's own) of the sum rounded once
      const all = wholes.reduce((a, w) => a + w, 0n)
      expect(sum <= all).toBe(true)
      const once = Money.proportion(Money.make(all, "USD"), unused, total).amount
      const diff = sum > once ? sum - once : once - sum
      expect(2n * diff <= BigInt(lines.length) + 1n).toBe(true)
    },
    { numRuns: 200 }
  )
})
