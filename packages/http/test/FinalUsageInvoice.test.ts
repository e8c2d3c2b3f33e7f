/**
 * The final invoice of a canceled metered subscription, and the usage an item change keeps:
 * its discount, a metered base item repriced, two cancels at once, a forced renewal.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers } from "./fixtures/changes.js"

const apiCalls = () => ({
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
})

for (const [name, storage] of backends()) {
  describe(`the final usage invoice of a canceled metered subscription (${name})`, { timeout: 240_000 }, () => {
    const app = serve(storage())
    beforeAll(() => app.ready(), 120_000)
    afterAll(() => app.dispose())
    const { ok, fresh, advance, invoicesOf, subOf, upcoming } = changeHelpers(app)
    const pay = (sessionId: string) =>
      app.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    /** Team 49.00 + API calls, paid 2026-01-01. */
    const teamAndCalls = async () => {
      const k = await fresh()
      const team = (
        await app.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
          { product: "Team", price: "Team plan" }
        )
      ).priceId
      const calls = (await app.priceOf(k, apiCalls(), { product: "API", price: "API calls" })).priceId
      const session = ok(
        await app.call("POST", "/api/v1/session", k, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: team }, { price_id: calls }]
        })
      )
      ok(await pay(session.session_id))
      const sub = ok(await app.call("GET", `/api/v1/session/${session.session_id}`, k)).session
        .subscription_id as string
      const items = (await subOf(k, sub)).items.map((i: any) => i.id as string)
      return { k, sub, items }
    }

    it("kept usage alone (metered item deleted, base flat item left alone): the final invoice gets the discount the renewal would have had", async () => {
      const { k, sub, items } = await teamAndCalls()
      ok(
        await app.call("POST", "/api/v1/discounts", k, {
          name: "Half",
          code: "HALF",
          discount_type: "percentage",
          percent_off: 50,
          duration: "forever"
        })
      )
      // from the next cycle on (cycle 1): the renewal that bills the kept calls
      ok(await app.call("POST", `/api/v1/subscription/${sub}/discount`, k, { discount_code: "HALF" }))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 2000, event_id: "e1" }))
      ok(await advance(k, "2026-01-10T00:00:00Z"))
      ok(
        await app.call("POST", `/api/v1/subscription/${sub}/items`, k, {
          items: [{ id: items[1], deleted: true }],
          proration: "none"
        })
      )
      // what the renewal would bill: Team 49.00 + 3.00 kept calls, half off
      const up = await upcoming(k, sub)
      expect(up.lines.filter((l: any) => l.kind === "usage").map((l: any) => l.amount)).toEqual(["3.00"])
      expect(up.amount).toBe("26.00")
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      const [final] = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "upgrade")
      // the renewal (cycle 1) would have taken half off the 3.00: so must the final invoice
      expect([final.subtotal, final.amount]).toEqual(["3.00", "1.50"])
    })

    it("two cancels now at once, and usage recorded meanwhile: one final invoice, every accepted call billed once", async () => {
      const { k, sub } = await teamAndCalls()
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 1234, event_id: "e1" }))
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      const [a, b, u] = await Promise.all([
        app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }),
        app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }),
        app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 10, event_id: "e2" })
      ])
      for (const r of [a, b, u]) expect(r.status, JSON.stringify(r.body)).toBeLessThan(500)
      // a cancel refused as the usage write changed the subscription first (409, "retry") is
      // retried as the answer says (on PostgreSQL both may be)
      if ((await subOf(k, sub)).status !== "canceled")
        ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      const accepted = 1234 + (u.status === 200 ? 10 : 0)
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const invs = await invoicesOf(k, sub)
      const finals = invs.filter((i: any) => i.invoice_type === "upgrade")
      expect(finals.length).toBe(1)
      const billed = invs
        .flatMap((i: any) => i.lines.filter((l: any) => l.kind === "usage"))
        .reduce((n: number, l: any) => n + Number(l.quantity), 0)
      expect(billed).toBe(accepted)
      expect((await subOf(k, sub)).status).toBe("canceled")
    })

    /** API calls (the base item) + Team, 1,234 calls, then the calls repriced to v2 on Jan 16. */
    const repricedBase = async () => {
      const k = await fresh()
      const team = (
        await app.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" } },
          { product: "Team", price: "Team plan" }
        )
      ).priceId
      const calls = (await app.priceOf(k, apiCalls(), { product: "API", price: "API calls" })).priceId
      const dearer = (
        await app.priceOf(
          k,
          {
            ...apiCalls(),
            usage_tiers: [
              { usage_min: "0", usage_max: "1000", unit_price: "0.005", flat_amount: "" },
              { usage_min: "1001", usage_max: "", unit_price: "0.004", flat_amount: "" }
            ]
          },
          { product: "API", price: "API calls v2" }
        )
      ).priceId
      const session = ok(
        await app.call("POST", "/api/v1/session", k, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: calls }, { price_id: team }]
        })
      )
      ok(await pay(session.session_id))
      const sub = ok(await app.call("GET", `/api/v1/session/${session.session_id}`, k)).session
        .subscription_id as string
      const items = (await subOf(k, sub)).items
      expect(items.map((i: any) => i.price_id)).toEqual([calls, team])
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 1234, event_id: "e1" }))
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: items[0].id, price_id: dearer }], proration: "none" }
      const quote = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: quote.quote_id }))
      return { k, sub, quote }
    }

    it("a metered BASE item repriced now by an item change: the calls before it keep the old price (kept_usage), as an add-on's do", async () => {
      const { k, sub, quote } = await repricedBase()
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const usage = (await invoicesOf(k, sub)).flatMap((i: any) =>
        i.lines.filter((l: any) => l.kind === "usage").map((l: any) => [l.description, l.amount])
      )
      // 1,234 calls made before the change, at January's tiers: 2.23 (not 5.94 at v2's); v2's own
      // usage line (none since the change), as a metered item's renewal always has
      expect([quote.kept_usage, usage]).toEqual([
        [{ description: "API calls usage (1234 calls)", amount: "2.23" }],
        [
          ["API calls v2 usage (0 calls)", "0.00"],
          ["API calls usage (1234 calls)", "2.23"]
        ]
      ])
    })

    it("a metered BASE item repriced, then canceled now: the final invoice bills the calls before the change at the old price, those after at the new", async () => {
      const { k, sub } = await repricedBase()
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 100, event_id: "e2" }))
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      const usage = (await invoicesOf(k, sub)).flatMap((i: any) =>
        i.lines.filter((l: any) => l.kind === "usage").map((l: any) => [i.invoice_type, l.description, l.amount])
      )
      // 100 × 0.005 at v2
      expect(usage).toEqual([
        ["upgrade", "API calls v2 usage (100 calls)", "0.50"],
        ["upgrade", "API calls usage (1234 calls)", "2.23"]
      ])
    })

    it("a cancel now after an interval switch that billed the calls so far: the final invoice bills only the calls after it", async () => {
      const { k, sub, items } = await teamAndCalls()
      const teamY = (
        await app.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "year", base_price_val: "490.00" } },
          { product: "Team", price: "Team yearly" }
        )
      ).priceId
      const callsY = (
        await app.priceOf(
          k,
          { ...apiCalls(), price_plan: { billing_cycle_unit: "year", base_price_val: "0" } },
          { product: "API", price: "API calls yearly" }
        )
      ).priceId
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 1234, event_id: "e1" }))
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = {
        items: [
          { id: items[0], price_id: teamY },
          { id: items[1], price_id: callsY }
        ]
      }
      const quote = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      expect(quote.outcome).toBe("interval_switch")
      ok(await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: quote.quote_id }))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 300, event_id: "e2" }))
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      const usage = (await invoicesOf(k, sub)).flatMap((i: any) =>
        i.lines.filter((l: any) => l.kind === "usage").map((l: any) => [i.invoice_type, l.quantity])
      )
      expect(usage).toEqual([
        ["renewal", "1234"],
        ["upgrade", "300"]
      ])
    })

    it("a renewal asked now of a subscription canceling at its period's end is refused (409): it ends, and bills its final usage, at that end", async () => {
      const { k, sub } = await teamAndCalls()
      ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 100, event_id: "e1" }))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "end_of_period" }))
      ok(await advance(k, "2026-01-10T00:00:00Z"))
      const r = await app.call("POST", `/api/v1/subscription/${sub}/renewal`, k, {})
      // refused (409, as for a past-due one): January is paid for until Feb 1, nothing renews
      const after = await subOf(k, sub)
      expect([r.status, (r.body as any).code, after.status, after.cancel_at_period_end]).toEqual([
        409,
        "state_conflict",
        "active",
        true
      ])
      expect((await invoicesOf(k, sub)).length).toBe(1)
      // at the period's end it ends as asked, its usage on the final invoice
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const final = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "upgrade")
      expect([
        (await subOf(k, sub)).status,
        final.length,
        final[0]?.lines.find((l: any) => l.kind === "usage")?.quantity
      ]).toEqual(["canceled", 1, "100"])
    })
  })
}
