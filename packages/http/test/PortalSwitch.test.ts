import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import * as I18n from "../src/internal/i18n/index.js"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

for (const [name, storage] of backends()) {
  describe(`portal settings, upcoming invoice and plan switching (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const data = (r: TestClient.Answer) => (r.body as any).data
    /** Basic (30.00 a month) and Pro (50.00 a month) of one product, and a one-time price. */
    const plans = async (k: string) => {
      const basic = await api.priceOf(k, {}, { product: "Team", price: "Basic" })
      const pro = await api.call("POST", "/api/v1/prices", k, {
        name: "Pro",
        product_id: basic.productId,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" }
      })
      const yearly = await api.call("POST", "/api/v1/prices", k, {
        name: "Yearly",
        product_id: basic.productId,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "year", base_price_val: "300.00" }
      })
      const once = await api.call("POST", "/api/v1/prices", k, {
        name: "Setup",
        product_id: basic.productId,
        currency: "USD",
        billing_type: "one_time",
        price_type: "flat_price",
        price_val: "99.00"
      })
      expect([pro.status, yearly.status, once.status], JSON.stringify([pro.body, once.body])).toEqual([200, 200, 200])
      return {
        basic: basic.priceId,
        pro: data(pro).price_id as string,
        yearly: data(yearly).price_id as string,
        once: data(once).price_id as string
      }
    }
    const subscribe = async (k: string, priceId: string, payer: string, extra: Record<string, unknown> = {}) => {
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: payer,
        line_items: [{ price_id: priceId }],
        ...extra
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = data(s).session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const session = data(await api.call("GET", `/api/v1/session/${id}`, k)).session
      return { customerId: session.customer_id as string, subscriptionId: session.subscription_id as string }
    }
    const settings = (k: string, body: Record<string, unknown>) => api.call("POST", "/api/v1/portal_settings", k, body)
    const portal = async (k: string, body: Record<string, unknown>) => {
      const r = await api.call("POST", "/api/v1/customer-portal/auth", k, body)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return new URL(data(r).portal_session.url).pathname
    }
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const r = await api.handler(new Request(`http://localhost${url}`, { headers }))
      return { status: r.status, html: await r.text() }
    }
    const post = (url: string, fields: Record<string, string> = {}) =>
      api.handler(
        new Request(`http://localhost${url}`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(fields)
        })
      )
    const subOf = async (k: string, sub: string) =>
      data(await api.call("GET", `/api/v1/subscription/${sub}`, k)).subscription
    const invoicesOf = async (k: string, sub: string) =>
      data(await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).list as Array<any>
    const upcoming = async (k: string, sub: string) =>
      data(await api.call("GET", `/api/v1/subscription/${sub}/upcoming_invoice`, k)).upcoming_invoice
    const advance = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })

    it("portal settings: defaults, partial updates, checked prices, reset", async () => {
      const k = await fresh()
      const p = await plans(k)
      expect(data(await api.call("GET", "/api/v1/portal_settings", k))).toEqual({
        payment_method_update: true,
        cancel: true,
        invoice_history: true,
        switch_prices: [],
        adjust_quantities: []
      })
      const set = await settings(k, { cancel: false, switch_prices: [p.basic, p.pro] })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      expect(data(set)).toEqual({
        payment_method_update: true,
        cancel: false,
        invoice_history: true,
        switch_prices: [p.basic, p.pro],
        adjust_quantities: []
      })
      // a partial update keeps the rest
      expect(data(await settings(k, { invoice_history: false }))).toMatchObject({
        cancel: false,
        invoice_history: false,
        switch_prices: [p.basic, p.pro]
      })
      const other = await fresh()
      const foreign = await plans(other)
      // a price that does not exist here (another merchant's included) is 404; one that cannot be offered, 400
      for (const [body, param, status, code] of [
        [{ switch_prices: ["pri_missing"] }, "switch_prices[0]", 404, "resource_not_found"],
        [{ switch_prices: [p.basic, foreign.pro] }, "switch_prices[1]", 404, "resource_not_found"],
        [{ switch_prices: [p.once] }, "switch_prices[0]", 400, "InvalidParameter"],
        [{ switch_prices: [p.basic, p.basic] }, "switch_prices[1]", 400, "InvalidParameter"],
        [{ switch_prices: Array.from({ length: 21 }, () => p.basic) }, "switch_prices", 400, "InvalidParameter"]
      ] as const)
        expect([param, ...refusal(await settings(k, body))]).toEqual([param, status, code, param])
      // a wrong type is refused by the body's schema, and nothing changed
      expect((await settings(k, { cancel: "no" })).status).toBe(400)
      expect(data(await api.call("GET", "/api/v1/portal_settings", k)).switch_prices).toEqual([p.basic, p.pro])
      // another merchant's settings are its own
      expect(data(await api.call("GET", "/api/v1/portal_settings", other)).cancel).toBe(true)
      expect(data(await settings(k, { reset: true }))).toEqual({
        payment_method_update: true,
        cancel: true,
        invoice_history: true,
        switch_prices: [],
        adjust_quantities: []
      })
      expect((await api.call("GET", "/api/v1/portal_settings", null)).status).toBe(401)
    })

    it("turned-off actions are not shown and refused with 403; a turned-off flow is refused at creation", async () => {
      const k = await fresh()
      const p = await plans(k)
      const ada = await subscribe(k, p.basic, "ada")
      expect(
        data(await settings(k, { cancel: false, invoice_history: false, payment_method_update: false })).cancel
      ).toBe(false)
      expect(
        refusal(
          await api.call("POST", "/api/v1/customer-portal/auth", k, {
            customer_id: ada.customerId,
            flow: "payment_method_update"
          })
        )
      ).toEqual([400, "InvalidParameter", "flow"])
      const base = await portal(k, { customer_id: ada.customerId })
      const { html } = await get(base)
      expect(html).not.toContain("Cancel at the end of the period")
      expect(html).not.toContain("Update payment method")
      expect(html).not.toContain("Change plan")
      expect(html).not.toContain('id="invoices"')
      for (const action of ["cancel", "revoke", "payment_method", "switch"]) {
        const r = await post(`${base}/subscription/${ada.subscriptionId}/${action}`, {
          card_number: "4242424242424242",
          exp_month: "12",
          exp_year: "2031",
          cvc: "123",
          price_id: p.pro
        })
        expect([action, r.status]).toEqual([action, 403])
      }
      expect((await get(`${base}/subscription/${ada.subscriptionId}/switch?price_id=${p.pro}`)).status).toBe(403)
      const sub = await subOf(k, ada.subscriptionId)
      expect([sub.cancel_at_period_end, sub.price_id]).toEqual([false, p.basic])
    })

    it("the upcoming invoice is what the renewal bills: discount, tax, scheduled price; none when it will not renew", async () => {
      const k = await fresh()
      const p = await plans(k)
      const rate = await api.call("POST", "/api/v1/tax_rates", k, {
        name: "Sales tax",
        percentage: "10",
        country: "US"
      })
      expect(rate.status, JSON.stringify(rate.body)).toBe(200)
      const ada = await subscribe(k, p.basic, "ada", { billing_address: { country_code: "US", province_code: "NY" } })
      const disc = await api.call("POST", "/api/v1/discounts", k, {
        name: "Tenth",
        discount_type: "percentage",
        percent_off: 10,
        duration: "forever"
      })
      expect(disc.status, JSON.stringify(disc.body)).toBe(200)
      expect(
        (
          await api.call("POST", `/api/v1/subscription/${ada.subscriptionId}/discount`, k, {
            discount_id: data(disc).discount.discount_id
          })
        ).status
      ).toBe(200)
      // the next cycle moves to Pro at the period's end
      expect(
        (
          await api.call("POST", `/api/v1/subscription/${ada.subscriptionId}`, k, {
            price_id: p.pro,
            effective_type: "end_of_period"
          })
        ).status
      ).toBe(200)
      const next = await upcoming(k, ada.subscriptionId)
      expect(next).toMatchObject({
        subscription_id: ada.subscriptionId,
        price_id: p.pro,
        invoice_type: "renewal",
        cycle_index: 1,
        invoice_date: "2026-02-01T00:00:00Z",
        currency: "USD",
        subtotal: "50.00",
        discount_amount: "5.00",
        tax_amount: "4.50",
        credit_applied: "0.00",
        amount: "49.50"
      })
      expect(next.lines.map((l: any) => [l.kind, l.amount, l.period_start, l.period_end])).toEqual([
        ["subscription", "50.00", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"],
        ["discount", "-5.00", null, null]
      ])
      expect(next.tax_lines.map((t: any) => [t.percentage, t.taxable_amount, t.amount])).toEqual([
        ["10", "45.00", "4.50"]
      ])
      // nothing was written: the renewal then bills exactly it
      expect((await invoicesOf(k, ada.subscriptionId)).length).toBe(1)
      await advance(k, "2026-02-01T00:00:00Z")
      const renewal = (await invoicesOf(k, ada.subscriptionId)).find((i) => i.invoice_type === "renewal")
      expect(renewal).toMatchObject({
        amount: next.amount,
        subtotal: next.subtotal,
        tax_amount: next.tax_amount,
        lines: next.lines,
        tax_lines: next.tax_lines
      })
      // canceling at the period's end: no upcoming invoice
      await api.call("POST", `/api/v1/subscription/${ada.subscriptionId}/cancel`, k, { cancel_type: "end_of_period" })
      expect(await upcoming(k, ada.subscriptionId)).toBeNull()
      // another merchant's subscription is not found
      expect(
        (await api.call("GET", `/api/v1/subscription/${ada.subscriptionId}/upcoming_invoice`, await fresh())).status
      ).toBe(404)
    })

    it("switching plan in the portal charges exactly the amount it showed, tax included", async () => {
      const k = await fresh()
      const p = await plans(k)
      await api.call("POST", "/api/v1/tax_rates", k, { name: "Sales tax", percentage: "10", country: "US" })
      const ada = await subscribe(k, p.basic, "ada", { billing_address: { country_code: "US" } })
      const bob = await subscribe(k, p.basic, "bob")
      expect((await settings(k, { switch_prices: [p.basic, p.pro, p.yearly] })).status).toBe(200)
      await advance(k, "2026-01-16T12:00:00Z")
      const base = await portal(k, { customer_id: ada.customerId })
      const overview = await get(base)
      expect(overview.html).toContain("Change plan")
      // Pro is offered, and Yearly (another interval: a switch the engine takes now)
      expect(overview.html).toContain(`<option value="${p.pro}">Pro — $50.00 every month</option>`)
      expect(overview.html).toContain(`<option value="${p.yearly}">`)
      expect(overview.html).toContain("next invoice on Feb 1, 2026: $33.00")
      const preview = await get(`${base}/subscription/${ada.subscriptionId}/switch?price_id=${p.pro}`)
      expect(preview.status, preview.html).toBe(200)
      const shown = /id="due-now">\$([0-9.]+)</.exec(preview.html)?.[1]
      const quoteId = /name="quote_id" value="([^"]+)"/.exec(preview.html)?.[1]
      // half of January left: 50 − 30 over the remaining 15.5 of 31 days = 10.00, plus 10 % tax
      expect(shown).toBe("11.00")
      expect(preview.html).toContain("Unused time on Basic")
      expect(preview.html).toContain("Remaining time on Pro")
      const events = async () =>
        (
          data(await api.call("GET", `/api/v2/webhook/events?business_ids=${ada.subscriptionId}&limit=100`, k))
            .list as Array<any>
        ).map((e) => e.event_type)
      const before = await events()
      // the quote commits once; the shown amount is the amount charged
      const done = await post(`${base}/subscription/${ada.subscriptionId}/switch`, {
        price_id: p.pro,
        quote_id: quoteId!
      })
      expect(done.status).toBe(303)
      const sub = await subOf(k, ada.subscriptionId)
      expect([sub.price_id, sub.status]).toEqual([p.pro, "active"])
      const upgrade = (await invoicesOf(k, ada.subscriptionId)).find((i) => i.invoice_type === "upgrade")
      expect([upgrade.amount, upgrade.tax_amount, upgrade.biz_status]).toEqual([shown, "1.00", "success"])
      const trade = data(await api.call("GET", `/api/v1/trade/${upgrade.trade_id}`, k)).trade
      expect([trade.amount, trade.trade_status]).toEqual([shown, "succeeded"])
      expect((await events()).filter((e) => !before.includes(e))).toContain("v2.subscription.price_changed")
      // the same quote again: it no longer matches (the subscription moved); nothing more is charged
      const again = await post(`${base}/subscription/${ada.subscriptionId}/switch`, {
        price_id: p.pro,
        quote_id: quoteId!
      })
      expect(again.status).toBe(400)
      expect((await invoicesOf(k, ada.subscriptionId)).filter((i) => i.invoice_type === "upgrade").length).toBe(1)
      // Pro → Basic now: a refund quote (the unused Pro time back, with its tax)
      const down = await get(`${base}/subscription/${ada.subscriptionId}/switch?price_id=${p.basic}`)
      expect(down.html).toContain("Refunded to your card")
      // Bob's subscription through Ada's link; a price not listed; a one-time price
      for (const [sub2, price, status] of [
        [bob.subscriptionId, p.pro, 404],
        [ada.subscriptionId, p.once, 400]
      ] as const) {
        expect([sub2, price, (await get(`${base}/subscription/${sub2}/switch?price_id=${price}`)).status]).toEqual([
          sub2,
          price,
          status
        ])
        expect([
          sub2,
          price,
          (await post(`${base}/subscription/${sub2}/switch`, { price_id: price, quote_id: "quo_x" })).status
        ]).toEqual([sub2, price, status])
      }
      expect((await subOf(k, bob.subscriptionId)).price_id).toBe(p.basic)
    })

    it("month → year in the portal: the page says the credit, the new period's charge, what is due now and when the period starts", async () => {
      const k = await fresh()
      const p = await plans(k)
      const ada = await subscribe(k, p.basic, "ada")
      expect((await settings(k, { switch_prices: [p.basic, p.yearly] })).status).toBe(200)
      await advance(k, "2026-01-16T00:00:00Z")
      const base = await portal(k, { customer_id: ada.customerId })
      expect((await get(base)).html).toContain(`<option value="${p.yearly}">Yearly — $300.00 every year</option>`)
      const url = `${base}/subscription/${ada.subscriptionId}/switch?price_id=${p.yearly}`
      const preview = await get(url)
      expect(preview.status, preview.html).toBe(200)
      // 16 of January's 31 days unused: 30.00 × 16/31 = 15.48 credited, the year charged now
      expect(preview.html).toContain("Unused time on Basic")
      expect(preview.html).toContain("-$15.48")
      expect(preview.html).toContain("Yearly, new period from Jan 16, 2026")
      expect(preview.html).toContain("$300.00")
      expect(/id="due-now">\$([0-9.]+)</.exec(preview.html)?.[1]).toBe("284.52")
      expect(preview.html).toContain('<p id="new-period">Your new billing period starts on Jan 16, 2026.</p>')
      expect(preview.html).not.toContain("Nothing is charged now")
      // every language the portal speaks says it, none says "nothing now"
      for (const language of I18n.LANGUAGES) {
        const w = I18n.messagesOf(language).portal
        const page = (
          await get(
            `${await portal(k, { customer_id: ada.customerId, locale: language })}/subscription/${ada.subscriptionId}/switch?price_id=${p.yearly}`
          )
        ).html
        const starts = I18n.date(language, Date.parse("2026-01-16T00:00:00Z"))
        expect([language, page.includes(w.newPeriodStarts(starts))]).toEqual([language, true])
        expect([language, page.includes(w.dueNow)]).toEqual([language, true])
        expect([language, page.includes(w.nothingNow)]).toEqual([language, false])
      }
      // the quote commits as shown
      const quoteId = /name="quote_id" value="([^"]+)"/.exec(preview.html)![1]!
      expect(
        (await post(`${base}/subscription/${ada.subscriptionId}/switch`, { price_id: p.yearly, quote_id: quoteId }))
          .status
      ).toBe(303)
      const sub = await subOf(k, ada.subscriptionId)
      expect([sub.price_id, sub.billing_cycle_unit, sub.current_period_start]).toEqual([
        p.yearly,
        "year",
        "2026-01-16T00:00:00Z"
      ])
      const renewal = (await invoicesOf(k, ada.subscriptionId)).find((i) => i.invoice_type === "renewal")
      expect([renewal.amount, renewal.biz_status]).toEqual(["284.52", "success"])
    })

    it("a quote that went stale shows the new amount instead of charging the old one", async () => {
      const k = await fresh()
      const p = await plans(k)
      const ada = await subscribe(k, p.basic, "ada")
      await settings(k, { switch_prices: [p.basic, p.pro] })
      await advance(k, "2026-01-10T00:00:00Z")
      const base = await portal(k, { customer_id: ada.customerId })
      const preview = await get(`${base}/subscription/${ada.subscriptionId}/switch?price_id=${p.pro}`)
      const quoteId = /name="quote_id" value="([^"]+)"/.exec(preview.html)![1]!
      // twenty minutes later the quote has expired (a quote lives 15 minutes)
      await advance(k, "2026-01-10T00:20:00Z")
      const late = await post(`${base}/subscription/${ada.subscriptionId}/switch`, {
        price_id: p.pro,
        quote_id: quoteId
      })
      expect(late.status).toBe(409)
      const html = await late.text()
      expect(html).toContain("Something changed since this amount was shown")
      const fresh2 = /name="quote_id" value="([^"]+)"/.exec(html)![1]!
      expect(fresh2).not.toBe(quoteId)
      expect((await subOf(k, ada.subscriptionId)).price_id).toBe(p.basic)
      expect((await invoicesOf(k, ada.subscriptionId)).length).toBe(1)
      // the new quote commits
      expect(
        (await post(`${base}/subscription/${ada.subscriptionId}/switch`, { price_id: p.pro, quote_id: fresh2 })).status
      ).toBe(303)
      expect((await subOf(k, ada.subscriptionId)).price_id).toBe(p.pro)
    })

    it("speaks German and French: the session's locale, else the browser's language", async () => {
      const k = await fresh()
      const p = await plans(k)
      const ada = await subscribe(k, p.basic, "ada")
      const de = await portal(k, { customer_id: ada.customerId, locale: "de-DE" })
      const german = await get(de, { "accept-language": "fr" })
      expect(german.html).toContain('<html lang="de-DE" dir="ltr">')
      expect(german.html).toContain("Ihre Abrechnung")
      expect(german.html).toContain("nächste Rechnung am 01.02.2026: 30,00")
      expect(german.html).toContain("Zum Ende des Zeitraums kündigen")
      const plain = await portal(k, { customer_id: ada.customerId })
      const french = await get(plain, { "accept-language": "fr-FR,fr;q=0.9" })
      expect(french.html).toContain("Votre facturation")
      expect(french.html).toContain("Résilier à la fin de la période")
      expect((await get(`${plain}x`, { "accept-language": "de" })).html).toContain("Dieser Link ist abgelaufen")
      // every one of the sixteen: Korean from the browser, Arabic right to left from the session
      const korean = await get(plain, { "accept-language": "ko-KR,ko;q=0.9,en;q=0.5" })
      expect(korean.html).toContain('<html lang="ko-KR" dir="ltr">')
      expect(korean.html).toContain("기간 종료 시 취소")
      const ar = await portal(k, { customer_id: ada.customerId, locale: "ar-SA" })
      const arabic = await get(ar)
      expect(arabic.html).toContain('<html lang="ar-SA" dir="rtl">')
      expect(arabic.html).toContain("الفوترة الخاصة بك")
      expect(
        refusal(
          await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: ada.customerId, locale: "xx" })
        )
      ).toEqual([400, "InvalidParameter", "locale"])
    })
  })
}
