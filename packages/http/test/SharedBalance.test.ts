/**
 * Issue 34 (4): the customer balance is the customer's. Credit held by one subscription (a credit
 * note of its invoice) is applied to the customer's other subscription's renewal, and to its
 * one-off invoice, before charging; the upcoming invoice shows it first (preview = commit); a
 * debit held by the renewing subscription nets with it. After each step the balance is the sum
 * of the ledger's entries and of the subscriptions' shares, and nothing is applied twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers } from "./fixtures/changes.js"

const cents = (s: string) => Math.round(Number(s) * 100)

for (const [name, storage] of backends()) {
  describe(`the balance is the customer's (${name})`, { timeout: 240_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { ok, fresh, advance, price, invoicesOf, subOf, upcoming } = changeHelpers(api)

    /** A subscription of `payer` (one customer per payer) to `priceId`, paid by card. */
    const subscribe = async (k: string, payer: string, priceId: string) => {
      const s = ok(
        await api.call("POST", "/api/v1/session", k, { payer_id: payer, line_items: [{ price_id: priceId }] })
      )
      ok(
        await api.call(
          "POST",
          `/checkout/${s.session_id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      )
      return ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session.subscription_id as string
    }
    const ledger = async (k: string, customer: string) =>
      (ok(await api.call("GET", `/api/v1/customers/${customer}/balance_transactions?limit=100`, k)).list as Array<any>)
        .slice()
        .reverse()
    /** balance = Σ entries = Σ shares + what no subscription holds (≥ 0 here: nothing is unheld but credit) */
    const invariant = async (k: string, customer: string, subs: ReadonlyArray<string>) => {
      const entries = await ledger(k, customer)
      let sum = 0
      for (const e of entries) {
        sum += cents(e.amount)
        expect(cents(e.ending_balance)).toBe(sum)
      }
      const usd = (ok(await api.call("GET", `/api/v1/customers/${customer}/balance`, k)).balance as Array<any>).find(
        (b) => b.currency === "USD"
      )
      expect(usd === undefined ? 0 : cents(usd.amount)).toBe(sum)
      let shares = 0
      for (const id of subs) shares += cents((await subOf(k, id)).credit_balance)
      expect(sum - shares).toBeGreaterThanOrEqual(0)
      return { entries, sum, shares }
    }
    const setup = async () => {
      const k = await fresh("credit_balance")
      const team = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const addon = await api.priceOf(k, {}, { product: "Storage", price: "Storage 10" })
      const storage10 = await price(k, addon.productId, "10.00", "Storage 10 flat")
      const payer = `p-${Math.random()}`
      const a = await subscribe(k, payer, team.priceId)
      ok(await advance(k, "2026-01-10T00:00:00Z"))
      const b = await subscribe(k, payer, storage10)
      const customer = (await subOf(k, a)).customer_id as string
      expect((await subOf(k, b)).customer_id).toBe(customer)
      return { k, a, b, customer }
    }
    const creditNote = async (k: string, sub: string, amount: string) => {
      const first = (await invoicesOf(k, sub))[0]
      return ok(
        await api.call("POST", `/api/v1/invoices/${first.invoice_id}/credit_notes`, k, {
          amount,
          method: "credit_balance",
          reason: "outage"
        })
      ).credit_note
    }

    it("one subscription's credit is applied to the other's renewal, shown first by its upcoming invoice", async () => {
      const { k, a, b, customer } = await setup()
      // 4.00 credited from B's invoice: held as B's share; A renews first (Feb 1, B on Feb 10)
      await creditNote(k, b, "4.00")
      expect((await subOf(k, b)).credit_balance).toBe("4.00")
      const before = await invariant(k, customer, [a, b])
      expect(before.sum).toBe(400)
      const shown = await upcoming(k, a)
      expect([shown.credit_applied, shown.amount]).toEqual(["4.00", "26.00"])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, a)).find((i: any) => i.invoice_type === "renewal")
      expect([renewal.credit_applied, renewal.amount]).toEqual(["4.00", "26.00"])
      expect((await subOf(k, b)).credit_balance).toBe("0.00")
      expect((await subOf(k, a)).credit_balance).toBe("0.00")
      const after = await invariant(k, customer, [a, b])
      expect(after.entries.map((e) => [e.source_type, e.amount, e.source_id === renewal.invoice_id])).toEqual([
        ["credit_note", "4.00", false],
        ["applied_to_invoice", "-4.00", true]
      ])
      // B's renewal has nothing left to apply: charged in full, once
      ok(await advance(k, "2026-02-10T00:00:00Z"))
      const bRenewal = (await invoicesOf(k, b)).find((i: any) => i.invoice_type === "renewal")
      expect([bRenewal.credit_applied, bRenewal.amount]).toEqual(["0.00", "10.00"])
      expect((await invariant(k, customer, [a, b])).sum).toBe(0)
    })

    it("credit larger than the renewal: the renewal takes what it needs and the rest stays held", async () => {
      const { k, a, b, customer } = await setup()
      await creditNote(k, a, "25.00")
      // A's share is 25.00: B's renewal (Feb 10, 10.00) after A's (Feb 1, 30.00 − 25.00)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const aRenewal = (await invoicesOf(k, a)).find((i: any) => i.invoice_type === "renewal")
      expect([aRenewal.credit_applied, aRenewal.amount]).toEqual(["25.00", "5.00"])
      // credit B then: 10.00 to B's share, 4.00 more to A's; B renews for nothing, A's rest stays A's
      await creditNote(k, b, "10.00")
      await creditNote(k, a, "4.00")
      ok(await advance(k, "2026-02-10T00:00:00Z"))
      const bRenewal = (await invoicesOf(k, b)).find((i: any) => i.invoice_type === "renewal")
      expect([bRenewal.credit_applied, bRenewal.amount]).toEqual(["10.00", "0.00"])
      expect((await subOf(k, a)).credit_balance).toBe("4.00")
      expect((await invariant(k, customer, [a, b])).sum).toBe(400)
    })

    it("a one-off invoice applies credit a subscription holds; a debit held by the renewing subscription nets with credit held by another", async () => {
      const { k, a, b, customer } = await setup()
      await creditNote(k, b, "6.00")
      ok(
        await api.call("POST", "/api/v1/invoice_items", k, {
          customer_id: customer,
          currency: "USD",
          unit_amount: "2.50",
          description: "Setup"
        })
      )
      const inv = ok(await api.call("POST", "/api/v1/invoices", k, { customer_id: customer })).invoice
      expect([inv.credit_applied, inv.amount]).toEqual(["2.50", "0.00"])
      expect((await subOf(k, b)).credit_balance).toBe("3.50")
      expect((await invariant(k, customer, [a, b])).sum).toBe(350)
      // a 5.00 debit goes to A (it renews next); A's renewal nets it with B's 3.50: 30.00 + 1.50
      ok(
        await api.call("POST", `/api/v1/customers/${customer}/balance_transactions`, k, {
          amount: "-5.00",
          currency: "USD",
          reason: "late fee"
        })
      )
      expect((await subOf(k, a)).credit_balance).toBe("-5.00")
      expect((await upcoming(k, a)).amount).toBe("31.50")
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, a)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("31.50")
      expect((await subOf(k, b)).credit_balance).toBe("0.00")
      const end = await invariant(k, customer, [a, b])
      expect([end.sum, end.shares]).toEqual([0, 0])
    })

    it("a voided one-off invoice gives back the credit it applied: one ledger entry reversing it", async () => {
      const k = await fresh("credit_balance")
      const c = await api.call("POST", "/api/v1/front/customer/create", k, { payer_id: `p-${Math.random()}` })
      const customer = c.body.data.customer_id as string
      // no subscription, no card: the credit is held by none, the invoice stays open
      ok(
        await api.call("POST", `/api/v1/customers/${customer}/balance_transactions`, k, {
          amount: "3.00",
          currency: "USD",
          reason: "goodwill"
        })
      )
      ok(
        await api.call("POST", "/api/v1/invoice_items", k, {
          customer_id: customer,
          currency: "USD",
          unit_amount: "5.00"
        })
      )
      const inv = ok(await api.call("POST", "/api/v1/invoices", k, { customer_id: customer })).invoice
      expect([inv.credit_applied, inv.amount, inv.biz_status]).toEqual(["3.00", "2.00", "open"])
      ok(await api.call("POST", `/api/v1/invoices/${inv.invoice_id}/void`, k))
      const { entries, sum } = await invariant(k, customer, [])
      expect(sum).toBe(300)
      expect(entries.map((e) => [e.source_type, e.amount, e.source_id === inv.invoice_id])).toEqual([
        ["manual_adjustment", "3.00", false],
        ["applied_to_invoice", "-3.00", true],
        ["applied_to_invoice", "3.00", true]
      ])
      // and the customer's next one-off invoice applies it again
      ok(
        await api.call("POST", "/api/v1/invoice_items", k, {
          customer_id: customer,
          currency: "USD",
          unit_amount: "4.00"
        })
      )
      const next = ok(await api.call("POST", "/api/v1/invoices", k, { customer_id: customer })).invoice
      expect([next.credit_applied, next.amount]).toEqual(["3.00", "1.00"])
    })
  })
}
