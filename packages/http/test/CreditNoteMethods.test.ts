/**
 * Credit notes by method over REST (issue 34, item 4): `reduce_invoice` lowers what an issued,
 * unpaid invoice still owes (its amount as issued kept, `amount_remaining` and its trade's amount
 * to collect lowered; to zero it is settled); `credit_balance` of a one-off invoice credits the
 * customer's ledger; `refund` is the refund path behind the same endpoint — on PGlite, and on
 * PostgreSQL when RECUR_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

const card = { exp_month: "12", exp_year: "2099", cvc: "123" }
const path = (url: string) => new URL(url).pathname

for (const [name, storage] of backends()) {
  describe(`credit notes: reduce_invoice, one-off credit_balance, refund (${name})`, { timeout: 240_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const clock = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })
    const subscribe = async (k: string, number = "4242424242424242") => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: number, ...card },
        { accept: "application/json" }
      )
      expect(paid.status).toBe(200)
      const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
      return { sub: session.subscription_id as string, customer: session.customer_id as string }
    }
    const sentRenewal = async (k: string) => {
      const { sub, customer } = await subscribe(k)
      const set = await api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, {
        collection_method: "send_invoice",
        days_until_due: 30
      })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      await clock(k, "2026-02-01T00:00:10Z")
      const list = ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data
        .list as Array<any>
      const renewal = list.find((i) => i.invoice_type === "renewal")
      expect(renewal).toMatchObject({ biz_status: "open", amount: "30.00", amount_remaining: "30.00" })
      return { sub, customer, renewal }
    }
    const invoice = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/invoice/${id}`, k)).body as any).data.invoice
    const trade = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/trade/${id}`, k)).body as any).data.trade
    const note = (k: string, id: string, body: Record<string, unknown>) =>
      api.call("POST", `/api/v1/invoices/${id}/credit_notes`, k, body)
    const events = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v2/webhook/events?business_ids=${id}&limit=100`, k)).body as any).data.list.map(
        (e: any) => e.event_type
      ) as Array<string>
    const payOnPage = (url: string) =>
      api.handler(
        new Request(`http://localhost${path(url)}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ card_number: "4242424242424242", ...card }).toString()
        })
      )

    it("reduce_invoice on a sent invoice: a numbered credit note, the invoice as issued with less remaining, its page charges what remains", async () => {
      const k = await fresh()
      const { sub, renewal } = await sentRenewal(k)
      // more than remains, a draft-only edit, a bad method: refused, nothing changed
      const tooMuch = await note(k, renewal.invoice_id, { amount: "30.01", method: "reduce_invoice", reason: "x" })
      expect([tooMuch.status, (tooMuch.body as any).code]).toEqual([400, "InvalidParameter"])
      const bad = await note(k, renewal.invoice_id, { amount: "1.00", method: "coupon" })
      expect(bad.status).toBe(400)
      expect((await invoice(k, renewal.invoice_id)).amount_remaining).toBe("30.00")
      const r = await note(k, renewal.invoice_id, {
        amount: "10.00",
        method: "reduce_invoice",
        reason: "late delivery"
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const cn = (r.body as any).data.credit_note
      expect(cn).toMatchObject({
        invoice_type: "refund",
        original_invoice_id: renewal.invoice_id,
        amount: "10.00",
        number: "INV-CN-000001",
        subscription_id: sub
      })
      expect(cn.lines.map((l: any) => [l.kind, l.description])).toEqual([["refund", "late delivery"]])
      expect(await events(k, cn.invoice_id)).toContain("v2.credit_note.created")
      const after = await invoice(k, renewal.invoice_id)
      // what it stated at issue stays; what it still owes is less
      expect(after).toMatchObject({
        biz_status: "open",
        amount: "30.00",
        lines: renewal.lines,
        number: renewal.number,
        pre_payment_credit_notes_amount: "10.00",
        amount_remaining: "20.00"
      })
      expect((await trade(k, renewal.trade_id)).amount).toBe("20.00")
      // its page states the total as issued, the credit notes, and asks for what remains
      const page = await (await api.handler(new Request(`http://localhost${path(renewal.hosted_invoice_url)}`))).text()
      expect(page).toContain('<span id="due">$20.00</span>')
      expect(page).toContain("Credit notes")
      expect(page).toContain("$30.00")
      // a second note: never more than remains
      const over = await note(k, renewal.invoice_id, { amount: "20.01", method: "reduce_invoice", reason: "x" })
      expect(over.status).toBe(400)
      // the page charges what remains
      expect((await payOnPage(renewal.hosted_invoice_url)).status).toBe(303)
      const paid = await invoice(k, renewal.invoice_id)
      expect([paid.biz_status, paid.amount_remaining]).toEqual(["success", "0.00"])
      const t = await trade(k, renewal.trade_id)
      expect([t.trade_status, t.amount]).toEqual(["succeeded", "20.00"])
      // it collected 20.00: no more comes back, by refund or credit note
      const credit = await note(k, renewal.invoice_id, { amount: "20.01", reason: "goodwill" })
      expect(credit.status).toBe(400)
      const refund = await note(k, renewal.invoice_id, { amount: "20.01", method: "refund", reason: "goodwill" })
      expect(refund.status).toBe(400)
      // a paid invoice is not reduced
      const reducePaid = await note(k, renewal.invoice_id, { amount: "1.00", method: "reduce_invoice" })
      expect([reducePaid.status, (reducePaid.body as any).code]).toEqual([409, "state_conflict"])
    })

    it("two reductions at once, and a reduction racing the page's payment: never more than remains, one number per note, no 500", async () => {
      const k = await fresh()
      const { renewal } = await sentRenewal(k)
      const [a, b] = await Promise.all([
        note(k, renewal.invoice_id, { amount: "20.00", method: "reduce_invoice", reason: "a" }),
        note(k, renewal.invoice_id, { amount: "20.00", method: "reduce_invoice", reason: "b" })
      ])
      const statuses = [a.status, b.status].sort()
      expect(statuses[0]).toBe(200)
      expect([400, 409]).toContain(statuses[1])
      const after = await invoice(k, renewal.invoice_id)
      expect([after.amount_remaining, after.pre_payment_credit_notes_amount]).toEqual(["10.00", "20.00"])
      expect((await trade(k, renewal.trade_id)).amount).toBe("10.00")
      // the credit-note series has no hole: the next note takes the next number
      const next = await note(k, renewal.invoice_id, { amount: "1.00", method: "reduce_invoice", reason: "c" })
      expect((next.body as any).data.credit_note.number).toBe("INV-CN-000002")
      // the page's payment and a reduction at once: whichever wins, what is charged is what remains
      const [paid, reduced] = await Promise.all([
        payOnPage(renewal.hosted_invoice_url),
        note(k, renewal.invoice_id, { amount: "2.00", method: "reduce_invoice", reason: "d" })
      ])
      expect(paid.status).not.toBe(500)
      expect(reduced.status).not.toBe(500)
      const final = await invoice(k, renewal.invoice_id)
      const t = await trade(k, renewal.trade_id)
      expect(final.biz_status).toBe("success")
      expect(t.amount).toBe(reduced.status === 200 ? "7.00" : "9.00")
    })

    it("reduce_invoice to zero on a past-due sent invoice: settled without a charge, the subscription active again", async () => {
      const k = await fresh()
      const { sub, renewal } = await sentRenewal(k)
      await clock(k, "2026-03-03T00:00:00Z")
      expect(((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status).toBe(
        "past_due"
      )
      const r = await note(k, renewal.invoice_id, { amount: "30.00", method: "reduce_invoice", reason: "waived" })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const after = await invoice(k, renewal.invoice_id)
      expect(after).toMatchObject({ biz_status: "success", status: "paid", amount: "30.00", amount_remaining: "0.00" })
      expect(await events(k, renewal.invoice_id)).toContain("v2.invoice.paid")
      const t = await trade(k, renewal.trade_id)
      expect([t.trade_status, t.closed_reason]).toEqual(["closed", "invoice_credited"])
      expect(((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status).toBe(
        "active"
      )
      // nothing was collected from it: nothing comes back
      const refund = await note(k, renewal.invoice_id, { amount: "1.00", method: "refund", reason: "x" })
      expect(refund.status).toBe(409)
    })

    it("one-off invoices: reduced while open; credited to the customer's ledger once paid, bounded by what it collected", async () => {
      const k = await fresh()
      const c = await api.call("POST", "/api/v1/front/customer/create", k, { payer_id: `p-${Math.random()}` })
      const customer = (c.body as any).data.customer_id as string
      await api.call("POST", "/api/v1/invoice_items", k, {
        customer_id: customer,
        currency: "USD",
        unit_amount: "50.00"
      })
      const inv = (await api.call("POST", "/api/v1/invoices", k, { customer_id: customer })).body as any
      const open = inv.data.invoice
      expect(open.biz_status).toBe("open")
      const r = await note(k, open.invoice_id, { amount: "15.00", method: "reduce_invoice", reason: "discount agreed" })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data.credit_note.subscription_id).toBeNull()
      expect((await invoice(k, open.invoice_id)).amount_remaining).toBe("35.00")
      expect((await payOnPage(open.hosted_invoice_url)).status).toBe(303)
      const paid = await invoice(k, open.invoice_id)
      expect(paid.biz_status).toBe("success")
      expect((await trade(k, paid.trade_id)).amount).toBe("35.00")
      // credit to the balance: more than it collected is refused, nothing written
      const over = await note(k, open.invoice_id, { amount: "35.01", reason: "x" })
      expect(over.status).toBe(400)
      const credited = await note(k, open.invoice_id, { amount: "5.00", reason: "sorry" })
      expect(credited.status, JSON.stringify(credited.body)).toBe(200)
      const cn = (credited.body as any).data.credit_note
      const balance = (await api.call("GET", `/api/v1/customers/${customer}/balance`, k)).body as any
      expect(balance.data.balance).toEqual([{ currency: "USD", amount: "5.00" }])
      const ledger = (await api.call("GET", `/api/v1/customers/${customer}/balance_transactions`, k)).body as any
      expect(ledger.data.list.map((e: any) => [e.source_type, e.source_id, e.amount, e.ending_balance])).toEqual([
        ["credit_note", cn.invoice_id, "5.00", "5.00"]
      ])
      expect(await events(k, customer)).toContain("v2.customer.balance_updated")
      expect((await invoice(k, open.invoice_id)).post_payment_credit_notes_amount).toBe("5.00")
      // a refund is bounded by what is left: 35.00 − 5.00
      const refund = await note(k, open.invoice_id, { amount: "30.01", method: "refund", reason: "x" })
      expect(refund.status).toBe(400)
      const ok = await note(k, open.invoice_id, { amount: "30.00", method: "refund", reason: "returned" })
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect((ok.body as any).data.credit_note).toMatchObject({ invoice_type: "refund", amount: "30.00" })
      expect((await trade(k, paid.trade_id)).total_refunded_amount).toBe("30.00")
      // the customer's next one-off invoice applies the credit no subscription holds, before charging
      await api.call("POST", "/api/v1/invoice_items", k, {
        customer_id: customer,
        currency: "USD",
        unit_amount: "20.00"
      })
      const next = ((await api.call("POST", "/api/v1/invoices", k, { customer_id: customer })).body as any).data.invoice
      expect([next.subtotal, next.credit_applied, next.amount, next.amount_remaining]).toEqual([
        "20.00",
        "5.00",
        "15.00",
        "15.00"
      ])
      const used = (await api.call("GET", `/api/v1/customers/${customer}/balance_transactions`, k)).body as any
      expect(used.data.list[0]).toMatchObject({
        source_type: "applied_to_invoice",
        source_id: next.invoice_id,
        amount: "-5.00",
        ending_balance: "0.00"
      })
      const after = (await api.call("GET", `/api/v1/customers/${customer}/balance`, k)).body as any
      expect(after.data.balance).toEqual([{ currency: "USD", amount: "0.00" }])
    })

    it("reduce_invoice on a retrying renewal (its retry, its page charge what remains), a failed one (its recovery charges what remains), an uncollectible one (settled)", async () => {
      const k = await fresh()
      const ada = await subscribe(k, "4000000000000341")
      const eve = await subscribe(k, "4000000000000358")
      const gus = await subscribe(k, "4000000000000341")
      await clock(k, "2026-02-01T00:00:10Z")
      const renewalOf = async (sub: string) =>
        (
          ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data
            .list as Array<any>
        ).find((i) => i.invoice_type === "renewal")
      const retrying = await renewalOf(ada.sub)
      expect(retrying.biz_status).toBe("retrying")
      expect(
        (await note(k, retrying.invoice_id, { amount: "12.00", method: "reduce_invoice", reason: "x" })).status
      ).toBe(200)
      expect((await trade(k, retrying.trade_id)).amount).toBe("18.00")
      expect((await invoice(k, retrying.invoice_id)).biz_status).toBe("retrying")
      expect((await payOnPage(retrying.hosted_invoice_url)).status).toBe(303)
      const t = await trade(k, retrying.trade_id)
      expect([t.trade_status, t.amount]).toEqual(["succeeded", "18.00"])
      expect(((await api.call("GET", `/api/v1/subscription/${ada.sub}`, k)).body as any).data.subscription.status).toBe(
        "active"
      )
      // a failed invoice of an unpaid subscription: its recovery opens a trade for what remains
      const failed = await renewalOf(eve.sub)
      expect(failed.biz_status).toBe("failed")
      expect((await note(k, failed.invoice_id, { amount: "5.00", method: "reduce_invoice", reason: "x" })).status).toBe(
        200
      )
      expect((await payOnPage(failed.hosted_invoice_url)).status).toBe(303)
      const recovered = await invoice(k, failed.invoice_id)
      expect(recovered.biz_status).toBe("success")
      expect((await trade(k, recovered.trade_id)).amount).toBe("25.00")
      // written off, then credited in full: settled
      const written = await renewalOf(gus.sub)
      expect((await api.call("POST", `/api/v1/invoices/${written.invoice_id}/mark_uncollectible`, k)).status).toBe(200)
      const r = await note(k, written.invoice_id, { amount: "30.00", method: "reduce_invoice", reason: "x" })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(await invoice(k, written.invoice_id)).toMatchObject({ biz_status: "success", amount_remaining: "0.00" })
    })

    it("the portal: the balance from the ledger (credit or owed) in en/de/fr, a sent invoice's due date and what remains to pay", async () => {
      const k = await fresh()
      const { customer, renewal } = await sentRenewal(k)
      const portal = async (locale: string) => {
        const r = await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: customer, locale })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        const url = new URL((r.body as any).data.portal_session.url as string)
        return (await api.handler(new Request(`http://localhost${url.pathname}`))).text()
      }
      // zero balance: no section
      expect(await portal("en-US")).not.toContain('id="balance"')
      expect(
        (await note(k, renewal.invoice_id, { amount: "10.00", method: "reduce_invoice", reason: "x" })).status
      ).toBe(200)
      const adjust = (amount: string) =>
        api.call("POST", `/api/v1/customers/${customer}/balance_transactions`, k, {
          amount,
          currency: "USD",
          reason: "goodwill"
        })
      expect((await adjust("7.50")).status).toBe(200)
      const en = await portal("en-US")
      const row = en.match(new RegExp(`<tr id="to-pay-${renewal.invoice_id}">.*?</tr>`))?.[0] ?? ""
      expect(row).toContain('<span class="due-date">Due on Mar 3, 2026</span>')
      expect(row).toContain("$20.00")
      const section = en.match(/<section class="balance" id="balance">.*?<\/section>/)?.[0] ?? ""
      expect(section).toContain("$7.50")
      expect(section).toContain("Credit on your account")
      const de = await portal("de-DE")
      expect(de).toContain("Fällig am ")
      expect(de).toContain("Guthaben auf Ihrem Konto")
      const fr = await portal("fr-FR")
      expect(fr).toContain("Échéance le ")
      expect(fr).toContain("Crédit sur votre compte")
      expect((await adjust("-10.00")).status).toBe(200)
      const owed = await portal("en-US")
      expect(owed).toContain("Owed: it is added to your next invoice.")
      expect(owed.match(/<section class="balance" id="balance">.*?<\/section>/)?.[0]).toMatch(
        /-\$2\.50|−\$2\.50|\(\$2\.50\)/
      )
    })

    it("method refund: the invoice's payment refunded through the refund path, its credit note answered", async () => {
      const k = await fresh()
      const { sub } = await subscribe(k)
      const list = ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}`, k)).body as any).data.list
      const first = list.find((i: any) => i.invoice_type === "initial")
      const r = await note(k, first.invoice_id, { amount: "5.00", method: "refund", reason: "goodwill" })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data.refund_status).toBe("succeeded")
      const cn = (r.body as any).data.credit_note
      expect(cn).toMatchObject({ invoice_type: "refund", amount: "5.00", original_invoice_id: first.invoice_id })
      expect(await events(k, cn.invoice_id)).toContain("v2.credit_note.created")
      expect(cn.number).toMatch(/^INV-CN-\d{6}$/)
      expect((await trade(k, first.trade_id)).total_refunded_amount).toBe("5.00")
      expect((await invoice(k, first.invoice_id)).biz_status).toBe("partially_refunded")
      const missing = await note(k, "inv_missing", { amount: "1.00", method: "refund" })
      expect(missing.status).toBe(404)
    })
  })
}
