import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Customers, Merchants } from "@recur/core"
import { backends, serve } from "./client.js"

// The whole merchant journey over HTTP only, on embedded PGlite (and PostgreSQL when configured).
for (const [name, storage] of backends()) {
  describe(`merchant journey over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    // the store (PGlite start and migrations) is built here, not inside the first test's time limit
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())
    const api = async (key: string, method: string, path: string, body?: unknown) => app.call(method, path, key, body)
    const pay = async (sessionId: string, number: string) =>
      app.handler(
        new Request(`http://localhost/checkout/${sessionId}/pay`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" }).toString(),
          redirect: "manual"
        })
      )
    it("catalog → customer → checkout on the hosted page → lists → preview + change → renewals → dunning → refund → events", async () => {
      const { api_key: key } = await app.runtime.runPromise(
        Merchants.Merchants.use((m) =>
          m.create({ name: "Journey", currency: "USD", frozen_time: Date.parse("2026-03-01T00:00:00Z") })
        )
      )
      const product = (await api(key, "POST", "/api/v1/products", { product_name: "Team" })).body.data.product_id
      const mkPrice = async (base: string) =>
        (
          await api(key, "POST", "/api/v1/prices", {
            name: `Team ${base}`,
            product_id: product,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: base }
          })
        ).body.data.price_id
      const basic = await mkPrice("10.00")
      const pro = await mkPrice("20.00")
      expect((await api(key, "GET", `/api/v1/products?price_ids=${basic}`)).body.data.list).toHaveLength(1)
      const customer = (await api(key, "POST", "/api/v1/front/customer/create", { payer_id: "acme-7", name: "Grace" }))
        .body.data.customer_id
      const endpoint = await api(key, "POST", "/api/v2/webhook/endpoints", {
        url: "https://hooks.example/recur",
        all_events: true
      })
      expect(endpoint.body.data.secret).toMatch(/^whsec_/)

      // checkout, paid on the hosted page
      const session = (
        await api(key, "POST", "/api/v1/session", {
          customer_id: customer,
          line_items: [{ price_id: basic }],
          return_url: "https://shop.example/ok",
          order_id: "order-1"
        })
      ).body.data
      expect((await pay(session.session_id, "4242424242424242")).status).toBe(303)
      const subs = (await api(key, "GET", "/api/v1/subscription?status=active&order_ids=order-1")).body.data.list
      expect(subs).toHaveLength(1)
      const sub = subs[0]
      expect(
        (await api(key, "GET", `/api/v1/trades?customer_id=${customer}&trade_status=succeeded`)).body.data.list
      ).toHaveLength(1)
      expect(
        (await api(key, "GET", `/api/v1/invoices?subscription_id=${sub.id}&invoice_types=initial`)).body.data.list[0]
          .amount
      ).toBe("10.00")

      // a change to another interval at the period's end is a 400 on price_id (an interval switch
      // starts a new period now, issue 33) and changes nothing
      const yearly = (
        await api(key, "POST", "/api/v1/prices", {
          name: "Team yearly",
          product_id: product,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "year", base_price_val: "100.00" }
        })
      ).body.data.price_id
      const refused = await api(key, "POST", `/api/v1/subscription/${sub.id}`, {
        price_id: yearly,
        effective_type: "end_of_period"
      })
      expect([refused.status, refused.body.code, refused.body.data.param]).toEqual([
        400,
        "InvalidParameter",
        "price_id"
      ])
      expect(
        (await api(key, "GET", "/api/v1/subscription?status=active&order_ids=order-1")).body.data.list.map(
          (x: any) => x.price_id
        )
      ).toEqual([basic])

      // preview, then commit the same numbers
      await api(key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-03-16T12:00:00Z" })
      const preview = (
        await api(key, "POST", `/api/v1/subscription/${sub.id}/preview-change`, {
          price_id: pro,
          effective_type: "immediate",
          proration: "immediate"
        })
      ).body.data
      expect([preview.credit, preview.charge, preview.net, preview.outcome]).toEqual([
        "5.00",
        "10.00",
        "5.00",
        "upgrade"
      ]) // 15.5 of 31 days left
      expect(
        (
          await api(key, "POST", `/api/v1/subscription/${sub.id}`, {
            price_id: pro,
            effective_type: "immediate",
            proration: "immediate",
            quote_id: preview.quote_id
          })
        ).status
      ).toBe(200)
      const upgrade = (await api(key, "GET", `/api/v1/invoices?subscription_id=${sub.id}&invoice_types=upgrade`)).body
        .data.list
      expect(upgrade.map((i: any) => [i.amount, i.biz_status])).toEqual([["5.00", "success"]])

      // two renewals at the new price
      await api(key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-05-02T00:00:00Z" })
      const renewals = (await api(key, "GET", `/api/v1/invoices?subscription_id=${sub.id}&invoice_types=renewal`)).body
        .data.list
      expect(renewals.map((i: any) => [i.cycle_index, i.amount, i.biz_status])).toEqual([
        [2, "20.00", "success"],
        [1, "20.00", "success"]
      ])

      // a second subscription on a card that fails renewals: dunning to unpaid
      const s2 = (await api(key, "POST", "/api/v1/session", { payer_id: "acme-8", line_items: [{ price_id: basic }] }))
        .body.data
      await pay(s2.session_id, "4000000000000341")
      await api(key, "POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-06-12T00:00:00Z" })
      const unpaid = (await api(key, "GET", "/api/v1/subscription?status=unpaid")).body.data.list
      expect(unpaid).toHaveLength(1)
      const failed = (await api(key, "GET", `/api/v1/invoices?subscription_id=${unpaid[0].id}&biz_status=failed`)).body
        .data.list
      expect(failed).toHaveLength(1)

      // refund part of the first trade
      const trade = (await api(key, "GET", `/api/v1/trades?customer_id=${customer}&limit=100`)).body.data.list.at(-1)
      const refund = await api(key, "POST", "/api/v1/refund", {
        trade_id: trade.trade_id,
        amount: "3.00",
        reason: "goodwill"
      })
      expect(refund.body.data.refund_status).toBe("succeeded")
      expect((await api(key, "POST", "/api/v1/refund", { trade_id: trade.trade_id, amount: "30.00" })).body.code).toBe(
        "InvalidParameter"
      )
      expect((await api(key, "GET", `/api/v1/trades/${trade.trade_id}/refunds`)).body.data.list).toHaveLength(1)

      // events, by object and type
      const events = (await api(key, "GET", `/api/v2/webhook/events?business_ids=${sub.id}&limit=100`)).body.data.list
      expect(events.map((e: any) => e.event_type).sort()).toEqual([
        "v2.subscription.first",
        "v2.subscription.price_changed"
      ])
      const payload = JSON.parse(events.find((e: any) => e.event_type === "v2.subscription.first").content)
      expect(payload).toMatchObject({ type: "v2.subscription.first", sequence: 1, data: { id: sub.id } })
      expect(
        (await api(key, "GET", "/api/v2/webhook/events?event_types=v2.subscription.unpaid")).body.data.list
      ).toHaveLength(1)
      expect((await api(key, "GET", "/api/v2/webhook/endpoints")).body.data.list).toHaveLength(1)
    }, 60_000)

    it("30 concurrent pays of one session over HTTP: one trade, one subscription; the rest 409 session_conflict, replayed or 429 (card-testing guard), never 500", async () => {
      const { api_key: key } = await app.runtime.runPromise(
        Merchants.Merchants.use((m) =>
          m.create({ name: "Race", currency: "USD", frozen_time: Date.parse("2026-03-01T00:00:00Z") })
        )
      )
      const product = (await api(key, "POST", "/api/v1/products", { product_name: "Team" })).body.data.product_id
      const price = (
        await api(key, "POST", "/api/v1/prices", {
          name: "Team",
          product_id: product,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
      ).body.data.price_id
      const session = (
        await api(key, "POST", "/api/v1/session", { payer_id: "racer", line_items: [{ price_id: price }] })
      ).body.data
      const payJson = (requestId: string) =>
        app.handler(
          new Request(`http://localhost/checkout/${session.session_id}/pay`, {
            method: "POST",
            headers: {
              "content-type": "application/x-www-form-urlencoded",
              accept: "application/json",
              "request-id": requestId
            },
            body: new URLSearchParams({
              card_number: "4242424242424242",
              exp_month: "12",
              exp_year: "2030",
              cvc: "123"
            }).toString()
          })
        )
      // 25 distinct clicks and 5 retries of one of them (the same Request-Id)
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => payJson(i < 25 ? `click-${i}` : "click-0"))
      )
      const statuses = responses.map((r) => r.status)
      // the card-testing guard lets 10 attempts per session through at once; the rest get 429 —
      // except clicks that land after the first payment finished (a loaded machine): the paid
      // session is answered 409 before the guard, charging nothing
      expect(statuses.filter((s) => s !== 200 && s !== 409 && s !== 429)).toEqual([])
      expect(statuses.filter((s) => s !== 429).length).toBeGreaterThanOrEqual(10)
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
      const bodies = await Promise.all(responses.map((r) => r.json() as Promise<any>))
      for (const [i, b] of bodies.entries()) if (statuses[i] === 409) expect(b.code).toMatch(/conflict/)
      for (const [i, b] of bodies.entries()) if (statuses[i] === 429) expect(b.code).toBe("rate_limit_exceeded")
      const succeeded = bodies.filter((_b, i) => statuses[i] === 200)
      expect(new Set(succeeded.map((b) => b.data.trade_id)).size).toBe(1)
      const trades = (await api(key, "GET", "/api/v1/trades?limit=100")).body.data.list
      expect(trades.map((t: any) => [t.trade_status, t.amount])).toEqual([["succeeded", "30.00"]])
      const subs = (await api(key, "GET", "/api/v1/subscription?limit=100")).body.data.list
      expect(subs.map((s: any) => s.status)).toEqual(["active"])
    }, 120_000)

    it("pages over 250 objects sharing created_at in both directions", async () => {
      const {
        api_key: key,
        merchant: { merchant_id }
      } = await app.runtime.runPromise(
        Merchants.Merchants.use((m) =>
          m.create({ name: "Pages", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
        )
      )
      // the frozen clock does not move: every customer has the same created_at
      for (let i = 0; i < 250; i++) await api(key, "POST", "/api/v1/front/customer/create", { payer_id: `p-${i}` })
      const forward: Array<string> = []
      let cursor = ""
      for (;;) {
        const page = (
          await api(key, "GET", `/api/v1/front/customer?limit=100${cursor ? `&starting_after=${cursor}` : ""}`)
        ).body.data
        forward.push(...page.list.map((c: any) => c.id))
        if (!page.has_more) break
        cursor = forward[forward.length - 1]!
      }
      expect(forward).toHaveLength(250)
      // the frozen clock stamps every one of them with the same created_at
      const records = await app.runtime.runPromise(Customers.Customers.use((c) => c.list(merchant_id, { limit: 100 })))
      expect(new Set(records.list.map((r) => r.created_at)).size).toBe(1)
      expect(new Set(forward).size).toBe(250)
      expect([...forward].sort().reverse()).toEqual(forward)
      const backward: Array<string> = []
      let before = forward[forward.length - 1]!
      for (;;) {
        const page = (await api(key, "GET", `/api/v1/front/customer?limit=30&ending_before=${before}`)).body.data
        backward.unshift(...page.list.map((c: any) => c.id))
        if (!page.has_more) break
        before = page.list[0].id
      }
      expect(backward).toEqual(forward.slice(0, -1))
    }, 120_000)
  })
}
