import { inflateSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"
import { changeHelpers } from "./fixtures/changes.js"

/**
 * The text a PDF shows, line by line: each `TJ`/`Tj` text operation of its (deflated) content
 * streams, its strings joined (pdfkit writes the standard fonts' text as hex strings).
 */
const pdfText = (bytes: Uint8Array): string => {
  const raw = Buffer.from(bytes)
  const lines: Array<string> = []
  let from = 0
  for (;;) {
    const start = raw.indexOf("stream", from, "latin1")
    if (start < 0) break
    const body = start + (raw[start + 6] === 0x0d ? 8 : 7)
    const end = raw.indexOf("endstream", body, "latin1")
    from = end + 9
    let content: string
    try {
      content = inflateSync(raw.subarray(body, end)).toString("latin1")
    } catch {
      continue
    }
    for (const op of content.matchAll(/\[((?:<[0-9a-fA-F]*>|[^\]])*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj/g)) {
      const hex = op[1] !== undefined ? [...op[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => h[1]!).join("") : op[2]!
      lines.push(Buffer.from(hex, "hex").toString("latin1"))
    }
  }
  return lines.join("\n")
}

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const card = { exp_month: "12", exp_year: "2099", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`invoice documents (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const pay = (sessionId: string, number = "4242424242424242") =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const subscribe = async (k: string, priceId: string, body: Record<string, unknown> = {}, number?: string) => {
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }],
        ...body
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      expect((await pay(id, number)).status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const invoices = async (k: string) =>
      ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list as Array<any>
    const byNumber = (list: Array<any>) => list.map((i) => i.number).sort()
    const path = (url: string) => new URL(url).pathname
    const get = (url: string, headers: Record<string, string> = {}) =>
      api.handler(new Request(`http://localhost${path(url)}`, { headers }))
    const post = (url: string, fields: Record<string, string>) =>
      api.handler(
        new Request(`http://localhost${path(url)}`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(fields)
        })
      )

    it("numbers every issued invoice in order, gapless, per merchant; credit notes in their own sequence; a new prefix starts its own", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      await subscribe(k, priceId)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T00:00:00Z" })
      const issued = await invoices(k)
      expect(byNumber(issued)).toEqual(["INV-000001", "INV-000002", "INV-000003"])
      // in the order they were issued
      const inOrder = [...issued].sort((a, b) => a.cycle_index - b.cycle_index).map((i) => i.number)
      expect(inOrder).toEqual(["INV-000001", "INV-000002", "INV-000003"])
      const trade = ((await api.call("GET", "/api/v1/trades?limit=100", k)).body as any).data.list.at(-1)
      expect((await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id, amount: "10.00" })).status).toBe(
        200
      )
      expect((await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id, amount: "5.00" })).status).toBe(
        200
      )
      const notes = (await invoices(k)).filter((i) => i.invoice_type === "refund").map((i) => i.number)
      expect(notes.sort()).toEqual(["INV-CN-000001", "INV-CN-000002"])

      expect((await api.call("GET", "/api/v1/invoice_settings", k)).body).toMatchObject({
        data: { invoice_prefix: "INV" }
      })
      for (const bad of ["ab", "TOOLONGPREFIX1", "IN-V", "inv"])
        expect(refusal(await api.call("POST", "/api/v1/invoice_settings", k, { invoice_prefix: bad }))).toEqual([
          400,
          "InvalidParameter",
          "invoice_prefix"
        ])
      const set = await api.call("POST", "/api/v1/invoice_settings", k, { invoice_prefix: "ACME2026" })
      expect((set.body as any).data).toEqual({ invoice_prefix: "ACME2026" })
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-04-01T00:00:00Z" })
      expect(byNumber(await invoices(k))).toContain("ACME2026-000001")
      // another merchant has its own sequence
      const other = await fresh()
      await subscribe(other, (await api.priceOf(other)).priceId)
      expect(byNumber(await invoices(other))).toEqual(["INV-000001"])
    })

    it("an issued invoice keeps the parties it was issued to: updating the customer afterwards changes neither page, PDF nor API", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const created = await api.call("POST", "/api/v1/front/customer/create", k, {
        name: "Erika Mustermann",
        email: "erika@example.de",
        address: { line1: "Unter den Linden 1", city: "Berlin", country: "DE" }
      })
      await subscribe(k, priceId, { customer_id: (created.body as any).data.customer_id })
      const [inv] = await invoices(k)
      expect(inv).toMatchObject({
        number: "INV-000001",
        customer_name: "Erika Mustermann",
        customer_email: "erika@example.de",
        customer_address: "Unter den Linden 1, Berlin, DE",
        merchant_name: "Acme"
      })
      const updated = await api.call("POST", "/api/v1/front/customer/update", k, {
        customer_id: inv.customer_id,
        name: "Jean Dupont",
        email: "jean@example.fr",
        address: { line1: "1 rue de Rivoli", city: "Paris", country: "FR" }
      })
      expect(updated.status).toBe(200)
      const customer = ((await api.call("GET", `/api/v1/front/customer/${inv.customer_id}`, k)).body as any).data
        .customer
      expect([customer.name, customer.address]).toEqual(["Jean Dupont", "1 rue de Rivoli, Paris, FR"])
      // the API, the page and the PDF still state what was issued
      const [after] = await invoices(k)
      expect(after).toMatchObject({
        customer_name: "Erika Mustermann",
        customer_email: "erika@example.de",
        customer_address: "Unter den Linden 1, Berlin, DE"
      })
      const html = await (await get(inv.hosted_invoice_url)).text()
      expect(html).toContain("Erika Mustermann")
      expect(html).toContain("Unter den Linden 1, Berlin, DE")
      expect(html).not.toContain("Jean Dupont")
      expect(html).not.toContain("Paris")
      const text = pdfText(new Uint8Array(await (await get(inv.invoice_pdf)).arrayBuffer()))
      expect(text).toContain("Erika Mustermann")
      expect(text).toContain("Unter den Linden 1, Berlin, DE")
      expect(text).not.toContain("Jean Dupont")
      expect(text).not.toContain("Paris")
      // the next invoice, issued after the change, states the customer as it is then
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T12:00:00Z" })
      const renewal = (await invoices(k)).find((i) => i.cycle_index === 1)
      expect([renewal.number, renewal.customer_name, renewal.customer_address]).toEqual([
        "INV-000002",
        "Jean Dupont",
        "1 rue de Rivoli, Paris, FR"
      ])
      expect(pdfText(new Uint8Array(await (await get(renewal.invoice_pdf)).arrayBuffer()))).toContain("Jean Dupont")
    })

    it("declined and abandoned checkouts take no number: the issued series stays gapless, a retried checkout is paid under a fresh number, an expired one is voided", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const session = async () =>
        (
          (
            await api.call("POST", "/api/v1/session", k, {
              payer_id: `p-${Math.random()}`,
              line_items: [{ price_id: priceId }]
            })
          ).body as any
        ).data.session_id as string
      const declined = await session()
      expect((await pay(declined, "4000000000000002")).status).toBe(402)
      const abandoned = await session()
      expect((await pay(abandoned, "4000000000003220")).status).toBe(200)
      // not issued yet: no number, no page
      const unpaid = await invoices(k)
      expect(unpaid.map((i) => [i.biz_status, i.number, i.hosted_invoice_url])).toEqual([
        ["pending", null, null],
        ["pending", null, null]
      ])
      await subscribe(k, priceId)
      expect((await pay(declined)).status).toBe(200)
      const paid = (await invoices(k)).filter((i) => i.biz_status === "success")
      expect(byNumber(paid)).toEqual(["INV-000001", "INV-000002"])
      const retried = ((await api.call("GET", `/api/v1/session/${declined}`, k)).body as any).data.session
      expect(paid.find((i) => i.subscription_id === retried.subscription_id).number).toBe("INV-000002")
      // the abandoned checkout ends at its session's expiry: voided, no number, no page
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-02T00:00:00Z" })
      const all = await invoices(k)
      expect(all.filter((i) => i.number === null).map((i) => [i.biz_status, i.hosted_invoice_url])).toEqual([
        ["void", null]
      ])
      expect(byNumber(all.filter((i) => i.number !== null))).toEqual(["INV-000001", "INV-000002"])
      const voided = all.find((i) => i.biz_status === "void")
      const events = (
        (await api.call("GET", `/api/v2/webhook/events?business_ids=${voided.invoice_id}`, k)).body as any
      ).data.list
      expect(events.map((e: any) => e.type ?? e.event_type)).toEqual(["v2.invoice.voided"])
      // the voided invoice can be listed by its status
      const listed = ((await api.call("GET", "/api/v1/invoices?biz_status=void", k)).body as any).data.list
      expect(listed.map((i: any) => i.invoice_id)).toEqual([voided.invoice_id])
      // its customer's portal lists issued documents only: the voided draft is not one
      const link = (
        (await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: voided.customer_id })).body as any
      ).data.portal_session.url as string
      const portal = await (await get(link)).text()
      expect(portal).not.toContain(voided.invoice_id)
      expect(portal).not.toContain("Void")
    })

    it("concurrent checkouts take numbers 1..n exactly: none skipped, none twice", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const ids = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const s = await api.call("POST", "/api/v1/session", k, {
            payer_id: `race-${i}`,
            line_items: [{ price_id: priceId }]
          })
          return (s.body as any).data.session_id as string
        })
      )
      const answers = await Promise.all(ids.map((id) => pay(id)))
      expect(answers.map((a) => a.status)).toEqual(ids.map(() => 200))
      expect(byNumber(await invoices(k))).toEqual(Array.from({ length: 8 }, (_, i) => `INV-00000${i + 1}`))
    })

    it("the hosted page shows merchant, customer, number, lines with periods, discount, tax and totals behind a signed link", async () => {
      const k = await fresh()
      await api.call("POST", "/api/v1/tax_rates", k, { name: "VAT", percentage: "20", country: "GB" })
      await api.call("POST", "/api/v1/discounts", k, {
        name: "Ten",
        code: "TEN",
        discount_type: "percentage",
        percent_off: 10,
        duration: "forever"
      })
      const { priceId } = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" } })
      await subscribe(k, priceId, {
        discount_code: "TEN",
        billing_address: { name: "Ada Lovelace", address_line1: "1 Main St", city: "London", country_code: "GB" }
      })
      const [inv] = await invoices(k)
      expect(inv.hosted_invoice_url).toMatch(/^http:\/\/localhost:4000\/invoice\/inv_[0-9a-z]{26}\/[A-Za-z0-9_-]{43}$/)
      expect(inv.invoice_pdf).toBe(`${inv.hosted_invoice_url}/pdf`)
      const page = await get(inv.hosted_invoice_url)
      expect(page.status).toBe(200)
      expect(page.headers.get("cache-control")).toBe("no-store")
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      const html = await page.text()
      expect(html).toContain('<strong id="merchant">Acme</strong>')
      expect(html).toContain('<span id="number">INV-000001</span>')
      expect(html).toContain("1 Main St, London, GB")
      expect(html).toContain("<td>Pro monthly × 1</td><td>Jan 1, 2026 – Feb 1, 2026</td>")
      expect(html).toContain('<th>Subtotal</th><td class="num">$50.00</td>')
      expect(html).toContain('<th>Discount TEN</th><td class="num">-$5.00</td>')
      expect(html).toContain('<th>VAT 20%</th><td class="num">$9.00</td>')
      expect(html).toContain('<tr class="total"><th>Total</th><td class="num">$54.00</td>')
      expect(html).toContain("<dd>Paid</dd>")
      expect(html).not.toContain('id="pay-form"')
      // in German when the reader asks for it
      const german = await (await get(inv.hosted_invoice_url, { "accept-language": "de-DE" })).text()
      expect(german).toContain("Rechnung")
      expect(german).toContain("Zwischensumme")
      expect(german).toContain('<th>VAT 20\u00a0%</th><td class="num">9,00\u00a0$</td>')
      // Japanese, and Arabic right to left with its own digits; dates on the Gregorian calendar
      const japanese = await (await get(inv.hosted_invoice_url, { "accept-language": "ja,en;q=0.5" })).text()
      expect(japanese).toContain('<html lang="ja-JP" dir="ltr">')
      expect(japanese).toContain("<th>小計</th>")
      expect(japanese).toContain("2026/01/01")
      const arabic = await (await get(inv.hosted_invoice_url, { "accept-language": "ar" })).text()
      expect(arabic).toContain('<html lang="ar-SA" dir="rtl">')
      expect(arabic).toContain("المجموع الفرعي")
      expect(arabic).toContain("٢٠٢٦")
      // the PDF: in Spanish (Helvetica writes it); in English with a note for Arabic and Japanese
      const pdfIn = async (language: string) =>
        pdfText(new Uint8Array(await (await get(inv.invoice_pdf, { "accept-language": language })).arrayBuffer()))
      const spanish = await pdfIn("es-ES")
      expect(spanish).toContain("Factura")
      expect(spanish).toContain("Subtotal")
      for (const language of ["ar-SA", "ja-JP"]) {
        const text = await pdfIn(language)
        expect(text).toContain("Invoice")
        expect(text).toContain("This PDF is in English")
        expect(text).not.toContain("?")
      }
      // a wrong, truncated or borrowed signature finds nothing, and says the same as no invoice
      const [, , id, token] = path(inv.hosted_invoice_url).split("/")
      for (const bad of [
        // the last character changed (to one it is not)
        `/invoice/${id}/${token!.slice(0, -1)}${token!.endsWith("A") ? "B" : "A"}`,
        `/invoice/${id}/${token!.slice(0, 20)}`,
        `/invoice/inv_01jd0000000000000000000000/${token}`,
        `/invoice/${id}/${"x".repeat(5000)}`,
        `/invoice/${id}/${token}/pdf/../../x`
      ]) {
        const r = await api.handler(new Request(`http://localhost${bad}`))
        expect([bad.slice(0, 60), r.status]).toEqual([bad.slice(0, 60), 404])
      }
      const pdf = await get(inv.invoice_pdf)
      expect([pdf.status, pdf.headers.get("content-type")]).toEqual([200, "application/pdf"])
      expect(pdf.headers.get("content-disposition")).toBe('inline; filename="INV-000001.pdf"')
      const bytes = new Uint8Array(await pdf.arrayBuffer())
      expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-")
      expect(bytes.length).toBeGreaterThan(1000)
    })

    it("an invoice states the balance it applied, so it adds up: the API's credit_applied, an Applied balance row on the page and the PDF; never changed afterwards", async () => {
      const {
        ok,
        fresh: withCredit,
        advance,
        price,
        subscribe: paid,
        invoicesOf,
        subOf,
        preview,
        commit
      } = changeHelpers(api)
      const k = await withCredit("credit_balance")
      const p60 = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const p10 = await price(k, p60.productId, "10.00", "Pro 10")
      const { id: sub } = await paid(k, p60.priceId)
      // Jan 16: 30.97 − 5.16 = 25.81 credited to the balance; it pays February, March and part of April
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const q = ok(await preview(k, sub, { price_id: p10, proration: "always_invoice" }))
      ok(await commit(k, sub, { price_id: p10, proration: "always_invoice", quote_id: q.quote_id }))
      expect((await subOf(k, sub)).credit_balance).toBe("25.81")
      for (const at of ["2026-02-01", "2026-03-01", "2026-04-01"]) ok(await advance(k, `${at}T00:00:00Z`))
      const renewals = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")
      expect(renewals.map((i: any) => [i.subtotal, i.credit_applied, i.amount])).toEqual([
        ["10.00", "10.00", "0.00"],
        ["10.00", "10.00", "0.00"],
        ["10.00", "5.81", "4.19"]
      ])
      // subtotal − discounts + exclusive tax − credit applied = amount due, on every invoice issued
      for (const i of await invoicesOf(k, sub)) {
        const cents = (s: string) => Math.round(Number(s) * 100)
        const discounts = i.lines
          .filter((l: any) => l.kind === "discount")
          .reduce((a: number, l: any) => a - cents(l.amount), 0)
        const tax = i.tax_lines.reduce((a: number, t: any) => a + (t.inclusive ? 0 : cents(t.amount)), 0)
        expect([i.invoice_type, cents(i.subtotal) - discounts + tax - cents(i.credit_applied)]).toEqual([
          i.invoice_type,
          cents(i.amount)
        ])
      }
      const april = renewals[2]
      const html = await (await get(april.hosted_invoice_url)).text()
      expect(html).toContain('<th>Subtotal</th><td class="num">$10.00</td>')
      expect(html).toContain('<th>Applied balance</th><td class="num">-$5.81</td>')
      expect(html).toContain('<tr class="total"><th>Total</th><td class="num">$4.19</td>')
      const german = await (await get(april.hosted_invoice_url, { "accept-language": "de-DE" })).text()
      expect(german).toContain("<th>Angerechnetes Guthaben</th>")
      const pdf = pdfText(new Uint8Array(await (await get(april.invoice_pdf)).arrayBuffer()))
      expect(pdf).toContain("Applied balance")
      expect(pdf).toContain("-$5.81")
      // an invoice without credit shows no such row
      const first = (await invoicesOf(k, sub))[0]
      expect(first.credit_applied).toBe("0.00")
      expect(await (await get(first.hosted_invoice_url)).text()).not.toContain("Applied balance")
      // issued invoices never change: a later refund or balance leaves February's as it was
      ok(await advance(k, "2026-05-01T00:00:00Z"))
      const again = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")
      expect(again.slice(0, 3)).toEqual(renewals)
    })

    it("a retrying invoice's page has a Pay button that charges it through the engine: the invoice is paid, the subscription recovers", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      // this card pays the first invoice, then declines renewals
      const sub = await subscribe(k, priceId, {}, "4000000000000341")
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T12:00:00Z" })
      const renewal = (await invoices(k)).find((i) => i.cycle_index === 1)
      expect(renewal.biz_status).toBe("retrying")
      const html = await (await get(renewal.hosted_invoice_url)).text()
      expect(html).toContain('id="pay-form"')
      expect(html).toContain("Payment failed — due")
      const token = path(renewal.hosted_invoice_url).split("/")[3]
      expect(html).toContain(`action="${token}/pay"`)
      // a declined card: the page again, with the reason, nothing paid
      const declined = await post(`${renewal.hosted_invoice_url}/pay`, {
        card_number: "4000000000000002",
        ...card
      })
      expect(declined.status).toBe(402)
      expect(await declined.text()).toContain('class="error"')
      const bad = await post(`${renewal.hosted_invoice_url}/pay`, { card_number: "4242424242424241", ...card })
      expect(bad.status).toBe(400)
      const paid = await post(`${renewal.hosted_invoice_url}/pay`, { card_number: "4242424242424242", ...card })
      expect([paid.status, paid.headers.get("location")]).toEqual([303, `../${token}`])
      const after = (await invoices(k)).find((i) => i.invoice_id === renewal.invoice_id)
      expect(after.biz_status).toBe("success")
      const s = ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription
      expect(s.status).toBe("active")
      const again = await post(`${renewal.hosted_invoice_url}/pay`, { card_number: "4242424242424242", ...card })
      expect(again.status).toBe(409)
      expect(await (await get(renewal.hosted_invoice_url)).text()).not.toContain('id="pay-form"')
    })

    it("an unpaid subscription's latest failed invoice has a Pay button: the card becomes the subscription's and it is active again", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const sub = await subscribe(k, priceId, {}, "4000000000000341")
      // dunning gives up by Feb 20 (retries 1, 3, 5, 7 days after the failed renewal)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-20T00:00:00Z" })
      const state = async () =>
        ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription
      expect((await state()).status).toBe("unpaid")
      const failed = (await invoices(k)).find((i) => i.cycle_index === 1)
      const first = (await invoices(k)).find((i) => i.cycle_index === 0)
      expect([failed.biz_status, first.biz_status]).toEqual(["failed", "success"])
      const html = await (await get(failed.hosted_invoice_url)).text()
      expect(html).toContain('id="pay-form"')
      // the paid first invoice has none, and refuses a payment
      expect(await (await get(first.hosted_invoice_url)).text()).not.toContain('id="pay-form"')
      expect((await post(`${first.hosted_invoice_url}/pay`, { card_number: "4242424242424242", ...card })).status).toBe(
        409
      )
      // a card the gateway refuses: nothing changes
      const refused = await post(`${failed.hosted_invoice_url}/pay`, { card_number: "4000000000000002", ...card })
      expect(refused.status).toBe(400)
      expect((await state()).status).toBe("unpaid")
      const paid = await post(`${failed.hosted_invoice_url}/pay`, { card_number: "5555555555554444", ...card })
      expect(paid.status).toBe(303)
      const after = (await invoices(k)).find((i) => i.invoice_id === failed.invoice_id)
      expect(after.biz_status).toBe("success")
      expect((await state()).status).toBe("active")
      // renewals now charge the new card
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-21T00:00:00Z" })
      const renewals = (await invoices(k)).filter((i) => i.invoice_type === "renewal" && i.cycle_index > 1)
      expect(renewals.map((i) => i.biz_status)).toEqual(["success"])
      expect((await state()).status).toBe("active")
    })
  })
}
