import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

// Each invoice line's share of the invoice's discounts and tax (issue 33, items 1 and 7), over
// HTTP on PGlite (and PostgreSQL when configured): the Team example, 10 % off and 20 % VAT.

const cents = (s: string | null) => BigInt((s ?? "0").replace(".", ""))
const sumOf = (xs: ReadonlyArray<string | null>) => xs.reduce((a, x) => a + cents(x), 0n)

for (const [name, storage] of backends()) {
  describe(`invoice lines' discounts and tax (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const monthly = (k: string, product: string, price: string, amount: string) =>
      api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: amount } }, { product, price })
    const invoicesOf = async (k: string, subscriptionId: string) =>
      ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
        .filter((i: any) => i.subscription_id === subscriptionId)
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index || a.created_at.localeCompare(b.created_at))
    const shares = (invoice: any) => invoice.lines.map((l: any) => [l.kind, l.amount, l.discount_amount, l.tax_amount])
    /** The lines' shares add up to the invoice's discounts and tax, exactly. */
    const addsUp = (invoice: any) => {
      expect(sumOf(invoice.lines.map((l: any) => l.discount_amount))).toBe(
        sumOf(invoice.Discounts.current_period.map((d: any) => d.discount_amount))
      )
      expect(sumOf(invoice.lines.map((l: any) => l.tax_amount))).toBe(cents(invoice.tax_amount))
    }

    it("the Team example: each line states its share of the 10 % discount and the 20 % VAT, adding up to the invoice's; the page and the PDF show them", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const team = await monthly(k, "Team", "Team plan", "49.00")
      const seat = await monthly(k, "Seats", "Seat", "12.00")
      const sso = await monthly(k, "SSO", "SSO add-on", "99.00")
      const vat = await api.call("POST", "/api/v1/tax_rates", k, { name: "VAT", percentage: "20", country: "GB" })
      expect(vat.status, JSON.stringify(vat.body)).toBe(200)
      const d = await api.call("POST", "/api/v1/discounts", k, {
        name: "Ten",
        code: "TEN",
        discount_type: "percentage",
        percent_off: 10,
        duration: "forever"
      })
      expect(d.status, JSON.stringify(d.body)).toBe(200)
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: "team-buyer",
        line_items: [{ price_id: team.priceId }, { price_id: seat.priceId, quantity: "5" }, { price_id: sso.priceId }],
        discount_code: "TEN",
        billing_address: { country_code: "GB", city: "London" }
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const sessionId = (s.body as any).data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const subId = ((await api.call("GET", `/api/v1/session/${sessionId}`, k)).body as any).data.session
        .subscription_id as string

      // 49.00 + 60.00 + 99.00 = 208.00, less 10 % (20.80) = 187.20, VAT 37.44: 224.64 as before
      const [first] = await invoicesOf(k, subId)
      expect([first.subtotal, first.tax_amount, first.amount]).toEqual(["208.00", "37.44", "224.64"])
      expect(shares(first)).toEqual([
        ["subscription", "49.00", "4.90", "8.82"],
        ["subscription", "60.00", "6.00", "10.80"],
        ["subscription", "99.00", "9.90", "17.82"],
        ["discount", "-20.80", null, null]
      ])
      addsUp(first)
      // the same invoice by id answers the same lines
      const one = (await api.call("GET", `/api/v1/invoice/${first.invoice_id}`, k)).body as any
      expect(one.data.invoice.lines).toEqual(first.lines)

      // the hosted page shows each line's shares under it; the PDF renders
      const url = new URL(first.hosted_invoice_url)
      const html = await (await api.handler(new Request(`http://localhost${url.pathname}`))).text()
      expect(html.match(/<tr class="shares">/g)).toHaveLength(3)
      expect(html).toMatch(
        /<tr class="shares"><td colspan="4"><span>Discount: <span class="num">-\$4\.90<\/span><\/span> · <span>Tax: <span class="num">\$8\.82<\/span>/
      )
      const german = await (
        await api.handler(new Request(`http://localhost${url.pathname}`, { headers: { "accept-language": "de-DE" } }))
      ).text()
      expect(german).toContain("<span>Rabatt: ")
      const pdf = await api.handler(new Request(`http://localhost${url.pathname}/pdf`))
      expect([pdf.status, pdf.headers.get("content-type")]).toEqual([200, "application/pdf"])

      // the renewal states them too
      const renewed = await api.call("POST", "/api/v1/test_helpers/advance_clock", k, {
        frozen_time: "2026-02-01T00:00:00Z"
      })
      expect(renewed.status, JSON.stringify(renewed.body)).toBe(200)
      const all = await invoicesOf(k, subId)
      const renewal = all.find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("224.64")
      expect(
        shares(renewal)
          .slice(0, 3)
          .map((l: any) => l.slice(2))
      ).toEqual([
        ["4.90", "8.82"],
        ["6.00", "10.80"],
        ["9.90", "17.82"]
      ])
      addsUp(renewal)
    })
  })
}
