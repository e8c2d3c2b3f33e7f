/**
 * The checks of the commercial merchants in a model run: a commercial invoice as the model and the
 * engine shape it, and, on the engine's own documents, issue 29's invariants (refunded + credited
 * ≤ collected, tax back ≤ tax collected) and a subscription against the model. Used by
 * `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import type { Billing, Invoice } from "@recur/core"
import { DateTime, Effect } from "effect"
import { type CInvoice, CPRICES, type CSub, ledger } from "./Commercial.js"
import { invoicesOfSub } from "./Operations.js"
import { fmt } from "./Reference.js"

export const cPriceId = (s: CSub, i: number) => s.m.prices[i]!
export const cShape = (i: CInvoice) => [i.type, i.cycle, fmt(i.amount), fmt(i.tax)] as const
export const cEngineShape = (i: Invoice.Invoice) => [i.invoice_type, i.cycle_index, i.amount, i.tax_amount] as const
const minor = (text: string) => {
  const neg = text.startsWith("-")
  const [w, f = ""] = (neg ? text.slice(1) : text).split(".")
  const v = BigInt(w!) * 100n + BigInt(f.padEnd(2, "0"))
  return neg ? -v : v
}

/**
 * The checks on the engine's documents for one run: `whereAll` names the operations so far in a
 * failure. A canceled subscription's ledger is read once.
 */
export const commercialChecks = (billing: Billing.Billing["Service"], whereAll: () => string) => {
  /**
   * The invariants of issue 29 on the engine's own documents: for the subscription and its
   * customer, refunded + credited ≤ collected and tax given back ≤ tax collected.
   */
  /** A subscription's collected, refunded, credited, tax collected and tax given back, from the engine's documents. */
  const settled = new Map<
    CSub,
    { readonly credit: bigint; readonly ledger: readonly [bigint, bigint, bigint, bigint, bigint] }
  >()
  const engineLedger = (s: CSub) =>
    Effect.gen(function* () {
      // another subscription's renewal may still take its credit (SharedCredit): read again then
      const done = settled.get(s)
      if (done !== undefined && done.credit === s.credit) return done.ledger
      const got = yield* invoicesOfSub(billing, s.m.id, s.id, Number.MAX_SAFE_INTEGER)
      const sub = yield* billing.getSubscription(s.m.id, s.id)
      let [c, r, cr, ti, tb] = [0n, 0n, minor(sub.credit_balance), 0n, 0n]
      for (const i of got) {
        if (i.invoice_type === "refund") {
          r += minor(i.amount)
          tb += minor(i.tax_amount)
        } else {
          // credit applied to it: what its lines and exclusive taxes come to less what was due
          const due =
            i.lines.reduce((a, l) => a + minor(l.amount), 0n) +
            i.tax_lines.reduce((a, t) => (t.inclusive ? a : a + minor(t.amount)), 0n)
          const applied = due > minor(i.amount) ? due - minor(i.amount) : 0n
          cr += applied
          if (i.biz_status !== "open" && i.biz_status !== "retrying" && i.biz_status !== "failed") {
            // credit applied counts as collected (credit spent and given back again is counted again)
            c += minor(i.amount) + applied
            ti += minor(i.tax_amount)
          }
        }
      }
      const ledger = [c, r, cr, ti, tb] as const
      // a canceled subscription's documents no longer change
      if (s.status === "canceled") settled.set(s, { credit: s.credit, ledger })
      return ledger
    })

  /**
   * The invariants of issue 29 on the engine's own documents: for every subscription and
   * for the customer, refunded + credited ≤ collected and tax given back ≤ tax collected.
   */
  const invariants = (subs: ReadonlyArray<CSub>, label: string) =>
    Effect.gen(function* () {
      let [collected, refunded, credited, taxIn, taxBack] = [0n, 0n, 0n, 0n, 0n]
      for (const s of subs) {
        const [c, r, cr, ti, tb] = yield* engineLedger(s)
        // credit its renewals took from the customer's other subscriptions was collected there
        expect(
          r + cr <= c + s.sharedIn,
          `${whereAll()}: subscription ${s.id} refunded ${fmt(r)} + credited ${fmt(cr)} > collected ${fmt(c)} + taken from the customer's other subscriptions ${fmt(s.sharedIn)}`
        ).toBe(true)
        expect(tb <= ti, `${whereAll()}: subscription ${s.id} tax back ${fmt(tb)} > tax collected ${fmt(ti)}`).toBe(
          true
        )
        collected += c
        refunded += r
        credited += cr
        taxIn += ti
        taxBack += tb
      }
      expect(
        refunded + credited <= collected,
        `${whereAll()}: ${label}: refunded ${fmt(refunded)} + credited ${fmt(credited)} > collected ${fmt(collected)}`
      ).toBe(true)
      expect(taxBack <= taxIn, `${whereAll()}: ${label}: tax back ${fmt(taxBack)} > tax collected ${fmt(taxIn)}`).toBe(
        true
      )
    })

  /** The engine's commercial subscription and newest invoices against the model's, then the invariants. */
  const cVerify = (s: CSub) =>
    Effect.gen(function* () {
      const where = () =>
        `${whereAll()}\n  known disagreements met: items ${[...s.known].join(", ") || "none"}\n  model: price ${CPRICES[s.price]!.join(" ")} ×${s.qty}, cycle ${s.cycle}, basis ${fmt(s.basis)}, customer in ${s.cust.country}, terms ${s.terms.map((t) => `${t.d.code}@${t.first}`).join(",")}, credit ${fmt(s.credit)}, invoices ${s.invoices.map((i) => cShape(i).join(" ")).join(" | ")}`
      const fresh = s.invoices.length - s.checked
      const got = yield* invoicesOfSub(billing, s.m.id, s.id, fresh + 1)
      expect(got.slice(0, fresh).reverse().map(cEngineShape), where()).toEqual(s.invoices.slice(s.checked).map(cShape))
      if (s.checked === 0) expect(got.length, where()).toBe(fresh)
      // the trades the model's invoices were paid by (a refund names one)
      for (let k = 0; k < fresh; k++) s.invoices[s.checked + k]!.tradeId = got[fresh - 1 - k]!.trade_id
      s.checked = s.invoices.length
      const sub = yield* billing.getSubscription(s.m.id, s.id)
      expect([sub.status, sub.price_id, sub.quantity, sub.credit_balance, sub.cycle_index], where()).toEqual([
        s.status === "canceled" ? "canceled" : s.pastDue !== null ? "past_due" : "active",
        cPriceId(s, s.price),
        s.qty.toString(),
        fmt(s.credit),
        s.cycle
      ])
      if (s.status !== "canceled" && sub.current_period_end !== null)
        expect(DateTime.toEpochMillis(sub.current_period_end), where()).toBe(s.end)
      // the model's own ledger keeps the invariants too
      const l = ledger(s)
      expect(l.refunded + l.credited <= l.collected && l.taxBack <= l.taxIn, `${where()}: model ledger`).toBe(true)
      yield* invariants(s.cust.subs, `customer ${s.cust.id}`)
    })

  return { invariants, cVerify }
}
