/**
 * Issue 33 review (5, 6, 9, 1): where an item change meets the other items' end-of-period
 * changes, over REST — an immediate change keeps another item's pending quantity (the portal's)
 * and scheduled version (a catalog migration's); the portal offers no quantity while a next_cycle
 * item set waits (409); a next_cycle set supersedes every pending quantity, base and add-on, and
 * its revoke restores none; a metered base item is not left alone after other items.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

for (const [name, storage] of backends()) {
  describe(`items' end-of-period changes meeting item changes (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { ok, fresh, advance, price, invoicesOf, subOf, upcoming } = changeHelpers(api)
    const previewItems = (k: string, id: string, body: Record<string, unknown>) =>
      api.call("POST", `/api/v1/subscription/${id}/items/preview`, k, body)
    /** An item change previewed then committed as quoted. */
    const change = async (k: string, id: string, body: Record<string, unknown>) => {
      const q = ok(await previewItems(k, id, body))
      return ok(await api.call("POST", `/api/v1/subscription/${id}/items`, k, { ...body, quote_id: q.quote_id }))
    }
    const itemsOf = async (k: string, id: string) =>
      ok(await api.call("GET", `/api/v1/subscription/${id}/items`, k)).items.map((i: any) => [i.price_id, i.quantity])
    const pay = async (k: string, line_items: ReadonlyArray<Record<string, unknown>>) => {
      const s = ok(await api.call("POST", "/api/v1/session", k, { payer_id: `p-${Math.random()}`, line_items }))
      ok(
        await api.call(
          "POST",
          `/checkout/${s.session_id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      )
      const session = ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session
      return { sub: session.subscription_id as string, customer: session.customer_id as string }
    }
    /** Team plan 49.00 + 3 × Seat 12.00 a month (85.00) paid on Jan 1; an SSO add-on 99.00. */
    const setup = async () => {
      const k = await fresh()
      const team = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
        { product: "Team", price: "Team plan" }
      )
      const seat = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
        { product: "Seats", price: "Seat" }
      )
      const sso = await price(k, team.productId, "99.00", "SSO add-on")
      const { sub, customer } = await pay(k, [{ price_id: team.priceId }, { price_id: seat.priceId, quantity: "3" }])
      const items = ok(await api.call("GET", `/api/v1/subscription/${sub}/items`, k)).items
      return {
        k,
        sub,
        customer,
        team: team.priceId,
        seat: seat.priceId,
        seatProduct: seat.productId,
        sso,
        baseItem: items[0].id as string,
        seatItem: items[1].id as string
      }
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
    /** The merchant lets customers change the base item (1–3) and the seats (1–20). */
    const allow = async (k: string, team: string, seat: string) =>
      ok(
        await api.call("POST", "/api/v1/portal_settings", k, {
          adjust_quantities: [
            { price_id: team, min: 1, max: 3 },
            { price_id: seat, min: 1, max: 20 }
          ]
        })
      )

    it("an immediate change adding an item keeps the seats' quantity the customer set for the next cycle", async () => {
      const t = await setup()
      await allow(t.k, t.team, t.seat)
      const at = `${await portal(t.k, t.customer)}/subscription/${t.sub}/quantity`
      expect((await post(at, { item_id: t.seatItem, quantity: "5" })).status).toBe(303)
      // 49.00 + 5 × 12.00
      expect((await upcoming(t.k, t.sub)).amount).toBe("109.00")
      ok(await advance(t.k, "2026-01-16T00:00:00Z"))
      await change(t.k, t.sub, { items: [{ price_id: t.sso }], proration: "none" })
      // the seats keep 3 now and 5 from the renewal: 49.00 + 5 × 12.00 + 99.00
      expect(await itemsOf(t.k, t.sub)).toEqual([
        [t.team, "1"],
        [t.seat, "3"],
        [t.sso, "1"]
      ])
      expect((await upcoming(t.k, t.sub)).amount).toBe("208.00")
      ok(await advance(t.k, "2026-02-01T00:00:10Z"))
      expect(await itemsOf(t.k, t.sub)).toEqual([
        [t.team, "1"],
        [t.seat, "5"],
        [t.sso, "1"]
      ])
      const renewal = (await invoicesOf(t.k, t.sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("208.00")
    })

    it("an immediate change adding an item keeps the seats' catalog migration; one naming the seats' quantity keeps it too", async () => {
      const t = await setup()
      const v1 = ok(await api.call("GET", `/api/v1/price/${t.seat}/versions`, t.k)).list[0].price_version_id as string
      const v2 = ok(
        await api.call("POST", `/api/v1/price/${t.seat}/versions`, t.k, {
          name: "Seat",
          product_id: t.seatProduct,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "15.00" }
        })
      ).price_version_id as string
      const path = `/api/v1/price/${t.seat}/migrations`
      const migration = ok(await api.call("POST", path, t.k, { from_version_id: v1, to_version_id: v2 }))
      ok(await api.call("POST", `${path}/${migration.migration_id}/run`, t.k))
      ok(await advance(t.k, "2026-01-10T00:00:00Z"))
      expect(ok(await api.call("GET", `${path}/${migration.migration_id}`, t.k))).toMatchObject({ migrated: 1 })
      // 49.00 + 3 × 15.00
      expect((await upcoming(t.k, t.sub)).amount).toBe("94.00")
      await change(t.k, t.sub, { items: [{ price_id: t.sso }], proration: "none" })
      expect((await upcoming(t.k, t.sub)).amount).toBe("193.00")
      // a quantity of the seats is not their price: the migration still applies at the renewal
      await change(t.k, t.sub, { items: [{ id: t.seatItem, quantity: "4" }], proration: "none" })
      expect((await upcoming(t.k, t.sub)).amount).toBe("208.00")
      ok(await advance(t.k, "2026-02-01T00:00:10Z"))
      const sub = await subOf(t.k, t.sub)
      expect(sub.items.map((i: any) => [i.price_version_id ?? null, i.quantity, i.unit_amount])).toEqual([
        [sub.price_version_id, "1", "49.00"],
        [v2, "4", "15.00"],
        [sub.items[2].price_version_id, "1", "99.00"]
      ])
    })

    it("while a next_cycle item set waits the portal offers no quantity (409 for the seats as for the base item); the set supersedes both pending quantities and its revoke restores neither", async () => {
      const t = await setup()
      await allow(t.k, t.team, t.seat)
      let base = await portal(t.k, t.customer)
      const at = `${base}/subscription/${t.sub}/quantity`
      expect((await post(at, { item_id: t.baseItem, quantity: "2" })).status).toBe(303)
      expect((await post(at, { item_id: t.seatItem, quantity: "5" })).status).toBe(303)
      // 2 × 49.00 + 5 × 12.00
      expect((await upcoming(t.k, t.sub)).amount).toBe("158.00")
      expect((await get(base)).html).toContain("Quantity of Seat")
      ok(await advance(t.k, "2026-01-16T00:00:00Z"))
      await change(t.k, t.sub, { items: [{ price_id: t.sso }], proration: "next_cycle" })
      // the set says every item's quantity of the next cycle: 49.00 + 3 × 12.00 + 99.00
      expect((await upcoming(t.k, t.sub)).amount).toBe("184.00")
      base = await portal(t.k, t.customer)
      expect((await get(base)).html).not.toContain("Quantity of Seat")
      const again = `${base}/subscription/${t.sub}/quantity`
      for (const item of [t.baseItem, t.seatItem]) {
        expect((await get(`${again}?item_id=${item}&quantity=4`)).status).toBe(409)
        expect((await post(again, { item_id: item, quantity: "4" })).status).toBe(409)
      }
      expect((await upcoming(t.k, t.sub)).amount).toBe("184.00")
      // revoked: neither pending quantity comes back, the items bill as they are
      expect(ok(await api.call("POST", `/api/v1/subscription/${t.sub}/revoke-price-change`, t.k)).result).toBe(
        "revoked"
      )
      expect((await subOf(t.k, t.sub)).pending_change).toBeNull()
      expect((await upcoming(t.k, t.sub)).amount).toBe("85.00")
      // and the portal offers the quantities again
      expect((await get(await portal(t.k, t.customer))).html).toContain("Quantity of Seat")
      ok(await advance(t.k, "2026-02-01T00:00:10Z"))
      const renewal = (await invoicesOf(t.k, t.sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("85.00")
    })

    it("revoke-price-change drops every change waiting for the next cycle: pending quantities too, the base item's and an add-on's", async () => {
      const t = await setup()
      await allow(t.k, t.team, t.seat)
      const base = await portal(t.k, t.customer)
      // an add-on's quantity from the portal, the base item's over REST: both wait for Feb 1
      expect(
        (await post(`${base}/subscription/${t.sub}/quantity`, { item_id: t.seatItem, quantity: "5" })).status
      ).toBe(303)
      ok(await api.call("POST", `/api/v1/subscription/${t.sub}`, t.k, { quantity: "2" }))
      // 2 × 49.00 + 5 × 12.00
      expect((await upcoming(t.k, t.sub)).amount).toBe("158.00")
      const revoke = () => api.call("POST", `/api/v1/subscription/${t.sub}/revoke-price-change`, t.k)
      expect(ok(await revoke()).result).toBe("revoked")
      const sub = await subOf(t.k, t.sub)
      expect(sub.pending_change).toBeNull()
      expect(sub.items.map((i: any) => [i.quantity, i.pending_change])).toEqual([
        ["1", null],
        ["3", null]
      ])
      expect((await upcoming(t.k, t.sub)).amount).toBe("85.00")
      // nothing left: the next revoke says so
      expect(ok(await revoke()).result).toBe("no_pending_change")
      // a pending quantity alone is a pending change; with a price scheduled, both go
      ok(await api.call("POST", `/api/v1/subscription/${t.sub}`, t.k, { quantity: "4" }))
      expect(ok(await revoke()).result).toBe("revoked")
      expect((await subOf(t.k, t.sub)).pending_change).toBeNull()
      ok(await api.call("POST", `/api/v1/subscription/${t.sub}`, t.k, { quantity: "4" }))
      ok(
        await api.call("POST", `/api/v1/subscription/${t.sub}`, t.k, {
          price_id: t.sso,
          effective_type: "end_of_period"
        })
      )
      const waiting = (await subOf(t.k, t.sub)).items[0]
      expect([waiting.pending_change?.quantity, waiting.scheduled_price_version_id]).toEqual(["4", expect.any(String)])
      expect(ok(await revoke()).result).toBe("revoked")
      const after = (await subOf(t.k, t.sub)).items[0]
      expect([after.pending_change, after.scheduled_price_version_id]).toEqual([null, null])
      // the renewal bills the items as they are: 49.00 + 3 × 12.00
      ok(await advance(t.k, "2026-02-01T00:00:10Z"))
      const renewal = (await invoicesOf(t.k, t.sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("85.00")
      expect((await subOf(t.k, t.sub)).price_id).toBe(t.team)
    })

    it("a metered base item is not left alone after other items (change, next_cycle set, schedule phase); beside them it keeps renewing", async () => {
      const k = await fresh()
      const calls = (
        await api.priceOf(
          k,
          {
            price_type: "based_on_usage",
            model_type: "per_unit",
            payment_timing: "postpaid",
            billing_dimension: "usage",
            usage_amount: "1",
            usage_unit: "calls",
            usage_unit_price: "0.01",
            billing_threshold: "1",
            price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
          },
          { product: "API", price: "API calls" }
        )
      ).priceId
      const seat = (
        await api.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
          { product: "Seats", price: "Seat" }
        )
      ).priceId
      const { sub } = await pay(k, [{ price_id: calls }, { price_id: seat, quantity: "3" }])
      ok(await advance(k, "2026-02-02T00:00:00Z"))
      expect((await subOf(k, sub)).cycle_index).toBe(1)
      const items = ok(await api.call("GET", `/api/v1/subscription/${sub}/items`, k)).items
      for (const proration of ["none", "always_invoice", "next_cycle"])
        expect(refusal(await previewItems(k, sub, { items: [{ id: items[1].id, deleted: true }], proration }))).toEqual(
          [400, "InvalidParameter", "items[0].deleted"]
        )
      // a phase's items bill by the base item's dimension, so a phase of the metered item alone
      const phases = [{ items: [{ price_id: calls }], cycles: 1 }]
      expect(
        refusal(await api.call("POST", `/api/v1/subscription/${sub}/schedule`, k, { start: "next_period", phases }))
      ).toEqual([400, "InvalidParameter", "phases[0].items"])
      // beside the seats: February's 500 calls (5.00) billed with March's seats (36.00)
      ok(await api.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 500, event_id: "feb" }))
      ok(await advance(k, "2026-03-02T00:00:00Z"))
      expect((await subOf(k, sub)).cycle_index).toBe(2)
      const march = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal" && i.cycle_index === 2)
      expect(march.amount).toBe("41.00")
    })
  })
}
