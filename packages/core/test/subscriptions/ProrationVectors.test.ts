/**
 * The vectors of docs/proration.md ("Vectors by mode and policy"), read from the document itself:
 * for every policy and proration mode, what a change credits and charges, what moves now, what
 * the next cycle's invoice bills (the pending lines after its own line) and what it leaves as credit.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Result } from "effect"
import { Invoicing, Money, Proration } from "../../src/index.js"

const doc = readFileSync(join(import.meta.dirname, "..", "..", "..", "..", "docs", "proration.md"), "utf8")
const table = doc.slice(doc.indexOf("<!-- vectors:modes -->"), doc.indexOf("<!-- /vectors:modes -->"))
const rows = table
  .split("\n")
  .filter((l) => l.startsWith("| ") && !l.startsWith("| policy") && !l.startsWith("|---"))
  .map((l) =>
    l
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim())
  )

const usd = (s: string) => Result.getOrThrow(Money.parse(s, "USD", { allowNegative: true }))
const period = { start: Date.parse("2026-01-01T00:00:00Z"), end: Date.parse("2026-02-01T00:00:00Z") }
const at = Date.parse("2026-01-16T12:00:00Z")

describe("docs/proration.md vectors by mode and policy", () => {
  it("the table has every policy × mode", () => {
    expect(rows.length).toBe(15)
    expect(new Set(rows.map((r) => r[0]))).toEqual(new Set(["per_second", "per_day", "fixed_days(30)"]))
    expect(new Set(rows.map((r) => r[3]))).toEqual(new Set(["always_invoice", "create_prorations", "none"]))
  })

  for (const [policy, from, to, mode, credit, charge, now, next, balance] of rows) {
    it(`${policy} ${from} → ${to} ${mode}`, () => {
      const p = Result.getOrThrow(
        Proration.prorate({
          policy: Result.getOrThrow(Proration.parsePolicy(policy!)),
          period,
          at,
          paid: usd(from!),
          newAmount: usd(to!),
          creditMode: "refund",
          held: usd(from!)
        })
      )
      const prorates = mode !== "none"
      const c = prorates ? p.credit : Money.zero("USD")
      const ch = prorates ? p.charge : Money.zero("USD")
      expect([Money.format(c), Money.format(ch)]).toEqual([credit, charge])
      expect(Money.format(mode === "always_invoice" ? p.net : Money.zero("USD"))).toBe(now)
      const invoice = Invoicing.total({
        invoice_type: "renewal",
        cycle_index: 1,
        currency: "USD",
        lines: [
          { kind: "subscription", description: "plan", quantity: 1n, amount: usd(to!) },
          ...(mode === "create_prorations"
            ? [
                { kind: "proration_credit" as const, description: "unused", quantity: 1n, amount: Money.negate(c) },
                { kind: "proration_charge" as const, description: "remaining", quantity: 1n, amount: ch }
              ]
            : [])
        ]
      })
      expect(Money.format(invoice.total)).toBe(next)
      expect(Money.format(Invoicing.unappliedCredit(invoice))).toBe(balance)
    })
  }
})
