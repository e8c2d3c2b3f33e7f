/**
 * The customer portal on a subscription of several items: its items shown, its base item
 * switched (the other items kept), and quantities changed where the merchant allows
 * (`adjust_quantities`): previewed with the next invoice before and after, applied from the next
 * cycle — the base item's through the engine's quantity change, an add-on item's as its own
 * pending quantity — and billed by the renewal.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

for (const [name, storage] of backends()) {
  describe(`portal quantities and items (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const data = (r: TestClient.Answer) => (r.body as any).data
    const ok = (r: TestClient.Answer) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return data(r)
    }
    const price = async (k: string, productId: string, label: string, amount: string) =>
      ok(
        await api.call("POST", "/api/v1/prices", k, {
          name: label,
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: amount }
        })
      ).price_id as string
    /** Team 49.00 and Team Plus 79.00 (one product), Seats 12.00 and SSO 99.00 (others). */
    const catalog = async (k: string) => {
      const team = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
        {
          product: "Team",
          price: "Team"
        }
      )
      const plus = await price(k, team.productId, "Team Plus", "79.00")
      const seatsProduct = ok(await api.call("POST", "/api/v1/products", k, { product_name: "Seats" })).product_id
      const seats = await price(k, seatsProduct, "Seat", "12.00")
      const ssoProduct = ok(await api.call("POST", "/api/v1/products", k, { product_name: "SSO" })).product_id
      const sso = await price(k, ssoProduct, "SSO", "99.00")
      return { team: team.priceId, plus, seats, sso }
    }
    /** A paid subscription of Team + 3 seats + SSO. */
    const subscribe = async (k: string, c: Awaited<ReturnType<typeof catalog>>, payer: string) => {
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: payer,
          line_items: [{ price_id: c.team }, { price_id: c.seats, quantity: "3" }, { price_id: c.sso }]
        })
      )
      const paid = await api.call(
        "POST",
        `/checkout/${s.session_id}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const session = ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session
      return { customerId: session.customer_id as string, subscriptionId: session.subscription_id as string }
    }
    const portal = async (k: string, customer_id: string) =>
      new URL(ok(await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id })).portal_session.url)
        .pathname
    const get = async (url: string) => {
      const r = await api.handler(new Request(`http://localhost${url}`))
      return { status: r.status, html: await r.text() }
    }
    const post = (url: string, fields: Record<string, string>) =>
      api.handler(
        new Request(`http://localhost${url}`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(fields)
        })
      )
    const subOf = async (k: string, id: string) =>
      ok(await api.call("GET", `/api/v1/subscription/${id}`, k)).subscription
    const upcoming = async (k: string, id: string) =>
      ok(await api.call("GET", `/api/v1/subscription/${id}/upcoming_invoice`, k)).upcoming_invoice
    const settings = (k: string, body: Record<string, unknown>) => api.call("POST", "/api/v1/portal_settings", k, body)

    it("adjust_quantities: off by default, set with bounds, each entry checked by its field", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const c = await catalog(k)
      expect(ok(await api.call("GET", "/api/v1/portal_settings", k)).adjust_quantities).toEqual([])
      const set = ok(
        await settings(k, {
          adjust_quantities: [
            { price_id: c.seats, min: 1, max: 50 },
            { price_id: c.team, max: 3 }
          ]
        })
      )
      expect(set.adjust_quantities).toEqual([
        { price_id: c.seats, min: 1, max: 50 },
        { price_id: c.team, min: 1, max: 3 }
      ])
      // a partial update keeps them
      expect(ok(await settings(k, { cancel: false })).adjust_quantities).toHaveLength(2)
      for (const [body, param, status] of [
        [{ adjust_quantities: [{ price_id: "pri_missing", max: 5 }] }, "adjust_quantities[0].price_id", 404],
        [{ adjust_quantities: [{ price_id: c.seats, min: 5, max: 2 }] }, "adjust_quantities[0].max", 400],
        [{ adjust_quantities: [{ price_id: c.seats, min: 0, max: 2 }] }, "adjust_quantities[0].min", 400],
        [
          {
            adjust_quantities: [
              { price_id: c.seats, max: 2 },
              { price_id: c.seats, max: 3 }
            ]
          },
          "adjust_quantities[1].price_id",
          400
        ]
      ] as const) {
        const r = await settings(k, body)
        expect([param, r.status, refusal(r)[2]], JSON.stringify(r.body)).toEqual([param, status, param])
      }
      expect((await settings(k, { adjust_quantities: [{ price_id: c.seats }] })).status).toBe(400)
      expect(ok(await api.call("GET", "/api/v1/portal_settings", k)).adjust_quantities).toHaveLength(2)
    })

    it("a subscription of several items: items shown, the base item switched with the others kept, an add-on's quantity changed for the next cycle", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const c = await catalog(k)
      const ada = await subscribe(k, c, "ada")
      let base = await portal(k, ada.customerId)
      const first = await get(base)
      expect(first.html).toContain(`id="items-0"`)
      expect(first.html).toContain("Seat × 3")
      // off by default: no quantity form, and the route is refused
      expect(first.html).not.toContain("Change quantity")
      const sub = await subOf(k, ada.subscriptionId)
      const seatItem = sub.items.find((i: any) => i.price_id === c.seats)
      expect(
        (await get(`${base}/subscription/${ada.subscriptionId}/quantity?item_id=${seatItem.id}&quantity=5`)).status
      ).toBe(403)

      ok(
        await settings(k, {
          switch_prices: [c.team, c.plus],
          adjust_quantities: [{ price_id: c.seats, min: 2, max: 20 }]
        })
      )
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T12:00:00Z" })
      // a link works for an hour: a new one
      base = await portal(k, ada.customerId)
      const overview = await get(base)
      expect(overview.html).toContain("Quantity of Seat")
      expect(overview.html).toMatch(/name="quantity" type="number" inputmode="numeric" min="2" max="20" value="3"/)
      // 49.00 + 3 × 12.00 + 99.00
      expect((await upcoming(k, ada.subscriptionId)).amount).toBe("184.00")
      const at = `${base}/subscription/${ada.subscriptionId}/quantity`
      const preview = await get(`${at}?item_id=${seatItem.id}&quantity=5`)
      expect(preview.status, preview.html).toBe(200)
      expect(preview.html).toContain("Change Seat from 3 to 5")
      expect(preview.html).toContain(`id="before">$184.00<`)
      expect(preview.html).toContain(`id="after">$208.00<`)
      expect(preview.html).toContain("applies from your next invoice on Feb 1, 2026")
      // outside the merchant's bounds, or an item it does not allow: refused with the portal page
      expect((await get(`${at}?item_id=${seatItem.id}&quantity=21`)).status).toBe(400)
      expect((await get(`${at}?item_id=${sub.items[2].id}&quantity=2`)).status).toBe(400)
      const done = await post(at, { item_id: seatItem.id, quantity: "5" })
      expect(done.status).toBe(303)
      // nothing now: the item keeps 3 seats this cycle, the next invoice bills 5
      const after = await subOf(k, ada.subscriptionId)
      expect(after.items.find((i: any) => i.price_id === c.seats).quantity).toBe("3")
      expect((await upcoming(k, ada.subscriptionId)).amount).toBe("208.00")
      expect((await get(base)).html).toContain("5 from Feb 1, 2026")
      // the items answer, and the subscription's items, show the add-on's pending quantity
      const listed = ok(await api.call("GET", `/api/v1/subscription/${ada.subscriptionId}/items`, k)).items
      for (const items of [after.items, listed])
        expect(items.map((i: any) => [i.price_id, i.pending_change, i.scheduled_price_version_id])).toEqual([
          [c.team, null, null],
          [c.seats, { quantity: "5", cycle_index: 1, version: 1, effective_at: "2026-02-01T00:00:00Z" }, null],
          [c.sso, null, null]
        ])

      // the base item switched in the portal: the add-ons stay, with the pending quantity
      const switchPage = await get(`${base}/subscription/${ada.subscriptionId}/switch?price_id=${c.plus}`)
      expect(switchPage.status, switchPage.html).toBe(200)
      const quoteId = /name="quote_id" value="([^"]+)"/.exec(switchPage.html)?.[1]
      expect(
        (await post(`${base}/subscription/${ada.subscriptionId}/switch`, { price_id: c.plus, quote_id: quoteId! }))
          .status
      ).toBe(303)
      const switched = await subOf(k, ada.subscriptionId)
      expect(switched.items.map((i: any) => [i.price_id, i.quantity])).toEqual([
        [c.plus, "1"],
        [c.seats, "3"],
        [c.sso, "1"]
      ])
      // 79.00 + 5 × 12.00 + 99.00 at the renewal, then 5 seats in force
      expect((await upcoming(k, ada.subscriptionId)).amount).toBe("238.00")
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:10Z" })
      const renewed = await subOf(k, ada.subscriptionId)
      expect(renewed.items.map((i: any) => [i.price_id, i.quantity])).toEqual([
        [c.plus, "1"],
        [c.seats, "5"],
        [c.sso, "1"]
      ])
      const invoices = ok(await api.call("GET", `/api/v1/invoices?subscription_id=${ada.subscriptionId}&limit=100`, k))
        .list as Array<any>
      const renewal = invoices.find((i) => i.invoice_type === "renewal" && i.cycle_index === 1)
      expect(renewal.amount).toBe("238.00")
    })

    it("the base item's quantity through the engine's quantity change: pending for the next cycle", async () => {
      const k = (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
      const c = await catalog(k)
      const bob = await subscribe(k, c, "bob")
      ok(await settings(k, { adjust_quantities: [{ price_id: c.team, min: 1, max: 3 }] }))
      const base = await portal(k, bob.customerId)
      const baseItem = (await subOf(k, bob.subscriptionId)).items[0]
      const at = `${base}/subscription/${bob.subscriptionId}/quantity`
      const preview = await get(`${at}?item_id=${baseItem.id}&quantity=2`)
      expect(preview.status, preview.html).toBe(200)
      expect(preview.html).toContain(`id="after">$233.00<`)
      expect((await post(at, { item_id: baseItem.id, quantity: "2" })).status).toBe(303)
      const sub = await subOf(k, bob.subscriptionId)
      expect([sub.quantity, sub.pending_change?.quantity]).toEqual(["1", "2"])
      // the base item shows the subscription's own pending change
      expect(sub.items.map((i: any) => i.pending_change)).toEqual([sub.pending_change, null, null])
      expect((await upcoming(k, bob.subscriptionId)).amount).toBe("233.00")
    })
  })
}
