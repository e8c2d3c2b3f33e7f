import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

// One-off charges end to end over REST (issue 34, item 3): invoice items → a one-off invoice,
// numbered, taxed, charged to the card on file; no card → open for its hosted page; a declined
// card → failed and payable on the page; concurrent invoices bill each item once; hostile input
// refused with envelope codes and nothing written — on PGlite, and on PostgreSQL when
// RECUR_TEST_DATABASE_URL is set.

const card = { exp_month: "12", exp_year: "2099", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`one-off invoices (${name})`, { timeout: 240_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const path = (url: string) => new URL(url).pathname
    const pay = (url: string, fields: Record<string, string>) =>
      api.handler(
        new Request(`http://localhost${path(url)}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(fields).toString()
        })
      )

    /** A customer (at a New York address when `taxed`), subscribed with `number` when given. */
    const customerOf = async (key: string, number?: string, address?: Record<string, string>) => {
      if (number === undefined) {
        const c = await api.call("POST", "/api/v1/front/customer/create", key, {
          payer_id: `p-${Math.random()}`,
          ...(address ? { address } : {})
        })
        expect(c.status, JSON.stringify(c.body)).toBe(200)
        return c.body.data.customer_id as string
      }
      const { priceId } = await api.priceOf(key)
      const s = await api.call("POST", "/api/v1/session", key, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const paid = await api.call(
        "POST",
        `/checkout/${s.body.data.session_id}/pay`,
        null,
        { card_number: number, ...card },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      return (await api.call("GET", `/api/v1/session/${s.body.data.session_id}`, key)).body.data.session
        .customer_id as string
    }
    const item = (key: string, body: Record<string, unknown>) => api.call("POST", "/api/v1/invoice_items", key, body)
    const events = async (key: string, id: string) =>
      ((await api.call("GET", `/api/v2/webhook/events?business_ids=${id}`, key)).body.data.list as Array<any>).map(
        (e) => e.event_type ?? e.type
      )

    it("items → a one-off invoice: taxed at the customer's address, numbered, charged to the card on file, paid; its items invoiced", async () => {
      const { api_key: key } = await api.merchant()
      const customer = await customerOf(key, "4242424242424242")
      const a = await item(key, {
        customer_id: customer,
        currency: "USD",
        unit_amount: "12.50",
        quantity: 3,
        description: "Setup"
      })
      expect(a.status, JSON.stringify(a.body)).toBe(200)
      expect(a.body.data.invoice_item).toMatchObject({ amount: "37.50", status: "pending", invoice_id: null })
      const b = await item(key, { customer_id: customer, currency: "USD", unit_amount: "2.50" })
      expect(b.status).toBe(200)
      const pending = await api.call("GET", `/api/v1/invoice_items?customer_id=${customer}&pending=true`, key)
      expect(pending.body.data.list.length).toBe(2)
      const inv = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer, metadata: { po: "42" } })
      expect(inv.status, JSON.stringify(inv.body)).toBe(200)
      const invoice = inv.body.data.invoice
      expect(invoice).toMatchObject({
        invoice_type: "one_off",
        biz_status: "success",
        amount: "40.00",
        subtotal: "40.00",
        currency: "USD",
        subscription_id: null,
        metadata: { po: "42" }
      })
      expect(invoice.number).toMatch(/^INV-\d{6}$/)
      expect(invoice.lines.map((l: any) => [l.kind, l.description, l.quantity, l.amount])).toEqual([
        ["invoice_item", "Setup", "3", "37.50"],
        ["invoice_item", "One-off charge", "1", "2.50"]
      ])
      const trade = (await api.call("GET", `/api/v1/trade/${invoice.trade_id}`, key)).body.data.trade
      expect([trade.trade_status, trade.amount]).toEqual(["succeeded", "40.00"])
      expect(await events(key, invoice.invoice_id)).toContain("v2.invoice.paid")
      const after = (await api.call("GET", `/api/v1/invoice_item/${a.body.data.invoice_item.invoice_item_id}`, key))
        .body.data.invoice_item
      expect([after.status, after.invoice_id]).toEqual(["invoiced", invoice.invoice_id])
      // nothing left to bill
      const again = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer })
      expect([again.status, again.body.code]).toEqual([400, "invalid_request_error"])
      // an invoiced item cannot be deleted
      const del = await api.call("POST", `/api/v1/invoice_item/${after.invoice_item_id}/delete`, key)
      expect([del.status, del.body.code]).toEqual([409, "state_conflict"])
    })

    it("a customer with no card on file: the invoice stays open, paid on its hosted page", async () => {
      const { api_key: key } = await api.merchant()
      await api.call("POST", "/api/v1/tax_rates", key, { name: "NY", percentage: "10", country: "US" })
      const customer = await customerOf(key, undefined, {
        line1: "1 Main St",
        city: "New York",
        province: "NY",
        country: "US"
      })
      expect(
        (await item(key, { customer_id: customer, currency: "USD", unit_amount: "100.00", description: "Setup fee" }))
          .status
      ).toBe(200)
      const inv = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer })
      expect(inv.status, JSON.stringify(inv.body)).toBe(200)
      const invoice = inv.body.data.invoice
      expect([invoice.biz_status, invoice.amount, invoice.tax_amount]).toEqual(["open", "110.00", "10.00"])
      expect(invoice.number).toMatch(/^INV-/)
      expect(invoice.hosted_invoice_url).toMatch(/^http:\/\/localhost:4000\/invoice\//)
      const page = await (await api.handler(new Request(`http://localhost${path(invoice.hosted_invoice_url)}`))).text()
      expect(page).toContain('id="pay-form"')
      expect(page).toContain("Setup fee")
      const pdf = await api.handler(new Request(`http://localhost${path(invoice.invoice_pdf)}`))
      expect(pdf.status).toBe(200)
      const paid = await pay(invoice.hosted_invoice_url, { card_number: "4242424242424242", ...card })
      expect(paid.status).toBe(303)
      const after = (await api.call("GET", `/api/v1/invoice/${invoice.invoice_id}`, key)).body.data.invoice
      expect(after.biz_status).toBe("success")
      expect(await events(key, invoice.invoice_id)).toContain("v2.invoice.paid")
    })

    it("a declined card on file: the invoice failed (no dunning), payable on its hosted page with another card", async () => {
      const { api_key: key } = await api.merchant()
      // pays the checkout, then declines every later charge of the saved card
      const customer = await customerOf(key, "4000000000000341")
      expect((await item(key, { customer_id: customer, currency: "USD", unit_amount: "5.00" })).status).toBe(200)
      const inv = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer })
      expect(inv.status, JSON.stringify(inv.body)).toBe(200)
      const invoice = inv.body.data.invoice
      expect(invoice.biz_status).toBe("failed")
      expect(await events(key, invoice.invoice_id)).toContain("v2.invoice.payment_failed")
      // no dunning: the customer's subscription is untouched
      const subs = (await api.call("GET", "/api/v1/subscription", key)).body.data.list
      expect(subs.filter((s: any) => s.customer_id === customer).map((s: any) => s.status)).toEqual(["active"])
      const paid = await pay(invoice.hosted_invoice_url, { card_number: "4242424242424242", ...card })
      expect(paid.status).toBe(303)
      const after = (await api.call("GET", `/api/v1/invoice/${invoice.invoice_id}`, key)).body.data.invoice
      expect(after.biz_status).toBe("success")
    })

    it("concurrent one-off invoices of one customer bill each item once; a replayed Request-Id answers the same invoice", async () => {
      const { api_key: key } = await api.merchant()
      const customer = await customerOf(key, "4242424242424242")
      for (const amount of ["1.00", "2.00", "3.00"])
        expect((await item(key, { customer_id: customer, currency: "USD", unit_amount: amount })).status).toBe(200)
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => api.call("POST", "/api/v1/invoices", key, { customer_id: customer }))
      )
      for (const r of answers) expect([200, 400, 409], JSON.stringify(r.body)).toContain(r.status)
      const made = answers.filter((r) => r.status === 200)
      expect(made.length).toBe(1)
      expect(made[0]!.body.data.invoice.amount).toBe("6.00")
      const all = (await api.call("GET", `/api/v1/invoices?customer_id=${customer}&invoice_types=one_off`, key)).body
        .data.list
      expect(all.length).toBe(1)
      // at most once under retries: the same Request-Id replays the answer, no second invoice
      expect((await item(key, { customer_id: customer, currency: "USD", unit_amount: "4.00" })).status).toBe(200)
      const headers = { "request-id": `one-off-${Math.random()}` }
      const first = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer }, headers)
      const replay = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer }, headers)
      expect([first.status, replay.status]).toEqual([200, 200])
      expect(replay.body.data.invoice.invoice_id).toBe(first.body.data.invoice.invoice_id)
      const after = (await api.call("GET", `/api/v1/invoices?customer_id=${customer}&invoice_types=one_off`, key)).body
        .data.list
      expect(after.length).toBe(2)
    })

    it("an item on a subscription: a line of its upcoming invoice and of its renewal, discounted as the others, billed once", async () => {
      const { api_key: key } = await api.merchant()
      const customer = await customerOf(key, "4242424242424242")
      const sub = (await api.call("GET", "/api/v1/subscription", key)).body.data.list.find(
        (s: any) => s.customer_id === customer
      )
      const discount = (
        await api.call("POST", "/api/v1/discounts", key, {
          name: "Ten",
          code: "TEN",
          discount_type: "percentage",
          percent_off: 10,
          duration: "forever"
        })
      ).body.data.discount
      const applied = await api.call("POST", `/api/v1/subscription/${sub.id}/discount`, key, {
        discount_id: discount.discount_id
      })
      expect(applied.status, JSON.stringify(applied.body)).toBe(200)
      const on = await item(key, {
        customer_id: customer,
        subscription_id: sub.id,
        unit_amount: "10.00",
        quantity: 2,
        description: "Extra seats, last month"
      })
      expect(on.status, JSON.stringify(on.body)).toBe(200)
      expect(on.body.data.invoice_item).toMatchObject({ subscription_id: sub.id, currency: "USD", amount: "20.00" })
      // another customer's subscription, or another currency, is refused
      const other = await customerOf(key)
      const foreign = await item(key, { customer_id: other, subscription_id: sub.id, unit_amount: "1.00" })
      expect([foreign.status, foreign.body.code]).toEqual([404, "resource_not_found"])
      const eur = await item(key, {
        customer_id: customer,
        subscription_id: sub.id,
        currency: "EUR",
        unit_amount: "1.00"
      })
      expect([eur.status, eur.body.code]).toEqual([400, "InvalidParameter"])
      // a one-off invoice does not bill it: it waits for the renewal
      const none = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer })
      expect([none.status, none.body.code]).toEqual([400, "invalid_request_error"])
      const upcoming = (await api.call("GET", `/api/v1/subscription/${sub.id}/upcoming_invoice`, key)).body.data
        .upcoming_invoice
      expect(upcoming.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ["subscription", "30.00"],
        ["invoice_item", "20.00"],
        ["discount", "-5.00"]
      ])
      expect([upcoming.subtotal, upcoming.amount]).toEqual(["50.00", "45.00"])
      await api.call("POST", "/api/v1/test_helpers/advance_clock", key, { frozen_time: "2026-02-01T12:00:00Z" })
      const renewal = (await api.call("GET", `/api/v1/invoices?subscription_id=${sub.id}`, key)).body.data.list.find(
        (i: any) => i.cycle_index === 1
      )
      expect(renewal.lines.map((l: any) => [l.kind, l.description, l.amount])).toEqual([
        ["subscription", "Pro monthly × 1", "30.00"],
        ["invoice_item", "Extra seats, last month", "20.00"],
        ["discount", "Discount TEN", "-5.00"]
      ])
      expect([renewal.biz_status, renewal.amount]).toEqual(["success", "45.00"])
      const after = (await api.call("GET", `/api/v1/invoice_item/${on.body.data.invoice_item.invoice_item_id}`, key))
        .body.data.invoice_item
      expect([after.status, after.invoice_id]).toEqual(["invoiced", renewal.invoice_id])
      // billed once: the next upcoming invoice has no item line
      const next = (await api.call("GET", `/api/v1/subscription/${sub.id}/upcoming_invoice`, key)).body.data
        .upcoming_invoice
      expect(next.lines.map((l: any) => l.kind)).toEqual(["subscription", "discount"])
    })

    it("hostile input is refused with its envelope code and changes nothing", async () => {
      const { api_key: key } = await api.merchant()
      const customer = await customerOf(key)
      const refused: Array<[Record<string, unknown>, number, string, string | undefined]> = [
        [
          { customer_id: customer, currency: "USD", unit_amount: "99999999999999.00" },
          400,
          "InvalidParameter",
          "unit_amount"
        ],
        [
          { customer_id: customer, currency: "USD", unit_amount: "9999999999.00", quantity: 1000 },
          400,
          "InvalidParameter",
          "unit_amount"
        ],
        [{ customer_id: customer, currency: "USD", unit_amount: "-5.00" }, 400, "InvalidParameter", "unit_amount"],
        [
          { customer_id: customer, currency: "USD", unit_amount: "5.00", quantity: -2 },
          400,
          "InvalidParameter",
          "quantity"
        ],
        [
          { customer_id: customer, currency: "USD", unit_amount: "5.00", quantity: 1.5 },
          400,
          "InvalidParameter",
          "quantity"
        ],
        [{ customer_id: customer, currency: "USD", unit_amount: "5.001" }, 400, "InvalidParameter", "unit_amount"],
        [{ customer_id: customer, currency: "XXQ", unit_amount: "5.00" }, 400, "InvalidParameter", "currency"],
        [{ customer_id: customer, unit_amount: "5.00" }, 400, "InvalidParameter", "currency"],
        [{ customer_id: "cus_nope", currency: "USD", unit_amount: "5.00" }, 404, "resource_not_found", undefined]
      ]
      for (const [body, status, code] of refused) {
        const r = await item(key, body)
        expect([r.status, r.body.code], JSON.stringify([body, r.body])).toEqual([status, code])
      }
      expect((await api.call("GET", `/api/v1/invoice_items?customer_id=${customer}`, key)).body.data.list).toEqual([])
      // one currency per customer's pending items
      expect((await item(key, { customer_id: customer, currency: "USD", unit_amount: "5.00" })).status).toBe(200)
      const eur = await item(key, { customer_id: customer, currency: "EUR", unit_amount: "5.00" })
      expect([eur.status, eur.body.code]).toEqual([400, "InvalidParameter"])
      const list = (await api.call("GET", `/api/v1/invoice_items?customer_id=${customer}`, key)).body.data.list
      expect(list.map((i: any) => i.currency)).toEqual(["USD"])
      // a deleted item is not billed, and cannot be deleted twice
      const del = await api.call("POST", `/api/v1/invoice_item/${list[0].invoice_item_id}/delete`, key)
      expect([del.status, del.body.data.invoice_item.status]).toEqual([200, "deleted"])
      const twice = await api.call("POST", `/api/v1/invoice_item/${list[0].invoice_item_id}/delete`, key)
      expect([twice.status, twice.body.code]).toEqual([409, "state_conflict"])
      const none = await api.call("POST", "/api/v1/invoices", key, { customer_id: customer })
      expect([none.status, none.body.code]).toEqual([400, "invalid_request_error"])
      const bad = await api.call("GET", "/api/v1/invoice_items?pending=maybe", key)
      expect([bad.status, bad.body.code]).toEqual([400, "InvalidParameter"])
      expect((await api.call("GET", `/api/v1/invoices?customer_id=${customer}`, key)).body.data.list).toEqual([])
    })
  })
}
