/**
 * Issue 33 (2, 7): item changes over REST — add, remove, a quantity, a price — each previewed by a
 * quote (`…/items/preview`) and committed exactly as quoted (`…/items` with `quote_id`), under
 * each proration mode, and the refusals naming the entry at fault.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

for (const [name, storage] of backends()) {
  describe(`item changes (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { ok, fresh, advance, price, invoicesOf, upcoming } = changeHelpers(api)
    const previewItems = (k: string, id: string, body: Record<string, unknown>) =>
      api.call("POST", `/api/v1/subscription/${id}/items/preview`, k, body)
    const commitItems = (k: string, id: string, body: Record<string, unknown>) =>
      api.call("POST", `/api/v1/subscription/${id}/items`, k, body)
    const itemsOf = async (k: string, id: string) =>
      ok(await api.call("GET", `/api/v1/subscription/${id}/items`, k)).items.map((i: any) => [i.price_id, i.quantity])

    /** Team plan 49.00 + 5 × Seat 12.00 a month (109.00), paid on Jan 1; an SSO add-on 99.00 and a Seat Pro 15.00. */
    const setup = async (credit: "refund" | "credit_balance" = "refund") => {
      const k = await fresh(credit)
      const team = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
        {
          product: "Team",
          price: "Team plan"
        }
      )
      const seat = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" } },
        {
          product: "Seats",
          price: "Seat"
        }
      )
      const seatPro = await price(k, seat.productId, "15.00", "Seat Pro")
      const sso = await price(k, team.productId, "99.00", "SSO add-on")
      const yearly = await price(k, seat.productId, "120.00", "Seat yearly", "year")
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: team.priceId }, { price_id: seat.priceId, quantity: "5" }]
        })
      )
      ok(
        await api.call(
          "POST",
          `/checkout/${s.session_id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      )
      const sub = ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session.subscription_id as string
      const items = ok(await api.call("GET", `/api/v1/subscription/${sub}/items`, k)).items
      return {
        k,
        sub,
        team: team.priceId,
        seat: seat.priceId,
        seatPro,
        sso,
        yearly,
        products: { team: team.productId, seat: seat.productId },
        baseItem: items[0].id as string,
        seatItem: items[1].id as string
      }
    }

    it("always_invoice: 5 → 8 seats on Jan 16 credits the unused 109.00 and charges the rest of 145.00, as quoted", async () => {
      const { k, sub, team, seat, seatItem } = await setup()
      expect(await itemsOf(k, sub)).toEqual([
        [team, "1"],
        [seat, "5"]
      ])
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: seatItem, quantity: 8 }] }
      const quote = ok(await previewItems(k, sub, body))
      // 16 of 31 days left: credit 109.00 × 16/31 = 56.26, charge 145.00 × 16/31 = 74.84
      expect(quote).toMatchObject({
        proration: "always_invoice",
        outcome: "upgrade",
        credit: "56.26",
        charge: "74.84",
        net: "18.58",
        total: "18.58",
        effective_at: "2026-01-16T00:00:00Z"
      })
      expect(quote.lines).toEqual([
        { description: "Unused time on 1 × Team plan, 5 × Seat", amount: "-56.26" },
        { description: "Remaining time on 1 × Team plan, 8 × Seat", amount: "74.84" }
      ])
      const done = ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      // preview = commit
      expect(done.quote).toEqual(quote)
      expect(done.items.map((i: any) => [i.id, i.quantity])).toEqual([
        [done.items[0].id, "1"],
        [seatItem, "8"]
      ])
      expect((await invoicesOf(k, sub)).map((i: any) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "109.00"],
        ["upgrade", "18.58"]
      ])
      // the same quote again: the subscription moved on
      expect(refusal(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
      // the next cycle bills the new set
      expect((await upcoming(k, sub)).amount).toBe("145.00")
      const events = ok(await api.call("GET", `/api/v2/webhook/events?business_ids=${sub}`, k)).list
      const updated = events.filter((e: any) => e.event_type === "v2.subscription.items_updated")
      expect(updated).toHaveLength(1)
      const content = JSON.parse(updated[0].content)
      const data = content.data ?? content
      expect(data.quote_id).toBe(quote.quote_id)
      expect(data.items.map((i: any) => i.quantity)).toEqual(["1", "8"])
    })

    it("always_invoice downgrade refunds what the quote showed; a stale or malformed quote is refused", async () => {
      const { k, sub, seatItem } = await setup()
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: seatItem, quantity: "2" }] }
      const quote = ok(await previewItems(k, sub, body))
      // credit 56.26, charge (49.00 + 24.00) × 16/31 = 37.68: 18.58 back
      expect(quote).toMatchObject({
        outcome: "refund",
        credit: "56.26",
        charge: "37.68",
        net: "-18.58",
        total: "-18.58"
      })
      // another body with this quote: refused, the message saying the quote does not match (nothing changed)
      const other = await commitItems(k, sub, { items: [{ id: seatItem, quantity: "3" }], quote_id: quote.quote_id })
      expect(refusal(other)[0]).toBe(409)
      expect((other.body as any).message).toBe(
        `quote ${quote.quote_id} does not match this change of subscription ${sub}, or the subscription changed since it was made; preview again`
      )
      expect(refusal(await commitItems(k, sub, { ...body, quote_id: "quo_nope" }))).toEqual([
        400,
        "InvalidParameter",
        "quote_id"
      ])
      const done = ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      expect(done.quote).toEqual(quote)
      expect((await upcoming(k, sub)).amount).toBe("73.00")
    })

    it("none adds an item now with nothing prorated; the next renewal bills every item", async () => {
      const { k, sub, team, seat, sso } = await setup()
      ok(await advance(k, "2026-01-10T00:00:00Z"))
      const body = { items: [{ price_id: sso }], proration: "none" }
      const quote = ok(await previewItems(k, sub, body))
      expect(quote).toMatchObject({ proration: "none", outcome: "none", credit: "0.00", charge: "0.00", total: "0.00" })
      const done = ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      expect(done.quote).toEqual(quote)
      expect(await itemsOf(k, sub)).toEqual([
        [team, "1"],
        [seat, "5"],
        [sso, "1"]
      ])
      expect((await invoicesOf(k, sub)).length).toBe(1)
      // 49.00 + 60.00 + 99.00
      expect((await upcoming(k, sub)).amount).toBe("208.00")
    })

    it("next_cycle: the new set waits for the renewal, the upcoming invoice shows it, revoke-price-change drops it", async () => {
      const { k, sub, team, seat, seatItem } = await setup()
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      const body = { items: [{ id: seatItem, quantity: "3" }], proration: "next_cycle" }
      const quote = ok(await previewItems(k, sub, body))
      expect(quote).toMatchObject({
        proration: "next_cycle",
        effective_type: "end_of_period",
        outcome: "scheduled",
        total: "0.00",
        effective_at: "2026-02-01T00:00:00Z"
      })
      ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      // unchanged until the renewal
      expect(await itemsOf(k, sub)).toEqual([
        [team, "1"],
        [seat, "5"]
      ])
      // 49.00 + 3 × 12.00
      expect((await upcoming(k, sub)).amount).toBe("85.00")
      // the seats item shows its quantity waiting for the renewal, the base item nothing
      const waiting = ok(await api.call("GET", `/api/v1/subscription/${sub}/items`, k)).items
      expect(waiting.map((i: any) => [i.price_id, i.pending_change, i.scheduled_price_version_id])).toEqual([
        [team, null, null],
        [seat, { quantity: "3", cycle_index: 1, version: 1, effective_at: "2026-02-01T00:00:00Z" }, null]
      ])
      // another change now waits for it to be revoked (or replaced by another next_cycle change)
      expect(refusal(await previewItems(k, sub, { items: [{ id: seatItem, quantity: "4" }] }))[0]).toBe(409)
      expect(
        refusal(await api.call("POST", `/api/v1/subscription/${sub}/preview-change`, k, { quantity: "2" }))[0]
      ).toBe(409)
      expect(ok(await api.call("POST", `/api/v1/subscription/${sub}/revoke-price-change`, k)).result).toBe("revoked")
      expect((await upcoming(k, sub)).amount).toBe("109.00")
      // committed again, the renewal applies it
      ok(await commitItems(k, sub, body))
      ok(await advance(k, "2026-02-01T00:00:01Z"))
      ok(await api.call("POST", `/api/v1/subscription/${sub}/renewal`, k))
      expect(await itemsOf(k, sub)).toEqual([
        [team, "1"],
        [seat, "3"]
      ])
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("85.00")
    })

    it("create_prorations: removing the seats records the lines the next invoice bills", async () => {
      const { k, sub, team, sso, seatItem } = await setup()
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: seatItem, deleted: true }], proration: "create_prorations" }
      const quote = ok(await previewItems(k, sub, body))
      // credit 109.00 × 16/31 = 56.26, charge 49.00 × 16/31 = 25.29
      expect(quote).toMatchObject({
        outcome: "pending_prorations",
        credit: "56.26",
        charge: "25.29",
        total: "0.00",
        billed_at: "2026-02-01T00:00:00Z"
      })
      ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      expect(await itemsOf(k, sub)).toEqual([[team, "1"]])
      const next = await upcoming(k, sub)
      expect(next.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ["subscription", "49.00"],
        ["proration_credit", "-56.26"],
        ["proration_charge", "25.29"]
      ])
      expect(next.amount).toBe("18.03")
      // always_invoice waits for the pending lines to be billed
      expect(refusal(await previewItems(k, sub, { items: [{ price_id: sso }] }))).toEqual([
        400,
        "InvalidParameter",
        "proration"
      ])
    })

    it("changes an item's price (Seat → Seat Pro) prorated", async () => {
      const { k, sub, team, seatPro, seatItem } = await setup()
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: seatItem, price_id: seatPro }] }
      const quote = ok(await previewItems(k, sub, body))
      // charge (49.00 + 75.00) × 16/31 = 64.00
      expect(quote).toMatchObject({ outcome: "upgrade", credit: "56.26", charge: "64.00", net: "7.74" })
      expect(quote.lines[1].description).toBe("Remaining time on 1 × Team plan, 5 × Seat Pro")
      ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      expect(await itemsOf(k, sub)).toEqual([
        [team, "1"],
        [seatPro, "5"]
      ])
    })

    it("moving every item to yearly prices is an interval switch: unused time credited, a new yearly period charged now", async () => {
      const { k, sub, products, baseItem, seatItem } = await setup()
      const teamYearly = await price(k, products.team, "490.00", "Team yearly", "year")
      const seatYearly = await price(k, products.seat, "120.00", "Seat yearly", "year")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      // only the base item: the items would bill on two intervals
      expect(refusal(await previewItems(k, sub, { items: [{ id: baseItem, price_id: teamYearly }] }))).toEqual([
        400,
        "InvalidParameter",
        "items[0].price_id"
      ])
      // the seed's change of the base item alone is refused, pointing to the item change
      const seed = await api.call("POST", `/api/v1/subscription/${sub}/preview-change`, k, { price_id: teamYearly })
      expect(refusal(seed)).toEqual([400, "InvalidParameter", "price_id"])
      expect((seed.body as any).message).toContain("item change")
      const body = {
        items: [
          { id: baseItem, price_id: teamYearly },
          { id: seatItem, price_id: seatYearly }
        ]
      }
      const quote = ok(await previewItems(k, sub, body))
      // credit 109.00 × 16/31 = 56.26 to the balance; the new period 490.00 + 5 × 120.00 = 1,090.00, less it
      expect(quote).toMatchObject({
        outcome: "interval_switch",
        credit: "56.26",
        charge: "1090.00",
        total: "1033.74",
        billed_at: "2026-01-16T00:00:00Z"
      })
      expect(quote.lines.map((l: any) => l.description)).toEqual([
        "Unused time on 1 × Team plan, 5 × Seat",
        "1 × Team yearly, 5 × Seat yearly (new period)"
      ])
      const done = ok(await commitItems(k, sub, { ...body, quote_id: quote.quote_id }))
      expect(done.quote).toEqual(quote)
      const after = ok(await api.call("GET", `/api/v1/subscription/${sub}`, k)).subscription
      expect([after.billing_cycle_unit, after.current_period_end]).toEqual(["year", "2027-01-16T00:00:00Z"])
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("1033.74")
      expect(await itemsOf(k, sub)).toEqual([
        [teamYearly, "1"],
        [seatYearly, "5"]
      ])
    })

    it("as for price changes: a governing schedule is 409, a scheduled cancel refuses create_prorations", async () => {
      const k = await fresh()
      const plan = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const seat = await price(k, plan.productId, "12.00", "Seat")
      const { subscribe } = changeHelpers(api)
      const governed = (await subscribe(k, plan.priceId)).id
      ok(
        await api.call("POST", `/api/v1/subscription/${governed}/schedule`, k, {
          start: "next_period",
          phases: [{ items: [{ price_id: plan.priceId, quantity: "2" }], cycles: 1 }]
        })
      )
      expect(refusal(await previewItems(k, governed, { items: [{ price_id: seat }] }))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
      const ending = (await subscribe(k, plan.priceId)).id
      ok(await api.call("POST", `/api/v1/subscription/${ending}/cancel`, k, { cancel_type: "end_of_period" }))
      expect(
        refusal(await previewItems(k, ending, { items: [{ price_id: seat }], proration: "create_prorations" }))
      ).toEqual([400, "InvalidParameter", "proration"])
      expect(ok(await previewItems(k, ending, { items: [{ price_id: seat }] })).outcome).toBe("upgrade")
    })

    it("refusals name the entry: the base item's deletion, unknown items, mixed intervals, a price twice, bad bodies", async () => {
      const { k, sub, seat, yearly, baseItem, seatItem } = await setup()
      const at = async (body: Record<string, unknown>) => refusal(await previewItems(k, sub, body))
      expect(await at({ items: [{ id: baseItem, deleted: true }] })).toEqual([
        400,
        "InvalidParameter",
        "items[0].deleted"
      ])
      expect(await at({ items: [{ id: "si_unknown0000", quantity: 2 }] })).toEqual([
        404,
        "resource_not_found",
        "items[0].id"
      ])
      expect(await at({ items: [{ id: seatItem, quantity: 6 }, { price_id: yearly }] })).toEqual([
        400,
        "InvalidParameter",
        "items[1].price_id"
      ])
      expect(await at({ items: [{ price_id: seat }] })).toEqual([400, "InvalidParameter", "items[0].price_id"])
      expect(await at({ items: [{ id: seatItem, quantity: 5 }] })).toEqual([400, "InvalidParameter", "items"])
      expect(await at({ items: [] })).toEqual([400, "InvalidParameter", "items"])
      expect(await at({ items: [{ id: seatItem, quantity: 0 }] })).toEqual([
        400,
        "InvalidParameter",
        "items[0].quantity"
      ])
      expect(await at({ items: [{ id: seatItem }] })).toEqual([400, "InvalidParameter", "items[0].id"])
      expect(await at({ items: [{ quantity: 2 }] })).toEqual([400, "InvalidParameter", "items[0].price_id"])
      expect(await at({ items: [{ id: seatItem, quantity: 2 }], proration: "later" })).toEqual([
        400,
        "InvalidParameter",
        "proration"
      ])
      expect(await at({ items: [{ price_id: "price_nothing000000" }] })).toEqual([
        404,
        "resource_not_found",
        "items[0].price_id"
      ])
      // a private price of another customer is no price for this subscription
      const other = ok(
        await api.call("POST", "/api/v1/front/customer/create", k, { payer_id: "someone-else" })
      ).customer_id
      const priv = ok(
        await api.call("POST", "/api/v1/prices", k, {
          name: "Private seat",
          product_id: ok(await api.call("POST", "/api/v1/products", k, { product_name: "Private" })).product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "5.00" },
          customer_id: other
        })
      ).price_id
      expect(await at({ items: [{ price_id: priv }] })).toEqual([404, "resource_not_found", "items[0].price_id"])
    })
  })
}
