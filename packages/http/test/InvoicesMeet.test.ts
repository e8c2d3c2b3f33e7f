/**
 * Where issue 34's invoice features meet, over REST and the hosted invoice page on the merchant's
 * sandbox clock (PGlite, and PostgreSQL with RECUR_TEST_DATABASE_URL): a draft renewal bills the
 * subscription's pending invoice items once (a voided draft gives them back to the next one); a
 * draft under `send_invoice` is sent when finalised, not charged; a sent invoice voided or written
 * off stops its dunning and returns its subscription to `active`; a one-off invoice follows the
 * customer's collection (or the request's) and is sent, past due, reminded; a written-off invoice
 * is paid on its page.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Ports } from "@recur/core"
import { backends, serve } from "./client.js"

const received: Array<Ports.OutgoingMessage> = []
const to = (address: string) => received.filter((m) => m.to === address)
const path = (url: string) => new URL(url).pathname
const card = { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`invoice features together (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage(), { notifications: { notifier: Ports.recording(received) } })
    beforeAll(async () => {
      received.length = 0
      await api.ready()
    }, 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      await api.call("POST", "/api/v1/notification_settings", k, { sender: "Acme <billing@acme.test>" })
      return k
    }
    const clock = (k: string, at: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: at })
    const subscribe = async (k: string, email: string) => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, { email, line_items: [{ price_id: priceId }] })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      const paid = await api.call("POST", `/checkout/${id}/pay`, null, card, { accept: "application/json" })
      expect(paid.status).toBe(200)
      const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
      return { sub: session.subscription_id as string, customer: session.customer_id as string }
    }
    const invoicesOf = async (k: string, sub: string) =>
      (
        ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data
          .list as Array<any>
      ).sort((a, b) => a.cycle_index - b.cycle_index)
    const invoice = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/invoice/${id}`, k)).body as any).data.invoice
    const statusOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status as string
    const tradeOf = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/trade/${id}`, k)).body as any).data.trade
    const itemOf = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/invoice_item/${id}`, k)).body as any).data.invoice_item
    const events = async (k: string, businessId: string) =>
      ((await api.call("GET", `/api/v2/webhook/events?business_ids=${businessId}&limit=100`, k)).body as any).data.list
        .map((e: any) => e.event_type)
        .sort() as Array<string>
    const grace = async (k: string, seconds: number) =>
      expect(
        (await api.call("POST", "/api/v1/billing_settings", k, { invoice_draft_grace_seconds: seconds })).status
      ).toBe(200)
    const sendInvoices = async (k: string, sub: string, days: number) =>
      expect(
        (
          await api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, {
            collection_method: "send_invoice",
            days_until_due: days
          })
        ).status
      ).toBe(200)
    const payOnPage = (url: string, number = card.card_number) =>
      api.handler(
        new Request(`http://localhost${path(url)}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ ...card, card_number: number }).toString()
        })
      )
    const pastDue = (email: string) => to(email).filter((m) => m.subject?.includes("is past due"))

    it("a draft renewal bills the pending items once; voided, they are pending again and the next renewal bills them", async () => {
      const k = await fresh()
      const { sub, customer } = await subscribe(k, "dora@example.com")
      const made = await api.call("POST", "/api/v1/invoice_items", k, {
        customer_id: customer,
        subscription_id: sub,
        unit_amount: "5.00",
        description: "Onboarding call"
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const itemId = (made.body as any).data.invoice_item.invoice_item_id as string
      await grace(k, 3600)
      await clock(k, "2026-02-01T00:00:00Z")
      const draft = (await invoicesOf(k, sub))[1]
      expect(draft).toMatchObject({ biz_status: "draft", number: null })
      expect(draft.lines.map((l: any) => [l.kind, l.amount])).toContainEqual(["invoice_item", "5.00"])
      // billed by the draft: not pending, so no other invoice takes it
      expect(await itemOf(k, itemId)).toMatchObject({ status: "invoiced", invoice_id: draft.invoice_id })
      const pending = await api.call("GET", `/api/v1/invoice_items?customer_id=${customer}&pending=true`, k)
      expect((pending.body as any).data.list).toEqual([])
      expect((await api.call("POST", `/api/v1/invoices/${draft.invoice_id}/void`, k)).status).toBe(200)
      expect(await itemOf(k, itemId)).toMatchObject({ status: "pending", invoice_id: null })
      await clock(k, "2026-03-01T00:00:00Z")
      const next = (await invoicesOf(k, sub))[2]
      expect(next.lines.map((l: any) => [l.kind, l.amount])).toContainEqual(["invoice_item", "5.00"])
      expect(await itemOf(k, itemId)).toMatchObject({ status: "invoiced", invoice_id: next.invoice_id })
      await clock(k, "2026-03-01T01:00:00Z")
      expect(await invoice(k, next.invoice_id)).toMatchObject({ status: "paid", number: "INV-000002" })
      // billed once: no later renewal carries it
      await clock(k, "2026-04-01T02:00:00Z")
      const withItem = (await invoicesOf(k, sub)).filter((i) => i.lines.some((l: any) => l.kind === "invoice_item"))
      expect(withItem.map((i) => i.invoice_id)).toEqual([draft.invoice_id, next.invoice_id])
    })

    it("a draft under send_invoice is sent when the worker finalises it: open, numbered, due, emailed, not charged; past due it duns", async () => {
      const k = await fresh()
      const { sub } = await subscribe(k, "sven@example.com")
      await sendInvoices(k, sub, 10)
      await grace(k, 3600)
      await clock(k, "2026-02-01T00:00:00Z")
      const draft = (await invoicesOf(k, sub))[1]
      expect(draft).toMatchObject({ biz_status: "draft", trade_id: null })
      await clock(k, "2026-02-01T01:00:00Z")
      const sent = await invoice(k, draft.invoice_id)
      expect(sent).toMatchObject({
        biz_status: "open",
        status: "open",
        number: "INV-000002",
        collection_method: "send_invoice",
        due_date: "2026-02-11T01:00:00Z"
      })
      expect((await tradeOf(k, sent.trade_id)).trade_status).toBe("requires_payment_method")
      expect(await events(k, draft.invoice_id)).toEqual(["v2.invoice.finalized", "v2.invoice.sent"])
      expect(to("sven@example.com").some((m) => m.subject === "Acme: invoice INV-000002 for 30.00 USD")).toBe(true)
      expect(await statusOf(k, sub)).toBe("active")
      // the invoice_due job was scheduled: past due at its due date
      await clock(k, "2026-02-11T01:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      expect(pastDue("sven@example.com")).toHaveLength(1)
    })

    it("a draft under send_invoice finalised on request is sent too", async () => {
      const k = await fresh()
      const { sub } = await subscribe(k, "rita@example.com")
      await sendInvoices(k, sub, 30)
      await grace(k, 3600)
      await clock(k, "2026-02-01T00:00:00Z")
      const draft = (await invoicesOf(k, sub))[1]
      const r = await api.call("POST", `/api/v1/invoices/${draft.invoice_id}/finalize`, k)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data.invoice).toMatchObject({
        biz_status: "open",
        collection_method: "send_invoice",
        due_date: "2026-03-03T00:00:00Z"
      })
      // the worker at grace end leaves it alone
      await clock(k, "2026-02-01T02:00:00Z")
      const after = await invoice(k, draft.invoice_id)
      expect(after.biz_status).toBe("open")
      expect((await tradeOf(k, after.trade_id)).trade_status).toBe("requires_payment_method")
    })

    it("a sent invoice voided past due: its dunning stops, the subscription is active again", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, { dunning_retry_days: [3, 7] })
      const { sub } = await subscribe(k, "vera@example.com")
      await sendInvoices(k, sub, 10)
      await clock(k, "2026-02-01T00:00:00Z")
      const sent = (await invoicesOf(k, sub))[1]
      expect(sent).toMatchObject({ biz_status: "open", due_date: "2026-02-11T00:00:00Z" })
      await clock(k, "2026-02-11T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      const voided = await api.call("POST", `/api/v1/invoices/${sent.invoice_id}/void`, k)
      expect(voided.status, JSON.stringify(voided.body)).toBe(200)
      expect(await statusOf(k, sub)).toBe("active")
      await clock(k, "2026-02-20T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("active")
      expect(pastDue("vera@example.com")).toHaveLength(1)
      expect(await events(k, sent.invoice_id)).toEqual(["v2.invoice.overdue", "v2.invoice.sent", "v2.invoice.voided"])
    })

    it("a sent invoice written off past due stops dunning; paid later on its page it is paid (v2.invoice.paid)", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, { dunning_retry_days: [3, 7] })
      const { sub } = await subscribe(k, "ugo@example.com")
      await sendInvoices(k, sub, 10)
      await clock(k, "2026-02-01T00:00:00Z")
      const sent = (await invoicesOf(k, sub))[1]
      await clock(k, "2026-02-11T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      const off = await api.call("POST", `/api/v1/invoices/${sent.invoice_id}/mark_uncollectible`, k)
      expect(off.status, JSON.stringify(off.body)).toBe(200)
      expect((off.body as any).data.invoice).toMatchObject({ biz_status: "uncollectible", status: "uncollectible" })
      expect(await statusOf(k, sub)).toBe("active")
      await clock(k, "2026-02-20T00:00:00Z")
      expect(pastDue("ugo@example.com")).toHaveLength(1)
      expect(await statusOf(k, sub)).toBe("active")
      // the page offers Pay; the payment takes a new trade (the written-off one was closed)
      const page = await (await api.handler(new Request(`http://localhost${path(sent.hosted_invoice_url)}`))).text()
      expect(page).toContain('id="pay-form"')
      const paid = await payOnPage(sent.hosted_invoice_url)
      expect(paid.status).toBe(303)
      const after = await invoice(k, sent.invoice_id)
      expect(after).toMatchObject({ biz_status: "success", status: "paid", number: sent.number })
      expect(after.trade_id).not.toBe(sent.trade_id)
      expect((await tradeOf(k, after.trade_id)).trade_status).toBe("succeeded")
      expect((await tradeOf(k, sent.trade_id)).trade_status).toBe("closed")
      expect(await events(k, sent.invoice_id)).toContain("v2.invoice.paid")
      // paid once: a second payment is refused
      expect((await payOnPage(sent.hosted_invoice_url)).status).toBe(409)
    })

    it("a card renewal written off after its decline: a declined payment on its page leaves it written off, no dunning; a good card pays it", async () => {
      const k = await fresh()
      // pays the checkout, declines every renewal (soft: retried on the schedule)
      const { sub } = await api.priceOf(k).then(async ({ priceId }) => {
        const s = await api.call("POST", "/api/v1/session", k, {
          email: "wes@example.com",
          line_items: [{ price_id: priceId }]
        })
        const id = (s.body as any).data.session_id as string
        await api.call(
          "POST",
          `/checkout/${id}/pay`,
          null,
          { ...card, card_number: "4000000000000341" },
          { accept: "application/json" }
        )
        return { sub: ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id }
      })
      await clock(k, "2026-02-01T12:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      const retrying = (await invoicesOf(k, sub))[1]
      expect(retrying.biz_status).toBe("retrying")
      expect((await api.call("POST", `/api/v1/invoices/${retrying.invoice_id}/mark_uncollectible`, k)).status).toBe(200)
      expect(await statusOf(k, sub)).toBe("active")
      const declined = await payOnPage(retrying.hosted_invoice_url, "4000000000000002")
      expect(declined.status).not.toBe(500)
      expect(await invoice(k, retrying.invoice_id)).toMatchObject({ biz_status: "uncollectible" })
      expect(await statusOf(k, sub)).toBe("active")
      expect((await payOnPage(retrying.hosted_invoice_url)).status).toBe(303)
      expect(await invoice(k, retrying.invoice_id)).toMatchObject({ biz_status: "success", status: "paid" })
      expect(await events(k, retrying.invoice_id)).toContain("v2.invoice.paid")
    })

    it("a one-off invoice follows the customer's send_invoice setting, or the request's: open, numbered, due, emailed; past due reminded", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, { dunning_retry_days: [3, 7] })
      const c = await api.call("POST", "/api/v1/front/customer/create", k, {
        email: "olga@example.com",
        collection_method: "send_invoice",
        days_until_due: 15
      })
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      const customer = (c.body as any).data.customer_id as string
      const item = async (who: string) =>
        expect(
          (
            await api.call("POST", "/api/v1/invoice_items", k, {
              customer_id: who,
              currency: "USD",
              unit_amount: "80.00"
            })
          ).status
        ).toBe(200)
      await item(customer)
      // bad terms on the request: refused, nothing billed
      const bad = await api.call("POST", "/api/v1/invoices", k, {
        customer_id: customer,
        collection_method: "send_invoice",
        days_until_due: 0
      })
      expect([bad.status, (bad.body as any).data?.param]).toEqual([400, "days_until_due"])
      const stillPending = await api.call("GET", `/api/v1/invoice_items?customer_id=${customer}&pending=true`, k)
      expect((stillPending.body as any).data.list).toHaveLength(1)
      const r = await api.call("POST", "/api/v1/invoices", k, { customer_id: customer })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const inv = (r.body as any).data.invoice
      expect(inv).toMatchObject({
        invoice_type: "one_off",
        biz_status: "open",
        collection_method: "send_invoice",
        due_date: "2026-01-16T00:00:00Z",
        amount: "80.00"
      })
      expect(inv.number).toMatch(/^INV-\d{6}$/)
      expect(await events(k, inv.invoice_id)).toEqual(["v2.invoice.sent"])
      // the outbox is delivered by the worker (here: at the next clock advance)
      await clock(k, "2026-01-16T00:00:00Z")
      expect(to("olga@example.com").some((m) => m.subject === `Acme: invoice ${inv.number} for 80.00 USD`)).toBe(true)
      expect(await events(k, inv.invoice_id)).toEqual(["v2.invoice.overdue", "v2.invoice.sent"])
      await clock(k, "2026-01-19T00:00:00Z")
      await clock(k, "2026-01-23T00:00:00Z")
      await clock(k, "2026-02-10T00:00:00Z")
      // the due date and a reminder on each dunning day (3 and 7 days after it)
      expect(pastDue("olga@example.com")).toHaveLength(3)

      // a customer charged automatically, with a card on file: the request sends this one instead
      const { customer: carded } = await subscribe(k, "cara@example.com")
      await item(carded)
      const o = await api.call("POST", "/api/v1/invoices", k, {
        customer_id: carded,
        collection_method: "send_invoice",
        days_until_due: 5
      })
      expect(o.status, JSON.stringify(o.body)).toBe(200)
      const overridden = (o.body as any).data.invoice
      expect(overridden).toMatchObject({
        biz_status: "open",
        collection_method: "send_invoice",
        due_date: "2026-02-15T00:00:00Z"
      })
      expect((await tradeOf(k, overridden.trade_id)).trade_status).toBe("requires_payment_method")
      expect((await payOnPage(overridden.hosted_invoice_url)).status).toBe(303)
      expect(await invoice(k, overridden.invoice_id)).toMatchObject({ biz_status: "success" })
    })
  })
}
