/**
 * Issue 34 (4): the customer balance ledger over REST — a downgrade's credit and its use by the
 * renewal as ledger entries, a manual adjustment the next renewal applies, and refusals that
 * change nothing. After each step the balance is the sum of the entries, each entry's
 * `ending_balance` the running sum, and the subscription's `credit_balance` its share of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

const cents = (s: string) => Math.round(Number(s) * 100)

for (const [name, storage] of backends()) {
  describe(`customer balance (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { ok, fresh, advance, price, subscribe, invoicesOf, subOf, preview, commit } = changeHelpers(api)

    const ledger = async (k: string, customer: string) =>
      ok(await api.call("GET", `/api/v1/customers/${customer}/balance_transactions?limit=100`, k)).list as Array<any>
    const balance = async (k: string, customer: string) =>
      ok(await api.call("GET", `/api/v1/customers/${customer}/balance`, k)).balance as Array<any>

    /** The invariant: balance = Σ entries, ending balances chained, the subscription's share equal to it. */
    const invariant = async (k: string, customer: string, sub: string) => {
      const entries = (await ledger(k, customer)).slice().reverse()
      let sum = 0
      for (const e of entries) {
        sum += cents(e.amount)
        expect(cents(e.ending_balance)).toBe(sum)
      }
      const usd = (await balance(k, customer)).find((b) => b.currency === "USD")
      expect(usd === undefined ? 0 : cents(usd.amount)).toBe(sum)
      expect(cents((await subOf(k, sub)).credit_balance)).toBe(sum)
      const customerRead = ok(await api.call("GET", `/api/v1/front/customer/${customer}`, k)).customer
      expect(customerRead.balance).toEqual(usd === undefined ? [] : [usd])
      return entries
    }

    const setup = async () => {
      const k = await fresh("credit_balance")
      // 30.00 a month, and a 10.00 plan of the same product
      const p30 = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const p10 = await price(k, p30.productId, "10.00", "Team 10")
      const sub = await subscribe(k, p30.priceId)
      const customer = (await subOf(k, sub.id)).customer_id as string
      return { k, p10, sub: sub.id, customer }
    }

    it("a downgrade's credit is a proration_credit entry; the renewal that uses it an applied_to_invoice entry", async () => {
      const { k, p10, sub, customer } = await setup()
      expect(await invariant(k, customer, sub)).toEqual([])
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: p10, proration: "always_invoice" }
      const q = ok(await preview(k, sub, body))
      ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      const afterDowngrade = await invariant(k, customer, sub)
      expect(afterDowngrade.map((e) => e.source_type)).toEqual(["proration_credit"])
      expect(afterDowngrade[0].subscription_id).toBe(sub)
      const credit = cents(afterDowngrade[0].amount)
      // (30.00 − 10.00) × 16/31 = 10.32
      expect(credit).toBe(1032)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("0.00")
      const afterRenewal = await invariant(k, customer, sub)
      expect(afterRenewal.map((e) => [e.source_type, cents(e.amount)])).toEqual([
        ["proration_credit", credit],
        ["applied_to_invoice", -1000]
      ])
      expect(afterRenewal[1].source_id).toBe(renewal.invoice_id)
    })

    it("a manual credit is applied by the next renewal, which charges less; a debit is charged on it", async () => {
      const { k, sub, customer } = await setup()
      const adjusted = ok(
        await api.call("POST", `/api/v1/customers/${customer}/balance_transactions`, k, {
          amount: "15.00",
          currency: "usd",
          reason: "goodwill after an outage"
        })
      ).balance_transaction
      expect([adjusted.amount, adjusted.ending_balance, adjusted.source_type, adjusted.description]).toEqual([
        "15.00",
        "15.00",
        "manual_adjustment",
        "goodwill after an outage"
      ])
      await invariant(k, customer, sub)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const feb = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")[0]
      expect(feb.amount).toBe("15.00")
      expect((await invariant(k, customer, sub)).map((e) => [e.source_type, e.amount])).toEqual([
        ["manual_adjustment", "15.00"],
        ["applied_to_invoice", "-15.00"]
      ])
      ok(
        await api.call("POST", `/api/v1/customers/${customer}/balance_transactions`, k, {
          amount: "-2.50",
          currency: "USD",
          reason: "late fee"
        })
      )
      await invariant(k, customer, sub)
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const mar = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")[1]
      expect(mar.amount).toBe("32.50")
      const entries = await invariant(k, customer, sub)
      expect(cents(entries.at(-1).ending_balance)).toBe(0)
    })

    it("a credit note to the balance: numbered in the credit-note series, taxed in proportion, the renewal charges less; never more than the invoice holds", async () => {
      const { k, sub, customer } = await setup()
      const initial = (await invoicesOf(k, sub))[0]
      expect([initial.invoice_type, initial.amount]).toEqual(["initial", "30.00"])
      const path = `/api/v1/invoices/${initial.invoice_id}/credit_notes`
      const note = ok(await api.call("POST", path, k, { amount: "12.00", reason: "service outage" })).credit_note
      expect([note.invoice_type, note.amount, note.original_invoice_id, note.trade_id]).toEqual([
        "refund",
        "12.00",
        initial.invoice_id,
        null
      ])
      expect(note.number).toMatch(/-CN-\d{6}$/)
      expect(note.lines.map((l: any) => [l.kind, l.description, l.amount])).toEqual([
        ["refund", "service outage", "12.00"]
      ])
      const entries = await invariant(k, customer, sub)
      expect(entries.map((e) => [e.source_type, e.source_id, e.amount])).toEqual([
        ["credit_note", note.invoice_id, "12.00"]
      ])
      // the invoice holds 18.00 now: more is refused, by a credit note or a refund, and changes nothing
      const over = await api.call("POST", path, k, { amount: "18.01" })
      expect(refusal(over)).toEqual([400, "InvalidParameter", "amount"])
      const refund = await api.call("POST", "/api/v1/refund", k, { trade_id: initial.trade_id, amount: "18.01" })
      expect(refund.status).toBe(400)
      expect(await invariant(k, customer, sub)).toHaveLength(1)
      // the renewal applies the credit before charging
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const feb = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")[0]
      expect([feb.amount, feb.credit_applied]).toEqual(["18.00", "12.00"])
      expect((await invariant(k, customer, sub)).map((e) => e.source_type)).toEqual([
        "credit_note",
        "applied_to_invoice"
      ])
    })

    it("credit-note refusals change nothing: an unknown method, a paid invoice to reduce, an unknown invoice, a bad amount", async () => {
      const { k, sub, customer } = await setup()
      const initial = (await invoicesOf(k, sub))[0]
      const path = `/api/v1/invoices/${initial.invoice_id}/credit_notes`
      for (const [body, param] of [
        [{ amount: "1.00", method: "coupon" }, "method"],
        [{ amount: "1.00", method: "refund", reason: "" }, "reason"],
        [{}, "amount"],
        [{ amount: "0.00" }, "amount"],
        [{ amount: "-1.00" }, "amount"],
        [{ amount: "1.001" }, "amount"],
        [{ amount: "30.01" }, "amount"]
      ] as const) {
        expect(refusal(await api.call("POST", path, k, body)), JSON.stringify(body)).toEqual([
          400,
          "InvalidParameter",
          param
        ])
      }
      // a paid invoice is not reduced (reduce_invoice is for what is still owed)
      const reduce = await api.call("POST", path, k, { amount: "1.00", method: "reduce_invoice" })
      expect(reduce.status).toBe(409)
      expect((await api.call("POST", "/api/v1/invoices/inv_nope/credit_notes", k, { amount: "1.00" })).status).toBe(404)
      expect(await invariant(k, customer, sub)).toEqual([])
      expect((await invoicesOf(k, sub)).length).toBe(1)
    })

    it("refusals change nothing: missing or bad fields, 0, above the bound, an unknown customer", async () => {
      const { k, sub, customer } = await setup()
      const path = `/api/v1/customers/${customer}/balance_transactions`
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ currency: "USD", reason: "x" }, "amount"],
        [{ amount: "1.00", reason: "x" }, "currency"],
        [{ amount: "1.00", currency: "USD" }, "reason"],
        [{ amount: "1.00", currency: "XYZ", reason: "x" }, "currency"],
        [{ amount: "1.001", currency: "USD", reason: "x" }, "amount"],
        [{ amount: "abc", currency: "USD", reason: "x" }, "amount"],
        [{ amount: "0.00", currency: "USD", reason: "x" }, "amount"],
        [{ amount: "99999999999999999.00", currency: "USD", reason: "x" }, "amount"],
        [{ amount: "1.00", currency: "USD", reason: "  " }, "reason"],
        [{ amount: "1.00", currency: "USD", reason: "r".repeat(501) }, "reason"]
      ]
      for (const [body, param] of cases) {
        const r = await api.call("POST", path, k, body)
        expect(refusal(r), JSON.stringify(body)).toEqual([400, "InvalidParameter", param])
      }
      const unknown = await api.call("POST", "/api/v1/customers/cus_nope/balance_transactions", k, {
        amount: "1.00",
        currency: "USD",
        reason: "x"
      })
      expect(unknown.status).toBe(404)
      expect((await api.call("GET", "/api/v1/customers/cus_nope/balance_transactions", k)).status).toBe(404)
      expect(await invariant(k, customer, sub)).toEqual([])
      // a bad page is refused as every list's
      expect((await api.call("GET", `${path}?limit=0`, k)).status).toBe(400)
    })
  })
}
