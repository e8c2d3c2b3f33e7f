import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

// One-time line items charged with the first invoice, and a billing anchor over several items
// (issue 33, items 1 and 5), over HTTP on PGlite (and PostgreSQL when configured).

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`first invoice lines (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async (frozen = "2026-01-01T00:00:00Z") => {
      const k = (await api.merchant({ frozen })).api_key
      const set = await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: "per_day" })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      return k
    }
    const monthly = (k: string, product: string, price: string, amount: string, fields = {}) =>
      api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: amount }, ...fields },
        { product, price }
      )
    const oneTime = async (k: string, name: string, amount: string, currency = "USD") => {
      const product = ((await api.call("POST", "/api/v1/products", k, { product_name: name })).body as any).data
      const price = await api.call("POST", "/api/v1/prices", k, {
        name,
        product_id: product.product_id,
        currency,
        billing_type: "one_time",
        price_type: "flat_price",
        price_val: amount
      })
      expect(price.status, JSON.stringify(price.body)).toBe(200)
      return (price.body as any).data.price_id as string
    }
    const session = (k: string, body: Record<string, unknown>) =>
      api.call("POST", "/api/v1/session", k, { payer_id: `p-${Math.random()}`, ...body })
    const sessionOf = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
    const opened = async (k: string, body: Record<string, unknown>) => {
      const s = await session(k, body)
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      return sessionOf(k, (s.body as any).data.session_id)
    }
    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const page = async (sessionId: string, language?: string) =>
      String(
        (
          await api.call(
            "GET",
            `/checkout/${sessionId}`,
            null,
            undefined,
            language ? { "accept-language": language } : undefined
          )
        ).body
      )
    const invoicesOf = async (k: string, subscriptionId: string) =>
      ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
        .filter((i: any) => i.subscription_id === subscriptionId)
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index || a.created_at.localeCompare(b.created_at))
    const linesOf = (invoice: any) =>
      invoice.lines.map((l: any) => [l.kind, l.description, l.quantity, l.amount, l.period_start])
    const advance = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })
    const trade = async (k: string, tradeId: string) =>
      ((await api.call("GET", `/api/v1/trade/${tradeId}`, k)).body as any).data.trade

    it("a setup fee beside two items: on the first invoice (discounted and taxed with it), the trade and the page; never on a renewal; a refund gives back at most what was paid", async () => {
      const k = await fresh()
      const team = await monthly(k, "Team", "Team plan", "49.00")
      const seat = await monthly(k, "Seats", "Seat", "12.00")
      const setup = await oneTime(k, "Setup fee", "199.00")
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
      // the one-time line first: the base item is the first recurring line
      const s = await opened(k, {
        line_items: [
          { price_id: setup, quantity_editable: true, quantity_max: "2" },
          { price_id: team.priceId },
          { price_id: seat.priceId, quantity: "2" }
        ],
        discount_code: "TEN",
        billing_address: { country_code: "GB", city: "London" }
      })
      // 199.00 + 49.00 + 24.00 = 272.00, less 10 % (27.20) = 244.80, 20 % VAT 48.96
      expect([s.amount, s.tax_amount, s.payment_mode]).toEqual(["293.76", "48.96", "subscription"])
      expect(s.line_items.map((l: any) => [l.price_id, l.quantity])).toEqual([
        [setup, "1"],
        [team.priceId, "1"],
        [seat.priceId, "2"]
      ])
      const html = await page(s.session_id)
      expect(html.match(/<li class="line/g)).toHaveLength(3)
      expect(html).toMatch(
        /<li class="line one-time" id="line-0"><span class="line-name">Setup fee<\/span> <span class="line-once">\(one time\)<\/span>/
      )
      // then each month: 73.00 less 10 % = 65.70, with VAT 78.84 — the setup fee is not in it
      expect(html).toContain("Then $78.84")
      expect(await page(s.session_id, "de-DE")).toContain("(einmalig)")
      expect(await page(s.session_id, "ja-JP")).toContain("(1回のみ)")
      // the one-time line's quantity within its bounds
      const setQuantity = (quantity: string) =>
        api.handler(
          new Request(`http://localhost/checkout/${s.session_id}/quantity`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ line: "0", quantity }).toString(),
            redirect: "manual"
          })
        )
      expect((await setQuantity("3")).status).toBe(400)
      expect((await setQuantity("2")).status).toBe(303)
      // 398.00 + 73.00 = 471.00, less 47.10 = 423.90, VAT 84.78
      expect((await sessionOf(k, s.session_id)).amount).toBe("508.68")
      expect((await setQuantity("1")).status).toBe(303)
      expect((await sessionOf(k, s.session_id)).amount).toBe("293.76")

      expect((await pay(s.session_id)).status).toBe(200)
      const paid = await sessionOf(k, s.session_id)
      const sub = ((await api.call("GET", `/api/v1/subscription/${paid.subscription_id}`, k)).body as any).data
        .subscription
      expect([sub.price_id, sub.items.map((i: any) => i.price_id)]).toEqual([
        team.priceId,
        [team.priceId, seat.priceId]
      ])
      const t = await trade(k, sub.source_trade_id)
      expect([t.amount, t.tax_amount, t.order_type]).toEqual(["293.76", "48.96", "initial"])
      expect(t.line_items.map((l: any) => [l.price_id, l.quantity, l.price, l.cycle_unit])).toEqual([
        [team.priceId, "1", "49.00", "month"],
        [seat.priceId, "2", "24.00", "month"],
        [setup, "1", "199.00", ""]
      ])
      const [first] = await invoicesOf(k, sub.id)
      expect([first.invoice_type, first.subtotal, first.tax_amount, first.amount]).toEqual([
        "initial",
        "272.00",
        "48.96",
        "293.76"
      ])
      expect(linesOf(first)).toEqual([
        ["subscription", "Team plan × 1", "1", "49.00", "2026-01-01T00:00:00Z"],
        ["subscription", "Seat × 2", "2", "24.00", "2026-01-01T00:00:00Z"],
        ["one_time", "Setup fee × 1 (one time)", "1", "199.00", null],
        ["discount", expect.any(String), "1", "-27.20", null]
      ])
      // the renewal bills the items only
      await advance(k, "2026-02-01T00:00:00Z")
      const all = await invoicesOf(k, sub.id)
      expect(all.map((i: any) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
        ["initial", 0, "293.76"],
        ["renewal", 1, "78.84"]
      ])
      expect(all[1].lines.some((l: any) => l.kind === "one_time")).toBe(false)
      // a refund of the first payment gives back at most what it collected, setup fee included
      expect(refusal(await api.call("POST", "/api/v1/refund", k, { trade_id: t.trade_id, amount: "293.77" }))).toEqual([
        400,
        "InvalidParameter",
        "amount"
      ])
      const full = await api.call("POST", "/api/v1/refund", k, { trade_id: t.trade_id })
      expect(full.status, JSON.stringify(full.body)).toBe(200)
      expect((await trade(k, t.trade_id)).total_refunded_amount).toBe("293.76")
      expect(refusal(await api.call("POST", "/api/v1/refund", k, { trade_id: t.trade_id, amount: "0.01" }))[0]).toBe(
        400
      )
    })

    it("with a trial, the one-time line is charged at once on the trial's invoice; the first paid cycle bills the item alone", async () => {
      const k = await fresh()
      const trial = await monthly(k, "Pro", "Pro monthly", "30.00", {
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
      const setup = await oneTime(k, "Onboarding", "99.00")
      const s = await opened(k, { line_items: [{ price_id: trial.priceId }, { price_id: setup }] })
      expect(s.amount).toBe("99.00")
      expect((await pay(s.session_id)).status).toBe(200)
      const subId = (await sessionOf(k, s.session_id)).subscription_id as string
      const [first] = await invoicesOf(k, subId)
      expect([first.invoice_type, first.amount]).toEqual(["trial", "99.00"])
      expect(linesOf(first).map((l: any) => [l[0], l[3]])).toEqual([
        ["trial", "0.00"],
        ["one_time", "99.00"]
      ])
      await advance(k, "2026-01-09T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => [i.cycle_index, i.amount])).toEqual([
        [0, "99.00"],
        [1, "30.00"]
      ])
      expect(all[1].lines.map((l: any) => l.kind)).toEqual(["subscription"])
    })

    it("one-time prices alone: one line stays the seed's one-time payment; several, or one in another currency beside an item, are refused naming the line", async () => {
      const k = await fresh()
      const pro = await monthly(k, "Pro", "Pro monthly", "30.00")
      const setup = await oneTime(k, "Setup fee", "199.00")
      const book = await oneTime(k, "Handbook", "20.00")
      const euro = await oneTime(k, "Euro setup", "150.00", "EUR")
      const alone = await opened(k, { line_items: [{ price_id: setup }] })
      expect([alone.amount, alone.payment_mode]).toEqual(["199.00", "onetime_payment"])
      expect((await pay(alone.session_id)).status).toBe(200)
      const done = await sessionOf(k, alone.session_id)
      expect(done.subscription_id).toBeNull()
      const t = await trade(k, done.trade_id)
      expect([t.order_type, t.amount, t.line_items.map((l: any) => l.price)]).toEqual([
        "one_time",
        "199.00",
        ["199.00"]
      ])
      expect(refusal(await session(k, { line_items: [{ price_id: setup }, { price_id: book }] }))).toEqual([
        400,
        "InvalidParameter",
        "line_items[1].price_id"
      ])
      expect(
        refusal(await session(k, { line_items: [{ price_id: pro.priceId }, { price_id: book }, { price_id: euro }] }))
      ).toEqual([400, "InvalidParameter", "line_items[2].price_id"])
    })

    it("a billing anchor over two items and a setup fee: each item its share (rounded once per line) on the page, in the payment and on the first invoice", async () => {
      const k = await fresh("2026-01-15T00:00:00Z")
      const pro = await monthly(k, "Pro", "Pro monthly", "30.00")
      const addon = await monthly(k, "Add-on", "Add-on", "10.00")
      const setup = await oneTime(k, "Setup fee", "199.00")
      const s = await opened(k, {
        line_items: [{ price_id: pro.priceId }, { price_id: addon.priceId }, { price_id: setup }],
        billing_cycle_anchor: "2026-02-01T00:00:00Z"
      })
      // 17/31 of 30.00 = 16.45, of 10.00 = 5.48 (40.00 rounded once would be 21.94); the fee whole
      expect([s.amount, s.billing_cycle_anchor]).toEqual(["220.93", "2026-02-01T00:00:00Z"])
      const html = await page(s.session_id)
      for (const amount of ["$16.45", "$5.48", "$199.00", "$220.93"]) expect(html).toContain(amount)
      expect(html).toContain("Then $40.00 on the 1st of each month")
      expect((await pay(s.session_id)).status).toBe(200)
      const subId = (await sessionOf(k, s.session_id)).subscription_id as string
      const sub = ((await api.call("GET", `/api/v1/subscription/${subId}`, k)).body as any).data.subscription
      expect([sub.billing_cycle_anchor, sub.current_period_end, sub.items.length]).toEqual([
        "2026-02-01T00:00:00Z",
        "2026-02-01T00:00:00Z",
        2
      ])
      const t = await trade(k, sub.source_trade_id)
      expect([t.amount, t.line_items.map((l: any) => l.price)]).toEqual(["220.93", ["16.45", "5.48", "199.00"]])
      const [first] = await invoicesOf(k, subId)
      expect([first.invoice_type, first.amount]).toEqual(["initial", "220.93"])
      expect(linesOf(first)).toEqual([
        ["subscription", "Pro monthly × 1, prorated to the billing anchor", "1", "16.45", "2026-01-15T00:00:00Z"],
        ["subscription", "Add-on × 1, prorated to the billing anchor", "1", "5.48", "2026-01-15T00:00:00Z"],
        ["one_time", "Setup fee × 1 (one time)", "1", "199.00", null]
      ])
      // the anchor day bills both items whole, without the fee
      await advance(k, "2026-02-01T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
        ["initial", 0, "220.93"],
        ["renewal", 1, "40.00"]
      ])
    })
  })
}
