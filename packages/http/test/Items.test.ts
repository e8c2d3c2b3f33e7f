import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

// Several items per subscription (issue 33), over HTTP only, on PGlite (and PostgreSQL when configured).
for (const [name, storage] of backends()) {
  describe(`subscription items over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())
    const pay = async (sessionId: string) =>
      app.handler(
        new Request(`http://localhost/checkout/${sessionId}/pay`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            card_number: "4242424242424242",
            exp_month: "12",
            exp_year: "2030",
            cvc: "123"
          }).toString(),
          redirect: "manual"
        })
      )
    const subscriptionOf = async (key: string, sessionId: string) => {
      const session = await app.call("GET", `/api/v1/session/${sessionId}`, key)
      const subId = (session.body as any).data.session.subscription_id as string
      expect(subId).toMatch(/^sub_/)
      return (await app.call("GET", `/api/v1/subscription/${subId}`, key)).body as any
    }

    it("a single-price subscription answers one item, the base item, mirroring its flat fields", async () => {
      const { api_key: key } = await app.merchant()
      const { priceId } = await app.priceOf(key)
      const session = await app.call("POST", "/api/v1/session", key, {
        payer_id: "one-item",
        return_url: "https://shop.example/ok",
        line_items: [{ price_id: priceId, quantity: "1" }]
      })
      const sessionId = (session.body as any).data.session_id as string
      expect((await pay(sessionId)).status).toBe(303)
      const sub = (await subscriptionOf(key, sessionId)).data.subscription
      expect(sub.items).toHaveLength(1)
      const [item] = sub.items
      expect(item).toMatchObject({
        id: `si_${sub.id.slice(4)}`,
        price_id: sub.price_id,
        price_version_id: sub.price_version_id,
        quantity: sub.quantity,
        price_type: sub.price_type,
        billing_dimension: sub.billing_dimension,
        unit_amount: "30.00",
        currency: "USD",
        created_at: sub.created_at
      })
      const list = (await app.call("GET", `/api/v1/subscription?subscription_ids=${sub.id}`, key)).body as any
      expect(list.data.list[0].items).toEqual(sub.items)
    }, 60_000)

    it("a checkout with 3 line items makes one subscription with 3 items; its first and renewal invoices have 3 lines", async () => {
      const { api_key: key } = await app.merchant()
      const team = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
        { product: "Team", price: "Team plan" }
      )
      const seats = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
        { product: "Seats", price: "Seat" }
      )
      const sso = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "99.00" } },
        { product: "SSO", price: "SSO add-on" }
      )
      const yearly = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "year", base_price_val: "500.00" } },
        { product: "Archive", price: "Archive yearly" }
      )
      // items share one interval: a yearly price among monthly ones is a 400 naming its line
      const mixed = await app.call("POST", "/api/v1/session", key, {
        payer_id: "team-buyer",
        line_items: [{ price_id: team.priceId }, { price_id: seats.priceId }, { price_id: yearly.priceId }]
      })
      expect([mixed.status, (mixed.body as any).data.param]).toEqual([400, "line_items[2].price_id"])
      const twice = await app.call("POST", "/api/v1/session", key, {
        payer_id: "team-buyer",
        line_items: [{ price_id: team.priceId }, { price_id: seats.priceId }, { price_id: seats.priceId }]
      })
      expect([twice.status, (twice.body as any).data.param]).toEqual([400, "line_items[2].price_id"])
      const tooMany = await app.call("POST", "/api/v1/session", key, {
        payer_id: "team-buyer",
        line_items: Array.from({ length: 21 }, () => ({ price_id: seats.priceId }))
      })
      expect([tooMany.status, (tooMany.body as any).data.param]).toEqual([400, "line_items"])
      const badQuantity = await app.call("POST", "/api/v1/session", key, {
        payer_id: "team-buyer",
        line_items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "5", quantity_max: "3" }]
      })
      expect([badQuantity.status, (badQuantity.body as any).data.param]).toEqual([400, "line_items[1].quantity"])

      const session = await app.call("POST", "/api/v1/session", key, {
        payer_id: "team-buyer",
        return_url: "https://shop.example/ok",
        line_items: [
          { price_id: team.priceId },
          { price_id: seats.priceId, quantity: "5", quantity_editable: true, quantity_min: "1", quantity_max: "50" },
          { price_id: sso.priceId }
        ]
      })
      expect(session.status).toBe(200)
      const opened = (
        (await app.call("GET", `/api/v1/session/${(session.body as any).data.session_id}`, key)).body as any
      ).data.session
      // 49.00 + 12.00 × 5 + 99.00
      expect(opened.amount).toBe("208.00")
      expect(opened.line_items.map((l: any) => [l.price_id, l.quantity])).toEqual([
        [team.priceId, "1"],
        [seats.priceId, "5"],
        [sso.priceId, "1"]
      ])
      // the hosted page lists the 3 lines; the payer changes the seats within their bounds
      const pageOf = async () =>
        (await app.handler(new Request(`http://localhost/checkout/${opened.session_id}`))).text()
      const html = await pageOf()
      expect(html.match(/<li class="line"/g)).toHaveLength(3)
      expect(html).toContain('id="quantity-1"')
      expect(html).not.toContain('id="quantity-0"')
      const setSeats = (quantity: string) =>
        app.handler(
          new Request(`http://localhost/checkout/${opened.session_id}/quantity`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ line: "1", quantity }).toString(),
            redirect: "manual"
          })
        )
      expect((await setSeats("51")).status).toBe(400)
      expect((await setSeats("6")).status).toBe(303)
      const changed = ((await app.call("GET", `/api/v1/session/${opened.session_id}`, key)).body as any).data.session
      // 49.00 + 12.00 × 6 + 99.00
      expect([changed.amount, changed.line_items[1].quantity]).toEqual(["220.00", "6"])
      expect(await pageOf()).toContain('id="quantity-1">6<')
      // a line the merchant did not make editable stays as it is
      const fixed = await app.handler(
        new Request(`http://localhost/checkout/${opened.session_id}/quantity`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ line: "2", quantity: "2" }).toString(),
          redirect: "manual"
        })
      )
      expect(fixed.status).toBe(400)
      expect((await setSeats("5")).status).toBe(303)
      expect((await pay(opened.session_id)).status).toBe(303)
      const sub = (await subscriptionOf(key, opened.session_id)).data.subscription
      expect(sub.price_id).toBe(team.priceId)
      expect(sub.items.map((i: any) => [i.price_id, i.quantity, i.unit_amount])).toEqual([
        [team.priceId, "1", "49.00"],
        [seats.priceId, "5", "12.00"],
        [sso.priceId, "1", "99.00"]
      ])
      expect(new Set(sub.items.map((i: any) => i.id)).size).toBe(3)
      for (const i of sub.items) expect(i.id).toMatch(/^si_/)
      const trade = ((await app.call("GET", `/api/v1/trade/${sub.source_trade_id}`, key)).body as any).data.trade
      expect(trade.line_items.map((l: any) => [l.price_id, l.quantity, l.price])).toEqual([
        [team.priceId, "1", "49.00"],
        [seats.priceId, "5", "60.00"],
        [sso.priceId, "1", "99.00"]
      ])
      const invoicesOf = async (type: string) =>
        ((await app.call("GET", `/api/v1/invoices?subscription_id=${sub.id}&invoice_types=${type}`, key)).body as any)
          .data.list
      const [initial] = await invoicesOf("initial")
      expect(initial.amount).toBe("208.00")
      const priced = (inv: any) =>
        inv.lines.filter((l: any) => l.kind === "subscription").map((l: any) => [l.quantity, l.amount])
      expect(priced(initial)).toEqual([
        ["1", "49.00"],
        ["5", "60.00"],
        ["1", "99.00"]
      ])
      // the customer portal lists the items with their quantities
      const portal = (
        (await app.call("POST", "/api/v1/customer-portal/auth", key, { customer_id: sub.customer_id })).body as any
      ).data.portal_session
      const portalHtml = await (
        await app.handler(new Request(`http://localhost${new URL(portal.url).pathname}`))
      ).text()
      expect(portalHtml).toMatch(
        /<ul class="items" id="items-0"><li>Team plan<\/li><li>Seat × 5<\/li><li>SSO add-on<\/li><\/ul>/
      )
      // the seed's price change of the base item keeps the other items: the quote credits what
      // the 3 items cost (208.00) and charges the new base with them (79.00 + 60.00 + 99.00)
      const plus = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "79.00" } },
        { product: "Team", price: "Team plus" }
      )
      const quote = (
        (
          await app.call("POST", `/api/v1/subscription/${sub.id}/preview-change`, key, {
            price_id: plus.priceId,
            effective_type: "immediate"
          })
        ).body as any
      ).data
      expect([quote.credit, quote.charge, quote.net]).toEqual(["208.00", "238.00", "30.00"])
      // the base item cannot move to another item's price
      const onto = await app.call("POST", `/api/v1/subscription/${sub.id}/preview-change`, key, {
        price_id: sso.priceId
      })
      expect([onto.status, (onto.body as any).data.param]).toEqual([400, "price_id"])
      // the upcoming invoice and the renewal bill every item
      const upcoming = ((await app.call("GET", `/api/v1/subscription/${sub.id}/upcoming_invoice`, key)).body as any)
        .data.upcoming_invoice
      expect(upcoming.amount).toBe("208.00")
      await app.call("POST", "/api/v1/test_helpers/advance_clock", key, { frozen_time: "2026-02-02T00:00:00Z" })
      const [renewal] = await invoicesOf("renewal")
      expect([renewal.amount, renewal.biz_status]).toEqual(["208.00", "success"])
      expect(priced(renewal)).toEqual(priced(initial))
      // its document lists the 3 lines
      const doc = await (
        await app.handler(
          new Request(
            `http://localhost${new URL(renewal.hosted_invoice_url).pathname}${new URL(renewal.hosted_invoice_url).search}`
          )
        )
      ).text()
      for (const line of ["Team plan × 1", "Seat × 5", "SSO add-on × 1"]) expect(doc).toContain(line)
    }, 90_000)

    it("where items meet other features: a schedule's first phase repeats every item, the interval is kept", async () => {
      const { api_key: key } = await app.merchant()
      const team = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
        { product: "Team", price: "Team plan" }
      )
      const seats = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
        { product: "Seats", price: "Seat" }
      )
      const yearly = await app.priceOf(
        key,
        { price_plan: { billing_cycle_unit: "year", base_price_val: "490.00" } },
        { product: "Team", price: "Team yearly" }
      )
      // a discount limited to the Team product would be applied to the whole invoice: refused with seats on it
      const limited = await app.call("POST", "/api/v1/discounts", key, {
        name: "Team half",
        code: "TEAMHALF",
        discount_type: "percentage",
        percent_off: 50,
        product_ids: [team.productId]
      })
      expect(limited.status, JSON.stringify(limited.body)).toBe(200)
      const discounted = await app.call("POST", "/api/v1/session", key, {
        payer_id: "meet-discount",
        line_items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "3" }],
        discount_code: "TEAMHALF"
      })
      expect([discounted.status, (discounted.body as any).data.param]).toEqual([400, "discount_code"])
      expect((discounted.body as any).message).toContain("not every item")
      // the Team plan alone takes it
      const alone = await app.call("POST", "/api/v1/session", key, {
        payer_id: "meet-discount",
        line_items: [{ price_id: team.priceId }],
        discount_code: "TEAMHALF"
      })
      expect(alone.status, JSON.stringify(alone.body)).toBe(200)

      const session = await app.call("POST", "/api/v1/session", key, {
        payer_id: "meet-buyer",
        return_url: "https://shop.example/ok",
        line_items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "3" }]
      })
      const sessionId = (session.body as any).data.session_id as string
      expect((await pay(sessionId)).status).toBe(303)
      const sub = (await subscriptionOf(key, sessionId)).data.subscription
      expect(sub.items).toHaveLength(2)
      const before = (await app.call("GET", `/api/v1/subscription/${sub.id}`, key)).body

      const scheduled = await app.call("POST", `/api/v1/subscription/${sub.id}/schedule`, key, {
        phases: [{ items: [{ price_id: team.priceId }], cycles: 2 }]
      })
      // a schedule from the current period repeats what it bills now: every item (docs/decisions.md)
      expect([scheduled.status, (scheduled.body as any).data.param]).toEqual([400, "phases[0].items"])
      expect((scheduled.body as any).message).toContain("current items")

      const preview = await app.call("POST", `/api/v1/subscription/${sub.id}/preview-change`, key, {
        price_id: yearly.priceId
      })
      expect([preview.status, (preview.body as any).data.param]).toEqual([400, "price_id"])
      expect((preview.body as any).message).toContain("several items")
      // nothing changed
      expect((await app.call("GET", `/api/v1/subscription/${sub.id}`, key)).body).toEqual(before)
    }, 90_000)
  })
}
