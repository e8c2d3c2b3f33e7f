/**
 * Sending an invoice instead of charging (issue 34, item 5) over REST and the hosted invoice page,
 * on the merchant's sandbox clock: collection method `send_invoice` with 30-day terms, the
 * invoice emailed (read back from an SMTP server started by the test) with its page and PDF,
 * paid by card on the page before its due date (no dunning); unpaid past due → `past_due` →
 * reminders on the dunning days → the merchant's final state; paid late → `active`; switching
 * from charging to sending mid-cycle; refusals that change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Ports } from "@recur/core"
import { backends, serve } from "./client.js"

// the messages as the notifier is given them (the SMTP path is in the embedded package's SendInvoice test)
const received: Array<Ports.OutgoingMessage> = []
const to = (address: string) => received.filter((m) => m.to === address)
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const path = (url: string) => new URL(url).pathname

for (const [name, storage] of backends()) {
  describe(`send_invoice: net terms, the hosted page, dunning past due (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage(), { notifications: { notifier: Ports.recording(received) } })
    beforeAll(async () => {
      // each storage's run reads only its own messages (the same addresses run on each)
      received.length = 0
      await api.ready()
    }, 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      await api.call("POST", "/api/v1/notification_settings", k, { sender: "Acme <billing@acme.test>" })
      return k
    }
    const clock = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })
    const subscribe = async (k: string, email: string, body: Record<string, unknown> = {}) => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, { email, line_items: [{ price_id: priceId }], ...body })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const sendInvoices = (k: string, sub: string, body: unknown) =>
      api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, body)
    const invoicesOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data
        .list as Array<any>
    const statusOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status as string
    const events = async (k: string, businessId: string) =>
      ((await api.call("GET", `/api/v2/webhook/events?business_ids=${businessId}&limit=100`, k)).body as any).data.list
        .map((e: any) => e.event_type)
        .sort() as Array<string>
    const payOnPage = (url: string, card = "4242424242424242") =>
      api.handler(
        new Request(`http://localhost${path(url)}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form({ card_number: card, exp_month: "12", exp_year: "2030", cvc: "123" })
        })
      )

    it("30-day terms: the renewal is issued open and emailed with its page and PDF, paid by card on the page before its due date, no dunning", async () => {
      const k = await fresh()
      const sub = await subscribe(k, "ines@example.com")
      const set = await sendInvoices(k, sub, { collection_method: "send_invoice", days_until_due: 30 })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      expect((set.body as any).data).toEqual({
        subscription_id: sub,
        collection_method: "send_invoice",
        days_until_due: 30,
        effective_collection_method: "send_invoice",
        effective_days_until_due: 30
      })
      await clock(k, "2026-02-01T00:00:10Z")
      const [renewal] = (await invoicesOf(k, sub)).filter((i) => i.invoice_type === "renewal")
      expect(renewal).toMatchObject({
        biz_status: "open",
        collection_method: "send_invoice",
        // issued at the renewal's instant on the merchant's clock
        due_date: "2026-03-03T00:00:00Z",
        amount: "30.00",
        number: "INV-000002"
      })
      expect(await statusOf(k, sub)).toBe("active")
      // nothing was charged: the renewal's trade waits for the customer
      const trade = ((await api.call("GET", `/api/v1/trade/${renewal.trade_id}`, k)).body as any).data.trade
      expect(trade.trade_status).toBe("requires_payment_method")
      const mails = to("ines@example.com")
      const sent = mails.find((m) => m.subject === "Acme: invoice INV-000002 for 30.00 USD")
      expect(sent, JSON.stringify(mails.map((m) => m.subject))).toBeDefined()
      expect(sent!.text).toContain("It is due on 2026-03-03.")
      expect(sent!.text).toContain(`View the invoice: ${renewal.hosted_invoice_url}`)
      expect(sent!.text).toContain(`Download the PDF: ${renewal.invoice_pdf}`)
      // the page offers to pay it
      const page = await (await api.handler(new Request(`http://localhost${path(renewal.hosted_invoice_url)}`))).text()
      expect(page).toContain('id="pay-form"')
      expect(page).toContain("<dt>Due</dt><dd>Mar 3, 2026</dd>")
      // a declined card on the page changes nothing but the trade: still open, still active
      const declined = await payOnPage(renewal.hosted_invoice_url, "4000000000000002")
      expect(declined.status).not.toBe(500)
      expect((await invoicesOf(k, sub)).find((i) => i.invoice_id === renewal.invoice_id).biz_status).toBe("open")
      expect(await statusOf(k, sub)).toBe("active")
      await clock(k, "2026-02-10T00:00:00Z")
      const paid = await payOnPage(renewal.hosted_invoice_url)
      expect(paid.status).toBe(303)
      const after = (await invoicesOf(k, sub)).find((i) => i.invoice_id === renewal.invoice_id)
      expect(after).toMatchObject({ biz_status: "success", paid_at: "2026-02-10T00:00:00Z" })
      expect(await events(k, renewal.invoice_id)).toEqual(["v2.invoice.paid", "v2.invoice.sent"])
      // past the due date nothing happens: it was paid
      await clock(k, "2026-03-04T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("active")
      expect(to("ines@example.com").filter((m) => m.subject?.includes("past due"))).toEqual([])
    })

    it("unpaid past due: past_due, a reminder on each dunning day, then the merchant's final state; paid late it is active again", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, { dunning_retry_days: [3, 7] })
      const sub = await subscribe(k, "otto@example.com")
      expect((await sendInvoices(k, sub, { collection_method: "send_invoice", days_until_due: 30 })).status).toBe(200)
      await clock(k, "2026-02-01T00:00:00Z")
      const [renewal] = (await invoicesOf(k, sub)).filter((i) => i.invoice_type === "renewal")
      expect(renewal.due_date).toBe("2026-03-03T00:00:00Z")
      await clock(k, "2026-03-02T23:59:59Z")
      expect(await statusOf(k, sub)).toBe("active")
      await clock(k, "2026-03-03T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      const pastDue = () => to("otto@example.com").filter((m) => m.subject?.includes("is past due"))
      expect(pastDue()).toHaveLength(1)
      expect(await events(k, renewal.invoice_id)).toEqual(["v2.invoice.overdue", "v2.invoice.sent"])
      expect(await events(k, sub)).toContain("v2.subscription.past_due")
      expect(pastDue()[0]!.text).toContain("was due on 2026-03-03")
      expect(pastDue()[0]!.text).toContain(`View the invoice: ${renewal.hosted_invoice_url}`)
      await clock(k, "2026-03-06T00:00:00Z")
      expect(pastDue()).toHaveLength(2)
      expect(await statusOf(k, sub)).toBe("past_due")
      await clock(k, "2026-03-10T00:00:00Z")
      // the last day of the schedule: unpaid (the default final state), reminded once more
      expect(await statusOf(k, sub)).toBe("unpaid")
      expect(pastDue()).toHaveLength(3)
      expect(await events(k, sub)).toContain("v2.subscription.unpaid")
      // no card was charged meanwhile: the trade was never tried
      expect(
        ((await api.call("GET", `/api/v1/trade/${renewal.trade_id}`, k)).body as any).data.trade.trade_status
      ).toBe("requires_payment_method")
      expect((await invoicesOf(k, sub)).find((i) => i.invoice_id === renewal.invoice_id).biz_status).toBe("open")
      // paid late on the page: the subscription is active again
      const paid = await payOnPage(renewal.hosted_invoice_url)
      expect(paid.status).toBe(303)
      expect(await statusOf(k, sub)).toBe("active")
      expect((await invoicesOf(k, sub)).find((i) => i.invoice_id === renewal.invoice_id).biz_status).toBe("success")
    })

    it("a canceled final state, and a late payment while past due brings it back", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, {
        dunning_retry_days: [2],
        dunning_final_state: "canceled"
      })
      const a = await subscribe(k, "ada@example.com")
      const b = await subscribe(k, "bob@example.com")
      for (const sub of [a, b])
        expect((await sendInvoices(k, sub, { collection_method: "send_invoice", days_until_due: 10 })).status).toBe(200)
      await clock(k, "2026-02-01T00:00:00Z")
      await clock(k, "2026-02-11T00:00:00Z")
      expect([await statusOf(k, a), await statusOf(k, b)]).toEqual(["past_due", "past_due"])
      const [invB] = (await invoicesOf(k, b)).filter((i) => i.invoice_type === "renewal")
      expect((await payOnPage(invB.hosted_invoice_url)).status).toBe(303)
      expect(await statusOf(k, b)).toBe("active")
      await clock(k, "2026-02-13T00:00:00Z")
      expect([await statusOf(k, a), await statusOf(k, b)]).toEqual(["canceled", "active"])
      expect(to("ada@example.com").map((m) => m.subject)).toContain("Acme: your subscription is canceled")
    })

    it("two sent invoices past due: the first drives dunning, the second's starts once the first is paid", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/billing_settings", k, { dunning_retry_days: [3, 40] })
      const sub = await subscribe(k, "two@example.com")
      expect((await sendInvoices(k, sub, { collection_method: "send_invoice", days_until_due: 45 })).status).toBe(200)
      await clock(k, "2026-03-01T00:00:00Z")
      const [a, b] = (await invoicesOf(k, sub))
        .filter((i) => i.invoice_type === "renewal")
        .sort((x, y) => x.cycle_index - y.cycle_index)
      expect([a.due_date, b.due_date]).toEqual(["2026-03-18T00:00:00Z", "2026-04-15T00:00:00Z"])
      await clock(k, "2026-03-18T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      // the second is past due too, while the first drives: no step is taken twice
      await clock(k, "2026-04-20T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      expect(await events(k, b.invoice_id)).toEqual(["v2.invoice.sent"])
      expect((await payOnPage(a.hosted_invoice_url)).status).toBe(303)
      expect(await statusOf(k, sub)).toBe("active")
      // the second's dunning starts at its next look, from then on
      await clock(k, "2026-04-21T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      expect(await events(k, b.invoice_id)).toEqual(["v2.invoice.overdue", "v2.invoice.sent"])
      await clock(k, "2026-04-23T23:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      await clock(k, "2026-05-31T00:00:00Z")
      expect(await statusOf(k, sub)).toBe("unpaid")
    })

    it("the customer's setting applies to its subscriptions, the subscription's wins; back to charging automatically", async () => {
      const k = await fresh()
      const c = await api.call("POST", "/api/v1/front/customer/create", k, { payer_id: "member-1" })
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      const u = await api.call("POST", "/api/v1/front/customer/update", k, {
        payer_id: "member-1",
        email: "member@example.com",
        collection_method: "send_invoice",
        days_until_due: 14
      })
      expect(u.status, JSON.stringify(u.body)).toBe(200)
      const customerId = (c.body as any).data.customer_id as string
      expect(
        ((await api.call("GET", `/api/v1/front/customer/${customerId}`, k)).body as any).data.customer
      ).toMatchObject({ collection_method: "send_invoice", days_until_due: 14 })
      const sub = await subscribe(k, "member@example.com", { payer_id: "member-1", email: undefined })
      const read = await api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, {
        collection_method: null
      })
      expect((read.body as any).data).toMatchObject({
        collection_method: null,
        effective_collection_method: "send_invoice",
        effective_days_until_due: 14
      })
      await clock(k, "2026-02-01T00:00:00Z")
      const [first] = (await invoicesOf(k, sub)).filter((i) => i.invoice_type === "renewal")
      expect(first).toMatchObject({ biz_status: "open", due_date: "2026-02-15T00:00:00Z" })
      // the subscription's own setting wins: charged from the next renewal on
      await payOnPage(first.hosted_invoice_url)
      expect((await sendInvoices(k, sub, { collection_method: "charge_automatically" })).status).toBe(200)
      await clock(k, "2026-03-01T00:00:10Z")
      const march = (await invoicesOf(k, sub)).filter((i) => i.invoice_type === "renewal" && i.cycle_index === 2)
      expect(march.map((i) => [i.biz_status, i.collection_method, i.due_date])).toEqual([
        ["success", "charge_automatically", null]
      ])
    })

    it("switching from charging to sending mid-cycle: the cycle paid by card stays, the next one is sent", async () => {
      const k = await fresh()
      const sub = await subscribe(k, "mid@example.com")
      await clock(k, "2026-01-15T00:00:00Z")
      expect((await sendInvoices(k, sub, { collection_method: "send_invoice", days_until_due: 7 })).status).toBe(200)
      const before = await invoicesOf(k, sub)
      expect(before.map((i) => [i.biz_status, i.collection_method])).toEqual([["success", "charge_automatically"]])
      await clock(k, "2026-02-01T00:00:00Z")
      const renewal = (await invoicesOf(k, sub)).find((i) => i.invoice_type === "renewal")
      expect(renewal).toMatchObject({
        biz_status: "open",
        collection_method: "send_invoice",
        due_date: "2026-02-08T00:00:00Z"
      })
    })

    it("refusals change nothing: days out of range, send_invoice without days, days with charging, an unknown method", async () => {
      const k = await fresh()
      const sub = await subscribe(k, "no@example.com")
      for (const [body, param] of [
        [{ collection_method: "send_invoice" }, "days_until_due"],
        [{ collection_method: "send_invoice", days_until_due: 0 }, "days_until_due"],
        [{ collection_method: "send_invoice", days_until_due: 366 }, "days_until_due"],
        [{ collection_method: "send_invoice", days_until_due: 1.5 }, "days_until_due"],
        [{ collection_method: "charge_automatically", days_until_due: 30 }, "days_until_due"],
        [{ collection_method: "by_post", days_until_due: 30 }, "collection_method"],
        [{ days_until_due: 30 }, "collection_method"]
      ] as const) {
        const r = await sendInvoices(k, sub, body)
        expect([r.status, (r.body as any).code, (r.body as any).data?.param], JSON.stringify(body)).toEqual([
          400,
          "InvalidParameter",
          param
        ])
      }
      const c = await api.call("POST", "/api/v1/front/customer/create", k, {
        email: "x@example.com",
        collection_method: "send_invoice",
        days_until_due: 400
      })
      expect([c.status, (c.body as any).data?.param]).toEqual([400, "days_until_due"])
      const noMethod = await api.call("POST", "/api/v1/front/customer/create", k, {
        email: "x@example.com",
        days_until_due: 30
      })
      expect([noMethod.status, (noMethod.body as any).data?.param]).toEqual([400, "collection_method"])
      // terms alone for a customer charged automatically: refused, the customer unchanged
      const y = await api.call("POST", "/api/v1/front/customer/create", k, { email: "y@example.com" })
      const yId = (y.body as any).data.customer_id as string
      const termsOnly = await api.call("POST", "/api/v1/front/customer/update", k, {
        customer_id: yId,
        days_until_due: 30
      })
      expect([termsOnly.status, (termsOnly.body as any).data?.param]).toEqual([400, "days_until_due"])
      expect(((await api.call("GET", `/api/v1/front/customer/${yId}`, k)).body as any).data.customer).toMatchObject({
        collection_method: "charge_automatically",
        days_until_due: null
      })
      const customers = ((await api.call("GET", "/api/v1/front/customer?emails=x@example.com", k)).body as any).data
        .list
      expect(customers).toEqual([])
      // nothing changed: the renewal is charged
      await clock(k, "2026-02-01T00:00:10Z")
      const renewal = (await invoicesOf(k, sub)).find((i) => i.invoice_type === "renewal")
      expect(renewal).toMatchObject({
        biz_status: "success",
        collection_method: "charge_automatically",
        due_date: null
      })
    })
  })
}
