/**
 * `create_prorations` over a cycle, as the rules of `ChangeQuote` take it change after change: the
 * credit cancels the cycle's pending charges first, then what the cycle's invoices still hold; the
 * pending lines the next invoice bills never give back more than the cycle collected.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { Invoicing, Money, Proration } from "../../src/index.js"
import type * as Entities from "../../src/kernel/Entities.js"
import * as ChangeQuote from "../../src/subscriptions/ChangeQuote.js"
import { prop } from "../prop.js"

const period = { start: Date.parse("2026-01-01T00:00:00Z"), end: Date.parse("2026-02-01T00:00:00Z") }
const span = period.end - period.start

/** Plays `changes` (instant offsets, new plan amounts) on a cycle paid `paid`: the pending lines and the ledger. */
const play = (policy: Proration.Policy, paid: bigint, changes: ReadonlyArray<readonly [number, bigint]>) => {
  let basis = paid
  let given = 0n
  const pending: Array<Entities.PendingProration> = []
  const steps: Array<{ readonly given: bigint; readonly pendingNet: bigint }> = []
  const instants = changes.map(([t]) => period.start + t).sort((a, b) => a - b)
  changes.forEach(([, amount], i) => {
    const available = ChangeQuote.pendingAvailable({
      currency: "USD",
      pending_prorations: pending,
      subscription: { cycle_index: 0 }
    })
    const p = Result.getOrThrow(
      Proration.prorate({
        policy,
        period,
        at: instants[i]!,
        paid: Money.make(basis, "USD"),
        newAmount: Money.make(amount, "USD"),
        creditMode: "refund",
        held: Money.make(paid - given + available.amount, "USD")
      })
    )
    const fromPaid = ChangeQuote.creditFromPaid(p.credit, available)
    given += fromPaid.amount
    pending.push(
      {
        cycle_index: 0,
        kind: "proration_credit",
        description: "unused",
        amount: Money.format(Money.negate(p.credit)),
        from_paid: Money.format(fromPaid),
        quote_id: `q${i}`,
        at: instants[i]!
      },
      {
        cycle_index: 0,
        kind: "proration_charge",
        description: "remaining",
        amount: Money.format(p.charge),
        quote_id: `q${i}`,
        at: instants[i]!
      }
    )
    basis = amount
    const pendingNet = pending.reduce(
      (a, l) => a + Result.getOrThrow(Money.parse(l.amount, "USD", { allowNegative: true })).amount,
      0n
    )
    steps.push({ given, pendingNet })
  })
  return { steps, pending, basis }
}

const policies = fc.constantFrom(
  Proration.Policy.PerSecond(),
  Proration.Policy.PerDay(),
  Proration.Policy.FixedDays({ days: 30 })
)
const changes = fc.array(fc.tuple(fc.integer({ min: 0, max: span }), fc.bigInt({ min: 0n, max: 1_000_000n })), {
  minLength: 1,
  maxLength: 6
})

describe("create_prorations over a cycle", () => {
  prop(
    "after every change: given back from the payments ≤ collected, and the pending credits net of charges ≤ that",
    [policies, fc.bigInt({ min: 0n, max: 1_000_000n }), changes],
    ([policy, paid, cs]) => {
      for (const { given, pendingNet } of play(policy, paid, cs).steps) {
        expect(given).toBeLessThanOrEqual(paid)
        expect(-pendingNet).toBeLessThanOrEqual(given)
      }
    },
    { numRuns: 300 }
  )

  prop(
    "the next invoice with the pending lines: what it gives back (its unapplied credit) never exceeds what was collected",
    [policies, fc.bigInt({ min: 0n, max: 1_000_000n }), changes],
    ([policy, paid, cs]) => {
      const { pending, basis } = play(policy, paid, cs)
      const invoice = Invoicing.total({
        invoice_type: "renewal",
        cycle_index: 1,
        currency: "USD",
        lines: [
          { kind: "subscription", description: "plan", quantity: 1n, amount: Money.make(basis, "USD") },
          ...pending.map((l) => ({
            kind: l.kind,
            description: l.description,
            quantity: 1n,
            amount: Result.getOrThrow(Money.parse(l.amount, "USD", { allowNegative: true }))
          }))
        ]
      })
      // the invoice plus the credit it leaves = the plan plus the pending lines, exactly
      const net = pending.reduce(
        (a, l) => a + Result.getOrThrow(Money.parse(l.amount, "USD", { allowNegative: true })).amount,
        0n
      )
      expect(invoice.total.amount - Invoicing.unappliedCredit(invoice).amount).toBe(basis + net)
      expect(Invoicing.unappliedCredit(invoice).amount).toBeLessThanOrEqual(paid)
      expect(invoice.total.amount).toBeGreaterThanOrEqual(0n)
    },
    { numRuns: 300 }
  )

  it("30.00 → 60.00 → 10.00 at one instant: the second credit cancels the first's pending charge", () => {
    const t = Date.parse("2026-01-16T00:00:00Z") - period.start
    const { pending, steps } = play(Proration.Policy.PerSecond(), 3000n, [
      [t, 6000n],
      [t, 1000n]
    ])
    expect(pending.map((l) => [l.amount, l.from_paid])).toEqual([
      ["-15.48", "15.48"],
      ["30.97", undefined],
      ["-30.97", "0.00"],
      ["5.16", undefined]
    ])
    expect(steps.at(-1)!.given).toBe(1548n)
  })
})
