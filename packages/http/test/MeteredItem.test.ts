import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

/** API calls, graduated: the first 1,000 at 0.002, every call after at 0.001. */
const apiCalls = {
  price_type: "based_on_usage",
  model_type: "tiers_price",
  payment_timing: "postpaid",
  billing_dimension: "usage",
  usage_amount: "1",
  usage_unit: "calls",
  price_tier_type: "graduated",
  usage_tiers: [
    { usage_min: "0", usage_max: "1000", unit_price: "0.002", flat_amount: "" },
    { usage_min: "1001", usage_max: "", unit_price: "0.001", flat_amount: "" }
  ],
  price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
}

// Issue 33's Team example end to end over REST: a plan, seats, an add-on and a metered item on
// one subscription (PGlite, and PostgreSQL when RECUR_TEST_DATABASE_URL is set).
for (const [name, storage] of backends()) {
  describe(`a metered item beside other items over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())
    const h = () => changeHelpers(app)
    const pay = (sessionId: string) =>
      app.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    /** The Team prices: plan 49.00, seat 12.00, SSO 99.00 a month, and API calls by usage. */
    const teamPrices = async (key: string) => ({
      team: (
        await app.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
          { product: "Team", price: "Team plan" }
        )
      ).priceId,
      seat: (
        await app.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
          { product: "Seats", price: "Seat" }
        )
      ).priceId,
      sso: (
        await app.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "99.00" } },
          { product: "SSO", price: "SSO add-on" }
        )
      ).priceId,
      calls: (await app.priceOf(key, apiCalls, { product: "API", price: "API calls" })).priceId
    })
    const lines = (inv: any) =>
      inv.lines.map((l: any) => [l.kind, l.description, l.quantity, l.amount, l.period_start, l.period_end])
    const JAN = "2026-01-01T00:00:00Z"
    const FEB = "2026-02-01T00:00:00Z"
    const MAR = "2026-03-01T00:00:00Z"

    it("Team plan 49.00 + 12.00 per seat × 5 + SSO 99.00 + API calls metered: one subscription, usage billed in arrears on each renewal", async () => {
      const { ok, advance, invoicesOf, subOf, upcoming } = h()
      const { api_key: key, merchant } = await app.merchant()
      const p = await teamPrices(key)
      const team = [
        { price_id: p.team },
        { price_id: p.seat, quantity: "5", quantity_editable: true, quantity_min: "1", quantity_max: "50" },
        { price_id: p.sso },
        { price_id: p.calls }
      ]
      // a second metered item is refused, naming its line; so is a quantity on the metered line
      const moreCalls = (await app.priceOf(key, apiCalls, { product: "API", price: "More API calls" })).priceId
      expect(
        refusal(
          await app.call("POST", "/api/v1/session", key, {
            payer_id: "team",
            line_items: [...team, { price_id: moreCalls }]
          })
        )
      ).toEqual([400, "InvalidParameter", "line_items[4].price_id"])
      expect(
        refusal(
          await app.call("POST", "/api/v1/session", key, {
            payer_id: "team",
            line_items: [...team.slice(0, 3), { price_id: p.calls, quantity: "2" }]
          })
        )
      ).toEqual([400, "InvalidParameter", "line_items[3].quantity"])
      expect(
        refusal(
          await app.call("POST", "/api/v1/session", key, {
            payer_id: "team",
            line_items: [...team.slice(0, 3), { price_id: p.calls, quantity_editable: true }]
          })
        )
      ).toEqual([400, "InvalidParameter", "line_items[3].quantity"])

      const session = ok(
        await app.call("POST", "/api/v1/session", key, {
          payer_id: "team",
          return_url: "https://shop.example/ok",
          line_items: team
        })
      )
      // the metered line is not charged up front: 49.00 + 12.00 × 5 + 99.00
      expect(ok(await app.call("GET", `/api/v1/session/${session.session_id}`, key)).session.amount).toBe("208.00")
      const page = await (await app.handler(new Request(`http://localhost/checkout/${session.session_id}`))).text()
      expect(page.match(/<li class="line"/g)).toHaveLength(4)
      expect(page).toContain('id="line-usage-3">Billed by usage at the end of each period<')
      expect(page).toContain('id="quantity-1"')
      expect(page).not.toContain('id="quantity-3"')
      ok(await pay(session.session_id))
      const subId = ok(await app.call("GET", `/api/v1/session/${session.session_id}`, key)).session
        .subscription_id as string
      const sub = await subOf(key, subId)
      expect(sub.items.map((i: any) => [i.price_id, i.quantity, i.billing_dimension])).toEqual([
        [p.team, "1", "quantity"],
        [p.seat, "5", "quantity"],
        [p.sso, "1", "quantity"],
        [p.calls, "1", "usage"]
      ])
      // the portal lists the items, the metered one billed by usage
      const portal = ok(
        await app.call("POST", "/api/v1/customer-portal/auth", key, { customer_id: sub.customer_id })
      ).portal_session
      const portalHtml = await (
        await app.handler(new Request(`http://localhost${new URL(portal.url).pathname}`))
      ).text()
      expect(portalHtml).toContain(
        '<li>Seat × 5</li><li>SSO add-on</li><li>API calls <span class="muted">Billed by usage at the end of each period</span></li>'
      )
      // the first invoice has no usage line: nothing used yet
      const [initial] = await invoicesOf(key, subId)
      expect([initial.invoice_type, initial.amount]).toEqual(["initial", "208.00"])
      expect(lines(initial)).toEqual([
        ["subscription", "Team plan × 1", "1", "49.00", JAN, FEB],
        ["subscription", "Seat × 5", "5", "60.00", JAN, FEB],
        ["subscription", "SSO add-on × 1", "1", "99.00", JAN, FEB]
      ])

      // 1,234 calls in January, recorded for the metered item (two events, one re-sent)
      for (const [count, event] of [
        [1000, "jan-1"],
        [234, "jan-2"],
        [234, "jan-2"]
      ] as const)
        ok(await app.call("POST", `/api/v1/subscription/${subId}/usage`, key, { usage_count: count, event_id: event }))
      const usage = ok(
        await app.call("GET", `/api/v1/subscription/${subId}/usage?merchant_id=${merchant.merchant_id}`, key)
      )
      // 1,000 × 0.002 + 234 × 0.001 = 2.234 → 2.23 (one half-even step)
      expect([usage.total_usage_count, usage.billing_amount, usage.usage_unit]).toEqual([1234, "2.23", "calls"])

      // the upcoming invoice shows the usage so far beside February's prepaid items
      const next = await upcoming(key, subId)
      expect([next.cycle_index, next.subtotal, next.amount]).toEqual([1, "210.23", "210.23"])
      expect(lines(next)).toEqual([
        ["subscription", "Team plan × 1", "1", "49.00", FEB, MAR],
        ["subscription", "Seat × 5", "5", "60.00", FEB, MAR],
        ["subscription", "SSO add-on × 1", "1", "99.00", FEB, MAR],
        ["usage", "API calls usage (1234 calls)", "1234", "2.23", JAN, FEB]
      ])

      // the renewal: 4 lines, the prepaid items for February, the usage for January
      ok(await advance(key, "2026-02-02T00:00:00Z"))
      const [, renewal] = await invoicesOf(key, subId)
      expect([renewal.invoice_type, renewal.cycle_index, renewal.amount, renewal.biz_status]).toEqual([
        "renewal",
        1,
        "210.23",
        "success"
      ])
      expect(lines(renewal)).toEqual(lines(next))
      // the invoice's document shows the usage line with its period
      const url = new URL(renewal.hosted_invoice_url)
      const doc = await (await app.handler(new Request(`http://localhost${url.pathname}${url.search}`))).text()
      for (const text of ["Team plan × 1", "Seat × 5", "SSO add-on × 1", "API calls usage (1234 calls)"])
        expect(doc).toContain(text)
      const pdf = await app.handler(new Request(`http://localhost${url.pathname}/pdf${url.search}`))
      expect([pdf.status, pdf.headers.get("content-type")]).toEqual([200, "application/pdf"])

      // usage starts again from 0 in February: the next upcoming invoice bills no January call twice
      const after = await upcoming(key, subId)
      expect([after.cycle_index, after.amount]).toEqual([2, "208.00"])
      expect(lines(after)[3]).toEqual(["usage", "API calls usage (0 calls)", "0", "0.00", FEB, MAR])

      // a cancellation now bills the usage so far on a final invoice (10 × 0.002): nothing is
      // billed later or twice, and no usage is recorded after it
      ok(await app.call("POST", `/api/v1/subscription/${subId}/usage`, key, { usage_count: 10, event_id: "feb-1" }))
      ok(await app.call("POST", `/api/v1/subscription/${subId}/cancel`, key, { cancel_type: "immediate" }))
      ok(await advance(key, "2026-03-02T00:00:00Z"))
      const renewals = (await invoicesOf(key, subId)).filter((i: any) => i.invoice_type === "renewal")
      expect(renewals.map((i: any) => [i.cycle_index, i.amount])).toEqual([[1, "210.23"]])
      const final = (await invoicesOf(key, subId)).filter((i: any) => i.invoice_type === "upgrade")
      expect(
        final.map((i: any) => [i.cycle_index, i.amount, i.lines.map((l: any) => [l.kind, l.description])])
      ).toEqual([[1, "0.02", [["usage", "API calls usage (10 calls)"]]]])
      expect((await app.call("POST", `/api/v1/subscription/${subId}/usage`, key, { usage_count: 1 })).status).toBe(409)

      // a subscription without a metered item still refuses usage
      const flat = await h().subscribe(key, p.team)
      const refused = await app.call("POST", `/api/v1/subscription/${flat.id}/usage`, key, { usage_count: 1 })
      expect(refused.status).toBe(400)
      expect((refused.body as any).message).toContain("billed by usage")
    }, 120_000)

    it("the metered item as the base item: the first invoice bills the seats alone, the renewal the usage then the seats", async () => {
      const { ok, advance, invoicesOf } = h()
      const { api_key: key } = await app.merchant()
      const p = await teamPrices(key)
      const session = ok(
        await app.call("POST", "/api/v1/session", key, {
          payer_id: "metered-base",
          line_items: [{ price_id: p.calls }, { price_id: p.seat, quantity: "3" }]
        })
      )
      expect(ok(await app.call("GET", `/api/v1/session/${session.session_id}`, key)).session.amount).toBe("36.00")
      ok(await pay(session.session_id))
      const subId = ok(await app.call("GET", `/api/v1/session/${session.session_id}`, key)).session
        .subscription_id as string
      const [initial] = await invoicesOf(key, subId)
      expect(lines(initial)).toEqual([["subscription", "Seat × 3", "3", "36.00", JAN, FEB]])
      ok(await app.call("POST", `/api/v1/subscription/${subId}/usage`, key, { usage_count: 1500 }))
      ok(await advance(key, "2026-02-02T00:00:00Z"))
      const [, renewal] = await invoicesOf(key, subId)
      // 1,000 × 0.002 + 500 × 0.001 = 2.50
      expect([renewal.cycle_index, renewal.amount]).toEqual([1, "38.50"])
      expect(lines(renewal)).toEqual([
        ["usage", "API calls usage (1500 calls)", "1500", "2.50", JAN, FEB],
        ["subscription", "Seat × 3", "3", "36.00", FEB, MAR]
      ])
    }, 120_000)
  })
}
