import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as InvoicePages from "../src/pages/invoice.js"
import { backends, serve } from "./client.js"

// Anonymous GETs of invoice PDFs cannot stall the process: an invoice's PDF is rendered once per
// state and language and then served from a bounded cache, and renders run one at a time between
// other requests — so another merchant's API call made during a burst of PDF GETs is answered
// while the burst is still being rendered, not after it (an ordering check, not a timing one).

for (const [name, storage] of backends()) {
  describe(`invoice PDFs under a burst (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    let pages: Array<string> = []
    let other = ""
    beforeAll(async () => {
      await api.ready()
      const { api_key: key } = await api.merchant({ frozen: "2026-01-01T00:00:00Z" })
      const { priceId } = await api.priceOf(key)
      const s = await api.call("POST", "/api/v1/session", key, { payer_id: "pdf", line_items: [{ price_id: priceId }] })
      const paid = await api.call(
        "POST",
        `/checkout/${s.body.data.session_id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status).toBe(200)
      // two years of monthly renewals: 25 invoices, each a document of its own
      await api.call("POST", "/api/v1/test_helpers/advance_clock", key, { frozen_time: "2028-01-01T12:00:00Z" })
      const list = (await api.call("GET", "/api/v1/invoices?limit=100", key)).body.data.list as Array<{
        hosted_invoice_url: string
      }>
      pages = list.map((i) => new URL(i.hosted_invoice_url).pathname)
      other = (await api.merchant()).api_key
    }, 180_000)
    afterAll(() => api.dispose())

    const pdf = (page: string, language = "en") =>
      api.handler(new Request(`http://localhost${page}/pdf`, { headers: { "accept-language": language } }))

    it("150 concurrent GETs of one invoice's PDF: one render, the same bytes for all", async () => {
      const before = InvoicePages.invoicePdfStats().renders
      const answers = await Promise.all(Array.from({ length: 150 }, () => pdf(pages[0]!, "de")))
      expect(answers.map((r) => r.status)).toEqual(Array(150).fill(200))
      const bodies = await Promise.all(answers.map(async (r) => Buffer.from(await r.arrayBuffer()).toString("base64")))
      expect(new Set(bodies).size).toBe(1)
      expect(Buffer.from(bodies[0]!, "base64").subarray(0, 5).toString()).toBe("%PDF-")
      expect(InvoicePages.invoicePdfStats().renders - before).toBe(1)
      // and later GETs are served from the cache
      expect((await pdf(pages[0]!, "de")).status).toBe(200)
      expect(InvoicePages.invoicePdfStats().renders - before).toBe(1)
    })

    it("another merchant's API call made during a burst of 150 GETs of one PDF waits for one render at most, not 150", async () => {
      const page = pages[1]!
      const before = InvoicePages.invoicePdfStats().renders
      let rendersBeforeAnswer = -1
      const burst = Array.from({ length: 150 }, () => pdf(page, "fr"))
      const call = api.call("GET", "/api/v1/products?limit=10", other).then((r) => {
        rendersBeforeAnswer = InvoicePages.invoicePdfStats().renders - before
        return r
      })
      const [answer, ...pdfs] = await Promise.all([call, ...burst])
      expect(answer!.status).toBe(200)
      expect(pdfs.map((r) => r.status)).toEqual(Array(150).fill(200))
      expect(rendersBeforeAnswer).toBeLessThanOrEqual(1)
      expect(InvoicePages.invoicePdfStats().renders - before).toBe(1)
    })

    it("a paid invoice's PDF says so: a new state of the invoice is rendered once more, the old one is not served", async () => {
      const { api_key: key } = await api.merchant({ frozen: "2026-01-01T00:00:00Z" })
      const { priceId } = await api.priceOf(key)
      const s = await api.call("POST", "/api/v1/session", key, {
        payer_id: "late",
        line_items: [{ price_id: priceId }]
      })
      await api.call(
        "POST",
        `/checkout/${s.body.data.session_id}/pay`,
        null,
        { card_number: "4000000000000341", exp_month: "12", exp_year: "2099", cvc: "123" },
        { accept: "application/json" }
      )
      await api.call("POST", "/api/v1/test_helpers/advance_clock", key, { frozen_time: "2026-02-01T12:00:00Z" })
      const unpaid = (await api.call("GET", "/api/v1/invoices?limit=10", key)).body.data.list.find(
        (i: { biz_status: string }) => i.biz_status !== "success"
      )
      const page = new URL(unpaid.hosted_invoice_url).pathname
      const first = Buffer.from(await (await pdf(page)).arrayBuffer())
      const pay = await api.handler(
        new Request(`http://localhost${page}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ card_number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc: "123" })
        })
      )
      expect(pay.status).toBe(303)
      const before = InvoicePages.invoicePdfStats().renders
      const after = Buffer.from(await (await pdf(page)).arrayBuffer())
      expect(after.equals(first)).toBe(false)
      expect(InvoicePages.invoicePdfStats().renders - before).toBe(1)
      expect(Buffer.from(await (await pdf(page)).arrayBuffer()).equals(after)).toBe(true)
      expect(InvoicePages.invoicePdfStats().renders - before).toBe(1)
    })
  })
}
