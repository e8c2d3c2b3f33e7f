import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const card = { exp_month: "12", exp_year: "2099", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`the payer's page (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    let key = ""
    beforeAll(async () => {
      await api.ready()
      key = (await api.merchant()).api_key
    }, 120_000)
    afterAll(() => api.dispose())

    const priceOf = async (fields: Record<string, unknown> = {}) =>
      (await api.priceOf(key, fields, { product: "Team plan", price: "Team monthly" })).priceId
    const sessionOf = async (body: Record<string, unknown>) => {
      const r = await api.call("POST", "/api/v1/session", key, { payer_id: `p-${Math.random()}`, ...body })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return (r.body as any).data.session_id as string
    }
    const pageOf = async (sessionId: string, headers: Record<string, string> = {}) => {
      const r = await api.handler(new Request(`http://localhost/checkout/${sessionId}`, { headers }))
      return { status: r.status, html: await r.text() }
    }
    const post = (path: string, fields: Record<string, string>) =>
      api.handler(
        new Request(`http://localhost${path}`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(fields)
        })
      )

    it("names the merchant, product, price and interval, shows a trial and what follows, and links cancel and terms", async () => {
      const price = await priceOf({
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
      const id = await sessionOf({
        line_items: [{ price_id: price }],
        cancel_url: "https://shop.example/cancel",
        terms_of_service_url: "https://shop.example/terms",
        privacy_policy_url: "https://shop.example/privacy"
      })
      const { status, html } = await pageOf(id)
      expect(status).toBe(200)
      expect(html).toContain('<html lang="en-US" dir="ltr">')
      expect(html).toContain('<strong id="merchant">Acme</strong>')
      expect(html).toContain('<h1 id="product">Team plan</h1>')
      expect(html).toContain('<p id="price-name">Team monthly</p>')
      expect(html).toContain("Trial: 7 days")
      expect(html).toContain('<span class="amount" id="due">$0.00</span>')
      expect(html).toContain('<p id="then">Then $30.00 every month</p>')
      expect(html).toContain('<a href="https://shop.example/terms">Terms of Service</a>')
      expect(html).toContain('<a href="https://shop.example/privacy">Privacy Policy</a>')
      expect(html).toContain('<a href="https://shop.example/cancel" id="cancel">Cancel and return to Acme</a>')
    })

    it("a session of several line items: the header names the product once, each line its price once", async () => {
      const team = await priceOf({ price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } })
      const seat = (
        await api.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
          { product: "Seats", price: "Seat" }
        )
      ).priceId
      const { html } = await pageOf(
        await sessionOf({ line_items: [{ price_id: team }, { price_id: seat, quantity: "5" }] })
      )
      expect(html).toContain('<h1 id="product">Team plan</h1>')
      expect(html).not.toContain('id="price-name"')
      const text = html.replace(/<[^>]+>/g, " ")
      expect(text.split("Team monthly").length - 1).toBe(1)
      expect(text.split("Seat ").length - 1).toBe(1)
      expect(html).toMatch(
        /<li class="line" id="line-0"><span class="line-name">Team monthly<\/span> <span class="line-amount">\$49\.00<\/span><\/li>/
      )
    })

    it("speaks the session's locale, else the browser's language, else English", async () => {
      const price = await priceOf({
        price_plan: { billing_cycle_unit: "month", billing_cycle_count: 3, base_price_val: "1234.50" }
      })
      const german = await pageOf(await sessionOf({ line_items: [{ price_id: price }], locale: "de-DE" }))
      expect(german.html).toContain('<html lang="de-DE" dir="ltr">')
      expect(german.html).toContain("Heute fällig")
      expect(german.html).toContain("1.234,50")
      expect(german.html).toContain("Abrechnung alle 3 Monate")
      const plain = await sessionOf({ line_items: [{ price_id: price }] })
      const french = await pageOf(plain, { "accept-language": "fr-CH, de;q=0.8" })
      expect(french.html).toContain('<html lang="fr-FR" dir="ltr">')
      expect(french.html).toContain("À payer aujourd&#39;hui")
      expect(french.html).toContain("1\u202f234,50")
      expect(french.html).toContain("tous les 3 mois")
      // the browser's preferences by q-value, each exactly or by its primary subtag, else English
      const weighted = await pageOf(plain, { "accept-language": "xx;q=1, de;q=0.2, pt-BR;q=0.5, ja;q=0" })
      expect(weighted.html).toContain('<html lang="pt-PT" dir="ltr">')
      const other = await pageOf(plain, { "accept-language": "sv-SE, fi;q=0.5" })
      expect(other.html).toContain('<html lang="en-US" dir="ltr">')
      expect(other.html).toContain("$1,234.50")
      // the session's locale wins over the browser
      const japanese = await pageOf(await sessionOf({ line_items: [{ price_id: price }], locale: "ja-JP" }), {
        "accept-language": "de"
      })
      expect(japanese.html).toContain('<html lang="ja-JP" dir="ltr">')
      expect(japanese.html).toContain("本日のお支払い")
      expect(japanese.html).toContain("3か月ごと")
      const arabic = await pageOf(await sessionOf({ line_items: [{ price_id: price }], locale: "ar-SA" }))
      expect(arabic.html).toContain('<html lang="ar-SA" dir="rtl">')
      expect(arabic.html).toContain("المستحق اليوم")
      expect(arabic.html).toContain("١٬٢٣٤٫٥٠")
    })

    it("the quantity stepper moves inside quantity_min and quantity_max, re-prices, and the payment charges what it showed", async () => {
      const price = await priceOf()
      const id = await sessionOf({
        line_items: [{ price_id: price, quantity: "1", quantity_editable: true, quantity_min: "1", quantity_max: "3" }],
        return_url: "https://shop.example/thanks"
      })
      const first = await pageOf(id)
      // at the minimum, "−" is disabled; the stepper posts relative to the page
      expect(first.html).toContain(`action="${id}/quantity"`)
      expect(first.html).toMatch(/value="0" aria-label="Decrease quantity" class="step" disabled/)
      const up = await post(`/checkout/${id}/quantity`, { quantity: "2" })
      expect(up.status).toBe(303)
      expect(up.headers.get("location")).toBe(`../${id}`)
      const second = await pageOf(id)
      expect(second.html).toContain('<output aria-labelledby="qty-label" id="quantity">2</output>')
      expect(second.html).toContain('<span class="amount" id="due">$60.00</span>')
      // outside the bounds: refused, nothing changed
      const over = await post(`/checkout/${id}/quantity`, { quantity: "4" })
      expect(over.status).toBe(400)
      expect(await over.text()).toContain("must be at most 3")
      const garbage = await post(`/checkout/${id}/quantity`, { quantity: "2.5" })
      expect(garbage.status).toBe(400)
      const session = await api.call("GET", `/api/v1/session/${id}`, key)
      expect((session.body as any).data.session.line_items[0].quantity).toBe("2")
      expect((session.body as any).data.session.amount).toBe("60.00")
      const paid = await post(`/checkout/${id}/pay`, { card_number: "4242424242424242", ...card })
      expect(paid.status).toBe(303)
      const trades = (await api.call("GET", "/api/v1/trades?limit=100", key)).body as any
      const trade = trades.data.list.find((t: any) => t.session_id === id)
      expect(trade.amount).toBe("60.00")
      expect(trade.line_items[0].quantity).toBe("2")
      const paidSession = ((await api.call("GET", `/api/v1/session/${id}`, key)).body as any).data.session
      const subscription = await api.call("GET", `/api/v1/subscription/${paidSession.subscription_id}`, key)
      expect(subscription.status).toBe(200)
      expect((subscription.body as any).data.subscription.quantity).toBe("2")
      // after paying, the stepper changes nothing
      const late = await post(`/checkout/${id}/quantity`, { quantity: "3" })
      expect([303, 200]).toContain(late.status)
      expect(((await api.call("GET", `/api/v1/session/${id}`, key)).body as any).data.session.amount).toBe("60.00")
    })

    it("the email and name typed on the page are kept on the customer where it has none, never over the merchant's", async () => {
      const price = await priceOf()
      const customerOf = async (id: string) => {
        const session = ((await api.call("GET", `/api/v1/session/${id}`, key)).body as any).data.session
        return ((await api.call("GET", `/api/v1/front/customer/${session.customer_id}`, key)).body as any).data.customer
      }
      const payWith = async (id: string, fields: Record<string, string>) => {
        const paid = await post(`/checkout/${id}/pay`, { card_number: "4242424242424242", ...card, ...fields })
        expect(paid.status, await paid.text()).toBe(200)
        const session = ((await api.call("GET", `/api/v1/session/${id}`, key)).body as any).data.session
        expect(session.status).toBe("complete")
      }
      // a payer id the merchant gave no email nor name: both kept
      const bare = await sessionOf({ line_items: [{ price_id: price }] })
      await payWith(bare, { email: " ada@example.com ", name: "Ada Lovelace" })
      expect(await customerOf(bare)).toMatchObject({ email: "ada@example.com", name: "Ada Lovelace" })
      // the merchant's own email and name stay
      const made = await api.call("POST", "/api/v1/front/customer/create", key, {
        email: "billing@acme.example",
        name: "Acme Ltd"
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const customerId = (made.body as any).data.customer_id as string
      const r = await api.call("POST", "/api/v1/session", key, {
        customer_id: customerId,
        line_items: [{ price_id: price }]
      })
      const known = (r.body as any).data.session_id as string
      await payWith(known, { email: "someone@else.example", name: "Someone Else" })
      expect(await customerOf(known)).toMatchObject({ email: "billing@acme.example", name: "Acme Ltd" })
      // what is no email is not kept, and the payment goes through
      const odd = await sessionOf({ line_items: [{ price_id: price }] })
      await payWith(odd, { email: "not an email" })
      expect(await customerOf(odd)).toMatchObject({ email: null, name: null })
    })

    it("a declined card writes nothing on the customer: the typed email and name are kept as the payment succeeds", async () => {
      const price = await priceOf()
      const customerOf = async (id: string) => {
        const session = ((await api.call("GET", `/api/v1/session/${id}`, key)).body as any).data.session
        return ((await api.call("GET", `/api/v1/front/customer/${session.customer_id}`, key)).body as any).data.customer
      }
      const id = await sessionOf({ line_items: [{ price_id: price }] })
      const before = await customerOf(id)
      expect([before.email, before.name]).toEqual([null, null])
      const typed = { email: "ada@example.com", name: "Ada Lovelace" }
      const declined = await post(`/checkout/${id}/pay`, { card_number: "4000000000000002", ...card, ...typed })
      expect(declined.status).not.toBe(500)
      expect(await customerOf(id)).toEqual(before)
      // the card that pays: now they are kept
      const paid = await post(`/checkout/${id}/pay`, { card_number: "4242424242424242", ...card, ...typed })
      expect(paid.status, await paid.text()).toBe(200)
      expect(await customerOf(id)).toMatchObject(typed)
    })

    it("a quantity the merchant did not make editable cannot be changed", async () => {
      const id = await sessionOf({ line_items: [{ price_id: await priceOf(), quantity: "2" }] })
      const page = await pageOf(id)
      expect(page.html).not.toContain("/quantity")
      const refused = await post(`/checkout/${id}/quantity`, { quantity: "1" })
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain("cannot be changed")
      expect(((await api.call("GET", `/api/v1/session/${id}`, key)).body as any).data.session.amount).toBe("60.00")
    })

    it("a discount code entered on the page shows the new total before paying, and the payment charges it", async () => {
      const price = await priceOf()
      const code = `PAGE${Math.floor(Math.random() * 1e6)}`
      await api.call("POST", "/api/v1/discounts", key, {
        name: "Page",
        code,
        discount_type: "percentage",
        percent_off: 10
      })
      const id = await sessionOf({
        line_items: [{ price_id: price }],
        allow_discount_codes: true,
        return_url: "https://shop.example/thanks"
      })
      const first = await pageOf(id)
      expect(first.html).toContain(`action="${id}/discount"`)
      const wrong = await post(`/checkout/${id}/discount`, { discount_code: "NOPE" })
      expect(wrong.status).toBe(400)
      expect(await wrong.text()).toContain("no such discount code")
      // typed in lower case: taken as the code it is
      const applied = await post(`/checkout/${id}/discount`, { discount_code: code.toLowerCase() })
      expect([applied.status, applied.headers.get("location")]).toEqual([303, `../${id}`])
      const after = await pageOf(id)
      expect(after.html).toContain(`<p id="discount">Discount applied: <strong>${code}</strong></p>`)
      expect(after.html).toContain('<span class="amount" id="due">$27.00</span>')
      // the discount lasts one cycle (duration once): the next one is the full price
      expect(after.html).toContain('<p id="then">Then $30.00 every month</p>')
      expect(after.html).not.toContain(`action="${id}/discount"`)
      expect((await post(`/checkout/${id}/pay`, { card_number: "4242424242424242", ...card })).status).toBe(303)
      const trades = ((await api.call("GET", "/api/v1/trades?limit=100", key)).body as any).data.list
      expect(trades.find((t: any) => t.session_id === id).amount).toBe("27.00")
      // a session that does not offer the field takes no code
      const plain = await sessionOf({ line_items: [{ price_id: price }] })
      expect((await pageOf(plain)).html).not.toContain("/discount")
      expect((await post(`/checkout/${plain}/discount`, { discount_code: code })).status).toBe(400)
    })

    it("shows the tax in what is due, in the payer's language, and charges what it showed", async () => {
      const k = (await api.merchant()).api_key
      await api.call("POST", "/api/v1/tax_rates", k, { name: "MwSt", percentage: "19", country: "DE", inclusive: true })
      const price = (await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "119.00" } }))
        .priceId
      const r = await api.call("POST", "/api/v1/session", k, {
        payer_id: "de-1",
        line_items: [{ price_id: price }],
        billing_address: { country_code: "DE" },
        locale: "de-DE",
        return_url: "https://shop.example/danke"
      })
      const id = (r.body as any).data.session_id as string
      const page = await pageOf(id)
      expect(page.html).toMatch(/<span class="amount" id="due">119,00\s\$<\/span>/)
      expect(page.html).toMatch(/<p id="tax">Enthaltene Steuer: 19,00\s\$<\/p>/)
      expect((await post(`/checkout/${id}/pay`, { card_number: "4242424242424242", ...card })).status).toBe(303)
      const trade = ((await api.call("GET", "/api/v1/trades?limit=1", k)).body as any).data.list[0]
      expect([trade.amount, trade.tax_amount]).toEqual(["119.00", "19.00"])
      // no tax where none applies: no line
      const none = await sessionOf({ line_items: [{ price_id: await priceOf() }] })
      expect((await pageOf(none)).html).not.toContain('id="tax"')
    })
  })
}
