/**
 * Issue 33 follow-up: a metered item's recorded usage is billed exactly once, whatever changes
 * its subscription — an interval switch through the items endpoint (the usage so far on the
 * switch's invoice), a ramp schedule keeping the metered item, a phase or a `next_cycle` item set
 * dropping or replacing it (the ended period's usage rated at the item in force then), an item
 * change deleting it now, a cancel now or at the period's end (the calls still owed on a final
 * invoice). Every scenario ends by checking that the calls billed on all invoices
 * are the calls recorded. REST on PGlite, and PostgreSQL when RECUR_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

/** API calls, graduated: the first 1,000 at 0.002, every call after at 0.001, on `unit`. */
const apiCalls = (unit = "month", tiers = ["0.002", "0.001"]) => ({
  price_type: "based_on_usage",
  model_type: "tiers_price",
  payment_timing: "postpaid",
  billing_dimension: "usage",
  usage_amount: "1",
  usage_unit: "calls",
  price_tier_type: "graduated",
  usage_tiers: [
    { usage_min: "0", usage_max: "1000", unit_price: tiers[0], flat_amount: "" },
    { usage_min: "1001", usage_max: "", unit_price: tiers[1], flat_amount: "" }
  ],
  price_plan: { billing_cycle_unit: unit, base_price_val: "0" }
})

for (const [name, storage] of backends()) {
  describe(`a metered item's usage billed exactly once (${name})`, { timeout: 240_000 }, () => {
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
    const priceOf = async (k: string, unit: string, amount: string, product: string, price: string) =>
      (await app.priceOf(k, { price_plan: { billing_cycle_unit: unit, base_price_val: amount } }, { product, price }))
        .priceId
    /** The Team subscription of MeteredItem.test.ts, paid on 2026-01-01: 49.00 + 12.00 × 5 + 99.00 + API calls. */
    const team = async () => {
      const k = await fresh()
      const p = {
        team: await priceOf(k, "month", "49.00", "Team", "Team plan"),
        seat: await priceOf(k, "month", "12.00", "Seats", "Seat"),
        sso: await priceOf(k, "month", "99.00", "SSO", "SSO add-on"),
        calls: (await app.priceOf(k, apiCalls(), { product: "API", price: "API calls" })).priceId
      }
      const session = ok(
        await app.call("POST", "/api/v1/session", k, {
          payer_id: `team-${Math.random()}`,
          line_items: [
            { price_id: p.team },
            { price_id: p.seat, quantity: "5" },
            { price_id: p.sso },
            { price_id: p.calls }
          ]
        })
      )
      ok(await pay(session.session_id))
      const sub = ok(await app.call("GET", `/api/v1/session/${session.session_id}`, k)).session
        .subscription_id as string
      const items = (await subOf(k, sub)).items.map((i: any) => i.id as string)
      let recorded = 0
      let n = 0
      const record = async (count: number) => {
        ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: count, event_id: `e-${n++}` }))
        recorded += count
      }
      /** The usage lines of every invoice: [cycle, description, calls, amount, period start, period end]. */
      const usageLines = async () =>
        (await invoicesOf(k, sub)).flatMap((inv: any) =>
          inv.lines
            .filter((l: any) => l.kind === "usage")
            .map((l: any) => [inv.cycle_index, l.description, l.quantity, l.amount, l.period_start, l.period_end])
        )
      /** Every recorded call billed once: the calls of the usage lines sum to the calls recorded. */
      const billedOnce = async () => {
        const billed = (await usageLines()).reduce((sum: number, l: any) => sum + Number(l[2]), 0)
        expect(billed).toBe(recorded)
      }
      return { k, sub, p, items, record, usageLines, billedOnce }
    }
    const kinds = (inv: any) => inv.lines.map((l: any) => [l.kind, l.description, l.amount])

    it("(a) every item, the metered one too, moved to yearly prices on Jan 16: the switch invoice bills January's usage, the next renewal only the new period's", async () => {
      const { k, sub, items, record, usageLines, billedOnce } = await team()
      const yearly = {
        team: await priceOf(k, "year", "490.00", "Team", "Team yearly"),
        seat: await priceOf(k, "year", "120.00", "Seats", "Seat yearly"),
        sso: await priceOf(k, "year", "990.00", "SSO", "SSO yearly"),
        // a yearly metered price with other tiers: January's calls must not be rated at it
        calls: (
          await app.priceOf(k, apiCalls("year", ["0.005", "0.004"]), { product: "API", price: "API calls yearly" })
        ).priceId
      }
      await record(1000)
      await record(234)
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = {
        items: [
          { id: items[0], price_id: yearly.team },
          { id: items[1], price_id: yearly.seat },
          { id: items[2], price_id: yearly.sso },
          { id: items[3], price_id: yearly.calls }
        ]
      }
      const quote = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      expect(quote.outcome).toBe("interval_switch")
      // 1,000 × 0.002 + 234 × 0.001 = 2.234 → 2.23, at January's (monthly) tiers
      expect(quote.lines.at(-1)).toEqual({ description: "API calls usage (1234 calls)", amount: "2.23" })
      const done = ok(
        await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: quote.quote_id })
      )
      expect(done.quote).toEqual(quote)
      const switched = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(switched.amount).toBe(quote.total)
      // the usage line covers the part of January that ended at the switch
      expect(await usageLines()).toEqual([
        [1, "API calls usage (1234 calls)", "1234", "2.23", "2026-01-01T00:00:00Z", "2026-01-16T00:00:00Z"]
      ])
      // the new period's usage starts from 0, rated alone at the yearly tiers
      expect((await upcoming(k, sub)).lines.filter((l: any) => l.kind === "usage")).toMatchObject([
        { description: "API calls yearly usage (0 calls)", amount: "0.00" }
      ])
      await record(300)
      ok(await advance(k, "2027-01-17T00:00:00Z"))
      expect((await usageLines()).slice(1)).toEqual([
        [2, "API calls yearly usage (300 calls)", "300", "1.50", "2026-01-16T00:00:00Z", "2027-01-16T00:00:00Z"]
      ])
      await billedOnce()
    })

    it("(b) a ramp schedule keeping the metered item: each renewal bills the ended month's calls beside the phase's seats", async () => {
      const { k, sub, p, record, usageLines, billedOnce } = await team()
      const made = await app.call("POST", `/api/v1/subscription/${sub}/schedule`, k, {
        phases: [
          {
            items: [
              { price_id: p.team },
              { price_id: p.seat, quantity: "5" },
              { price_id: p.sso },
              { price_id: p.calls }
            ],
            cycles: 1
          },
          {
            items: [
              { price_id: p.team },
              { price_id: p.seat, quantity: "10" },
              { price_id: p.sso },
              { price_id: p.calls }
            ],
            cycles: 2
          }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      // at most one metered item, of quantity 1, as at checkout
      const other = await team()
      const more = (await app.priceOf(other.k, apiCalls(), { product: "API", price: "More API calls" })).priceId
      const twice = await app.call("POST", `/api/v1/subscription/${other.sub}/schedule`, other.k, {
        start: "next_period",
        phases: [{ items: [{ price_id: other.p.team }, { price_id: other.p.calls }, { price_id: more }], cycles: 1 }]
      })
      expect(refusal(twice)).toEqual([400, "InvalidParameter", "phases[0].items[2].price_id"])
      expect((twice.body as any).message).toContain("at most one metered item")
      const counted = await app.call("POST", `/api/v1/subscription/${other.sub}/schedule`, other.k, {
        start: "next_period",
        phases: [{ items: [{ price_id: other.p.team }, { price_id: other.p.calls, quantity: "2" }], cycles: 1 }]
      })
      expect(refusal(counted)).toEqual([400, "InvalidParameter", "phases[0].items[1].quantity"])
      await record(1234)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      await record(500)
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const renewals = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")
      expect(renewals.map(kinds)).toEqual([
        [
          ["subscription", "Team plan × 1", "49.00"],
          ["subscription", "Seat × 10", "120.00"],
          ["subscription", "SSO add-on × 1", "99.00"],
          ["usage", "API calls usage (1234 calls)", "2.23"]
        ],
        [
          ["subscription", "Team plan × 1", "49.00"],
          ["subscription", "Seat × 10", "120.00"],
          ["subscription", "SSO add-on × 1", "99.00"],
          ["usage", "API calls usage (500 calls)", "1.00"]
        ]
      ])
      expect((await usageLines()).map((l: any) => l.slice(4))).toEqual([
        ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"],
        ["2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"]
      ])
      await billedOnce()
    })

    it("(c) a phase dropping the metered item: its last month's calls billed on the renewal that starts the phase", async () => {
      const { k, sub, p, record, usageLines, billedOnce } = await team()
      ok(
        await app.call("POST", `/api/v1/subscription/${sub}/schedule`, k, {
          phases: [
            {
              items: [
                { price_id: p.team },
                { price_id: p.seat, quantity: "5" },
                { price_id: p.sso },
                { price_id: p.calls }
              ],
              cycles: 1
            },
            { items: [{ price_id: p.team }, { price_id: p.seat, quantity: "5" }, { price_id: p.sso }], cycles: 2 }
          ]
        })
      )
      await record(1234)
      // the upcoming invoice shows it already
      expect((await upcoming(k, sub)).lines.filter((l: any) => l.kind === "usage")).toMatchObject([
        { description: "API calls usage (1234 calls)", amount: "2.23" }
      ])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const [, renewal] = await invoicesOf(k, sub)
      expect([renewal.cycle_index, renewal.amount]).toEqual([1, "210.23"])
      // no metered item any more: usage is refused, and March bills none
      expect(refusal(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 1 }))[0]).toBe(400)
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      expect(await usageLines()).toEqual([
        [1, "API calls usage (1234 calls)", "1234", "2.23", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"]
      ])
      await billedOnce()
    })

    it("(c) a next_cycle item set dropping the metered item, another replacing its price: the ended month rated at the price in force then", async () => {
      const dropped = await team()
      ok(
        await app.call("POST", `/api/v1/subscription/${dropped.sub}/items`, dropped.k, {
          items: [{ id: dropped.items[3], deleted: true }],
          proration: "next_cycle"
        })
      )
      await dropped.record(1234)
      ok(await advance(dropped.k, "2026-02-01T00:00:00Z"))
      expect(await dropped.usageLines()).toEqual([
        [1, "API calls usage (1234 calls)", "1234", "2.23", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"]
      ])
      await dropped.billedOnce()

      const replaced = await team()
      const dearer = (
        await app.priceOf(replaced.k, apiCalls("month", ["0.005", "0.004"]), { product: "API", price: "API calls v2" })
      ).priceId
      ok(
        await app.call("POST", `/api/v1/subscription/${replaced.sub}/items`, replaced.k, {
          items: [{ id: replaced.items[3], price_id: dearer }],
          proration: "next_cycle"
        })
      )
      await replaced.record(1234)
      ok(await advance(replaced.k, "2026-02-01T00:00:00Z"))
      await replaced.record(100)
      ok(await advance(replaced.k, "2026-03-01T00:00:00Z"))
      // January at the old tiers (2.23), February at the new price (100 × 0.005)
      expect((await replaced.usageLines()).map((l: any) => l.slice(0, 4))).toEqual([
        [1, "API calls usage (1234 calls)", "1234", "2.23"],
        [2, "API calls v2 usage (100 calls)", "100", "0.50"]
      ])
      await replaced.billedOnce()
    })

    it("(d) an item change deleting the metered item mid-cycle: the calls so far are billed, never lost", async () => {
      const { k, sub, items, record, usageLines, billedOnce } = await team()
      await record(1234)
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: items[3], deleted: true }] }
      // the quote shows the usage kept for the next renewal, and its id covers it (preview = commit)
      const quote = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      expect(quote.kept_usage).toEqual([{ description: "API calls usage (1234 calls)", amount: "2.23" }])
      const done = ok(
        await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: quote.quote_id })
      )
      expect(done.quote).toEqual(quote)
      // kept for the next renewal, rated at the price in force until the change: the upcoming invoice shows it
      expect((await upcoming(k, sub)).lines.filter((l: any) => l.kind === "usage")).toMatchObject([
        { description: "API calls usage (1234 calls)", amount: "2.23", period_end: "2026-01-16T00:00:00Z" }
      ])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      expect(await usageLines()).toEqual([
        [1, "API calls usage (1234 calls)", "1234", "2.23", "2026-01-01T00:00:00Z", "2026-01-16T00:00:00Z"]
      ])
      await billedOnce()
    })

    it("(d) an item change moving the metered item to another price now: the calls before it at the old price, after it at the new", async () => {
      const { k, sub, items, record, usageLines, billedOnce } = await team()
      const dearer = (
        await app.priceOf(k, apiCalls("month", ["0.005", "0.004"]), { product: "API", price: "API calls v2" })
      ).priceId
      await record(1234)
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: items[3], price_id: dearer }], proration: "none" }
      const quote = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      expect([quote.outcome, quote.kept_usage]).toEqual([
        "none",
        [{ description: "API calls usage (1234 calls)", amount: "2.23" }]
      ])
      // usage recorded after the preview moves what the change keeps: the quote is stale
      await record(1)
      expect(
        refusal(
          await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: quote.quote_id })
        )[0]
      ).toBe(409)
      const again = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      expect(again.kept_usage).toEqual([{ description: "API calls usage (1235 calls)", amount: "2.24" }])
      ok(await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: again.quote_id }))
      // the upcoming invoice shows both: the new price's usage so far and the kept usage
      expect((await upcoming(k, sub)).lines.filter((l: any) => l.kind === "usage").map((l: any) => l.amount)).toEqual([
        "0.00",
        "2.24"
      ])
      await record(100)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      // 1,235 calls at the old tiers to Jan 16, 100 at 0.005 after
      expect(await usageLines()).toEqual([
        [1, "API calls v2 usage (100 calls)", "100", "0.50", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"],
        [1, "API calls usage (1235 calls)", "1235", "2.24", "2026-01-01T00:00:00Z", "2026-01-16T00:00:00Z"]
      ])
      await billedOnce()
    })

    /** The subscription's final invoices (`upgrade`, billed at a cancel): [cycle, amount, status, usage lines]. */
    const finals = async (k: string, sub: string) =>
      (await invoicesOf(k, sub))
        .filter((i: any) => i.invoice_type === "upgrade")
        .map((i: any) => [
          i.cycle_index,
          i.amount,
          i.biz_status,
          i.lines.filter((l: any) => l.kind === "usage").map((l: any) => [l.description, l.amount, l.period_end])
        ])

    it("(d) usage recorded between a seat change's preview and its commit leaves the quote valid: the quote states no usage", async () => {
      const { k, sub, items, record, usageLines, billedOnce } = await team()
      await record(300)
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { items: [{ id: items[1], quantity: "8" }] }
      const quote = ok(await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, body))
      expect(quote.kept_usage).toBeUndefined()
      // metering writes the subscription's record (its accrued usage), which the quote does not state
      await record(700)
      const done = ok(
        await app.call("POST", `/api/v1/subscription/${sub}/items`, k, { ...body, quote_id: quote.quote_id })
      )
      expect(done.quote).toEqual(quote)
      // another write to the record (a pause) does make a quote stale
      const again = ok(
        await app.call("POST", `/api/v1/subscription/${sub}/items/preview`, k, {
          items: [{ id: items[1], quantity: "9" }]
        })
      )
      ok(await app.call("POST", `/api/v1/subscription/${sub}/pause`, k, {}))
      expect(
        refusal(
          await app.call("POST", `/api/v1/subscription/${sub}/items`, k, {
            items: [{ id: items[1], quantity: "9" }],
            quote_id: again.quote_id
          })
        )[0]
      ).toBe(409)
      ok(await app.call("POST", `/api/v1/subscription/${sub}/resume`, k, {}))
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      expect((await usageLines()).map((l: ReadonlyArray<unknown>) => l[2])).toEqual(["1000"])
      await billedOnce()
    })

    it("(e) a cancel now bills the calls so far on a final invoice, charged at once; nothing after", async () => {
      const { k, sub, record, usageLines, billedOnce } = await team()
      await record(1234)
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      const canceled = ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      // the cancel's answer is as before: the subscription and its status
      expect(canceled).toEqual({ subscription_id: sub, status: "canceled" })
      expect(await finals(k, sub)).toEqual([
        [0, "2.23", "success", [["API calls usage (1234 calls)", "2.23", "2026-01-20T00:00:00Z"]]]
      ])
      expect(await upcoming(k, sub)).toBeNull()
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      expect((await usageLines()).map((l: any) => l.slice(4))).toEqual([
        ["2026-01-01T00:00:00Z", "2026-01-20T00:00:00Z"]
      ])
      await billedOnce()
    })

    it("(e) the final invoice's usage gets the discount its renewal would have had", async () => {
      const { k, sub, record, billedOnce } = await team()
      ok(
        await app.call("POST", "/api/v1/discounts", k, {
          name: "Half",
          code: "HALF",
          discount_type: "percentage",
          percent_off: 50,
          duration: "forever"
        })
      )
      // from the next cycle on: the renewal that would have billed January's calls
      ok(await app.call("POST", `/api/v1/subscription/${sub}/discount`, k, { discount_code: "HALF" }))
      await record(2000)
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, {}))
      const [final] = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "upgrade")
      // 1,000 × 0.002 + 1,000 × 0.001 = 3.00, half off
      expect([final.subtotal, final.lines[0].discount_amount, final.amount]).toEqual(["3.00", "1.50", "1.50"])
      await billedOnce()
    })

    it("(e) a cancel now after repricing the metered item: the kept calls and the new price's on the final invoice", async () => {
      const { k, sub, items, record, billedOnce } = await team()
      const dearer = (
        await app.priceOf(k, apiCalls("month", ["0.005", "0.004"]), { product: "API", price: "API calls v2" })
      ).priceId
      await record(1234)
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      ok(
        await app.call("POST", `/api/v1/subscription/${sub}/items`, k, {
          items: [{ id: items[3], price_id: dearer }],
          proration: "none"
        })
      )
      await record(100)
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      expect(await finals(k, sub)).toEqual([
        [
          0,
          "2.73",
          "success",
          [
            ["API calls v2 usage (100 calls)", "0.50", "2026-01-20T00:00:00Z"],
            ["API calls usage (1234 calls)", "2.23", "2026-01-16T00:00:00Z"]
          ]
        ]
      ])
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      await billedOnce()
    })

    it("(e) a paused subscription canceled: the calls before the pause billed; none recorded after", async () => {
      const { k, sub, record, billedOnce } = await team()
      await record(500)
      ok(await advance(k, "2026-01-10T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/pause`, k, {}))
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      expect(await finals(k, sub)).toEqual([
        [0, "1.00", "success", [["API calls usage (500 calls)", "1.00", "2026-01-10T00:00:00Z"]]]
      ])
      await billedOnce()
    })

    it("(f) a cancel at the period's end bills the last month's calls, and the usage an item change kept, at that end", async () => {
      const { k, sub, record, usageLines, billedOnce } = await team()
      await record(1234)
      ok(await app.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "end_of_period" }))
      await record(66)
      ok(await advance(k, "2026-02-02T00:00:00Z"))
      expect((await subOf(k, sub)).status).toBe("canceled")
      // no renewal: one final invoice, the whole of January's 1,300 calls (2.30)
      expect((await invoicesOf(k, sub)).map((i: any) => i.invoice_type)).toEqual(["initial", "upgrade"])
      expect(await finals(k, sub)).toEqual([
        [0, "2.30", "success", [["API calls usage (1300 calls)", "2.30", "2026-02-01T00:00:00Z"]]]
      ])
      expect((await usageLines()).map((l: any) => l.slice(4))).toEqual([
        ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"]
      ])
      await billedOnce()

      const deleted = await team()
      await deleted.record(1234)
      ok(await advance(deleted.k, "2026-01-16T00:00:00Z"))
      ok(
        await app.call("POST", `/api/v1/subscription/${deleted.sub}/items`, deleted.k, {
          items: [{ id: deleted.items[3], deleted: true }]
        })
      )
      ok(
        await app.call("POST", `/api/v1/subscription/${deleted.sub}/cancel`, deleted.k, {
          cancel_type: "end_of_period"
        })
      )
      ok(await advance(deleted.k, "2026-03-01T00:00:00Z"))
      expect(await finals(deleted.k, deleted.sub)).toEqual([
        [0, "2.23", "success", [["API calls usage (1234 calls)", "2.23", "2026-01-16T00:00:00Z"]]]
      ])
      await deleted.billedOnce()
    })

    it("(f) a one-item usage subscription: canceled now or at the period's end, its last calls billed once", async () => {
      const k = await fresh()
      const calls = (await app.priceOf(k, apiCalls(), { product: "API", price: "API calls" })).priceId
      const subscribe = async () => {
        const session = ok(
          await app.call("POST", "/api/v1/session", k, {
            payer_id: `u-${Math.random()}`,
            line_items: [{ price_id: calls }]
          })
        )
        ok(await pay(session.session_id))
        return ok(await app.call("GET", `/api/v1/session/${session.session_id}`, k)).session.subscription_id as string
      }
      const now = await subscribe()
      const atEnd = await subscribe()
      for (const [sub, n] of [
        [now, 700],
        [atEnd, 1500]
      ] as const)
        ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: n, event_id: `u-${sub}` }))
      ok(await app.call("POST", `/api/v1/subscription/${atEnd}/cancel`, k, { cancel_type: "end_of_period" }))
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${now}/cancel`, k, {}))
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const billed = async (sub: string) =>
        (await invoicesOf(k, sub)).map((i: any) => [
          i.invoice_type,
          i.cycle_index,
          i.amount,
          i.lines.filter((l: any) => l.kind === "usage" && l.quantity !== "0").map((l: any) => l.quantity)
        ])
      expect(await billed(now)).toEqual([
        ["initial", 0, "0.00", []],
        ["upgrade", 0, "1.40", ["700"]]
      ])
      // 1,000 × 0.002 + 500 × 0.001
      expect(await billed(atEnd)).toEqual([
        ["initial", 0, "0.00", []],
        ["upgrade", 0, "2.50", ["1500"]]
      ])
    })

    it("(g) in a trial, a cancel bills no usage (trial usage is not billed), now or at the trial's end", async () => {
      const k = await fresh()
      const trialTeam = (
        await app.priceOf(
          k,
          {
            price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" },
            has_trial: true,
            trial_period: { trial_period_unit: "day", trial_period_count: 7 }
          },
          { product: "Team", price: "Team plan" }
        )
      ).priceId
      const calls = (await app.priceOf(k, apiCalls(), { product: "API", price: "API calls" })).priceId
      const subscribe = async () => {
        const session = ok(
          await app.call("POST", "/api/v1/session", k, {
            payer_id: `t-${Math.random()}`,
            line_items: [{ price_id: trialTeam }, { price_id: calls }]
          })
        )
        ok(await pay(session.session_id))
        return ok(await app.call("GET", `/api/v1/session/${session.session_id}`, k)).session.subscription_id as string
      }
      const now = await subscribe()
      const atEnd = await subscribe()
      expect((await subOf(k, now)).status).toBe("trial")
      for (const sub of [now, atEnd])
        ok(await app.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 300, event_id: `t-${sub}` }))
      ok(await app.call("POST", `/api/v1/subscription/${atEnd}/cancel`, k, { cancel_type: "end_of_period" }))
      ok(await advance(k, "2026-01-03T00:00:00Z"))
      ok(await app.call("POST", `/api/v1/subscription/${now}/cancel`, k, {}))
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      for (const sub of [now, atEnd]) {
        expect((await subOf(k, sub)).status).toBe("canceled")
        expect((await invoicesOf(k, sub)).map((i: any) => i.invoice_type)).toEqual(["trial"])
      }
    })
  })
}
