/**
 * Schedules whose phases hold several items (issue 33, item 4), end to end on the sandbox clock:
 * a ramp deal (Team plan × 1 + Seats × 10 until a date, then Team × 1 + Seats × 20) billed
 * invoice by invoice with one line per item; an intro price for three cycles then the standard
 * price with the same add-on, on a subscription of several items; a phase that adds items to a
 * single-price subscription; refusals naming the item; a pause and resume moving the dates of the
 * phases to come.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`schedules of several items (${name})`, { timeout: 240_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const subscribe = async (k: string, lines: ReadonlyArray<{ price_id: string; quantity?: string }>) => {
      const s = await api.call("POST", "/api/v1/session", k, { payer_id: `p-${Math.random()}`, line_items: lines })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id
      expect((await pay(id)).status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const advance = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })
    const lines = (inv: any) =>
      inv.lines.filter((l: any) => l.kind === "subscription").map((l: any) => [l.description, l.quantity, l.amount])
    const invoices = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data.list
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index)
        .map((i: any) => [i.cycle_index, i.invoice_type, i.amount, i.biz_status, lines(i).map((l: any) => l.slice(1))])
    const schedule = (k: string, sub: string, body: unknown) =>
      api.call("POST", `/api/v1/subscription/${sub}/schedule`, k, body)
    const scheduleOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}/schedule`, k)).body as any).data.schedule
    const subscription = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription
    const upcoming = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}/upcoming_invoice`, k)).body as any).data.upcoming_invoice
    const items = async (k: string, sub: string) =>
      ((await subscription(k, sub)).items as Array<any>).map((i) => [i.price_id, i.quantity])
    const catalog = async (k: string) => {
      const monthly = (amount: string, product: string, price: string) =>
        api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: amount } }, { product, price })
      return {
        team: await monthly("49.00", "Team", "Team plan"),
        seats: await monthly("12.00", "Seats", "Seat"),
        sso: await monthly("99.00", "SSO", "SSO add-on"),
        intro: await monthly("19.00", "Team", "Team intro"),
        yearly: await api.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "year", base_price_val: "490.00" } },
          { product: "Archive", price: "Archive yearly" }
        )
      }
    }

    it("a ramp deal: Team × 1 + Seats × 10 until 2026-04-01, then Seats × 20; every invoice one line per item", async () => {
      const k = await fresh()
      const { team, seats } = await catalog(k)
      const sub = await subscribe(k, [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "10" }])
      const seatItem = (await subscription(k, sub)).items[1].id
      const made = await schedule(k, sub, {
        phases: [
          {
            items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "10" }],
            end_date: "2026-04-01T00:00:00Z"
          },
          { items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "20" }], cycles: 2 }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const sc = (made.body as any).data.schedule
      expect(
        sc.phases.map((p: any) => [
          p.start_cycle,
          p.end_cycle,
          p.end_date,
          p.items.map((i: any) => [i.price_id, i.quantity])
        ])
      ).toEqual([
        [
          0,
          3,
          "2026-04-01T00:00:00Z",
          [
            [team.priceId, "1"],
            [seats.priceId, "10"]
          ]
        ],
        [
          3,
          5,
          "2026-06-01T00:00:00Z",
          [
            [team.priceId, "1"],
            [seats.priceId, "20"]
          ]
        ]
      ])
      // the schedule governs every item: a manual change is a conflict
      expect(refusal(await api.call("POST", `/api/v1/subscription/${sub}`, k, { quantity: "2" }))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
      await advance(k, "2026-02-01T00:00:00Z")
      await advance(k, "2026-03-01T00:00:00Z")
      // the next renewal starts the second phase: the upcoming invoice shows it, line by line
      const next = await upcoming(k, sub)
      expect([next.cycle_index, next.subtotal, next.amount]).toEqual([3, "289.00", "289.00"])
      expect(lines(next)).toEqual([
        ["Team plan × 1", "1", "49.00"],
        ["Seat × 20", "20", "240.00"]
      ])
      for (const to of ["2026-04-01", "2026-05-01", "2026-06-01"]) await advance(k, `${to}T00:00:00Z`)
      const first = [
        ["1", "49.00"],
        ["10", "120.00"]
      ]
      const second = [
        ["1", "49.00"],
        ["20", "240.00"]
      ]
      expect(await invoices(k, sub)).toEqual([
        [0, "initial", "169.00", "success", first],
        [1, "renewal", "169.00", "success", first],
        [2, "renewal", "169.00", "success", first],
        [3, "renewal", "289.00", "success", second],
        [4, "renewal", "289.00", "success", second],
        [5, "renewal", "289.00", "success", second]
      ])
      // released at the end of the last phase: the subscription keeps its items; the seats stayed one item
      const ended = await scheduleOf(k, sub)
      expect([ended.status, ended.released_at]).toEqual(["released", "2026-06-01T00:00:00Z"])
      const s = await subscription(k, sub)
      expect(s.items.map((i: any) => [i.id, i.price_id, i.quantity])).toEqual([
        [s.items[0].id, team.priceId, "1"],
        [seatItem, seats.priceId, "20"]
      ])
      // each phase's event carries its items
      const events = ((await api.call("GET", `/api/v2/webhook/events?business_ids=${sc.id}&limit=100`, k)).body as any)
        .data.list
      const started = events.filter((e: any) => e.event_type === "v2.subscription_schedule.phase_started")
      const payloads = started.map((e: any) => {
        const content = JSON.parse(e.content)
        return content.data?.phases !== undefined ? content.data : content
      })
      expect(
        payloads.map((p: any) => [p.current_phase, p.phases[p.current_phase].items.map((i: any) => i.quantity)]).sort()
      ).toEqual([
        [0, ["1", "10"]],
        [1, ["1", "20"]]
      ])
    })

    it("an intro: 3 cycles at the intro price with the SSO add-on, then the standard price with the same add-on", async () => {
      const k = await fresh()
      const { team, sso, intro } = await catalog(k)
      const sub = await subscribe(k, [{ price_id: intro.priceId }, { price_id: sso.priceId }])
      const made = await schedule(k, sub, {
        phases: [
          { items: [{ price_id: intro.priceId }, { price_id: sso.priceId }], cycles: 3 },
          { items: [{ price_id: team.priceId }, { price_id: sso.priceId }], cycles: 1 }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      expect((await upcoming(k, sub)).amount).toBe("118.00")
      for (const to of ["2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01"]) await advance(k, `${to}T00:00:00Z`)
      const introLines = [
        ["1", "19.00"],
        ["1", "99.00"]
      ]
      const standard = [
        ["1", "49.00"],
        ["1", "99.00"]
      ]
      expect(await invoices(k, sub)).toEqual([
        [0, "initial", "118.00", "success", introLines],
        [1, "renewal", "118.00", "success", introLines],
        [2, "renewal", "118.00", "success", introLines],
        [3, "renewal", "148.00", "success", standard],
        [4, "renewal", "148.00", "success", standard]
      ])
      expect(await items(k, sub)).toEqual([
        [team.priceId, "1"],
        [sso.priceId, "1"]
      ])
      expect((await scheduleOf(k, sub)).status).toBe("released")
    })

    it("a phase from the next period adds items to a single-price subscription (at half price), and a later one removes them", async () => {
      const k = await fresh()
      const { team, seats, sso } = await catalog(k)
      const sub = await subscribe(k, [{ price_id: team.priceId }])
      // a phase's discount applies to its invoices, all their items
      const half = await api.call("POST", "/api/v1/discounts", k, {
        name: "Half",
        code: "HALF",
        discount_type: "percentage",
        percent_off: 50,
        duration: "forever"
      })
      expect(half.status, JSON.stringify(half.body)).toBe(200)
      const made = await schedule(k, sub, {
        start: "next_period",
        end_behavior: "cancel",
        phases: [
          {
            items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "5" }, { price_id: sso.priceId }],
            cycles: 1,
            discount_code: "HALF"
          },
          { items: [{ price_id: team.priceId }], cycles: 1 }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const coming = await upcoming(k, sub)
      expect([coming.subtotal, coming.discount_amount, coming.amount]).toEqual(["208.00", "104.00", "104.00"])
      expect(lines(coming)).toEqual([
        ["Team plan × 1", "1", "49.00"],
        ["Seat × 5", "5", "60.00"],
        ["SSO add-on × 1", "1", "99.00"]
      ])
      await advance(k, "2026-02-01T00:00:00Z")
      expect(await items(k, sub)).toEqual([
        [team.priceId, "1"],
        [seats.priceId, "5"],
        [sso.priceId, "1"]
      ])
      await advance(k, "2026-03-01T00:00:00Z")
      expect(await items(k, sub)).toEqual([[team.priceId, "1"]])
      await advance(k, "2026-04-01T00:00:00Z")
      expect((await invoices(k, sub)).map((i: any) => [i[0], i[2], i[4].length])).toEqual([
        [0, "49.00", 1],
        [1, "104.00", 3],
        [2, "49.00", 1]
      ])
      const s = await subscription(k, sub)
      expect([s.status, s.cancel_reason]).toEqual(["canceled", "schedule_completed"])
    })

    it("refusals name the phase and the item; nothing is created", async () => {
      const k = await fresh()
      const { team, seats, sso, yearly } = await catalog(k)
      const sub = await subscribe(k, [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "10" }])
      const both = (seatsQty: string) => [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: seatsQty }]
      for (const [body, answer] of [
        // an item on another interval
        [
          {
            start: "next_period",
            phases: [{ items: [{ price_id: team.priceId }, { price_id: yearly.priceId }], cycles: 1 }]
          },
          [400, "InvalidParameter", "phases[0].items[1].price_id"]
        ],
        [
          {
            phases: [
              { items: both("10"), cycles: 1 },
              { items: [...both("20"), { price_id: yearly.priceId }], cycles: 1 }
            ]
          },
          [400, "InvalidParameter", "phases[1].items[2].price_id"]
        ],
        // a price twice
        [
          {
            start: "next_period",
            phases: [{ items: [...both("10"), { price_id: seats.priceId }], cycles: 1 }]
          },
          [400, "InvalidParameter", "phases[0].items[2].price_id"]
        ],
        // a bad quantity, a missing price, an unknown one
        [
          { start: "next_period", phases: [{ items: both("0"), cycles: 1 }] },
          [400, "InvalidParameter", "phases[0].items[1].quantity"]
        ],
        [
          { start: "next_period", phases: [{ items: [{ price_id: team.priceId }, { quantity: "2" }], cycles: 1 }] },
          [400, "InvalidParameter", "phases[0].items[1].price_id"]
        ],
        // a quantity of the wrong type, or not whole: named with brackets like every other field
        [
          {
            start: "next_period",
            phases: [{ items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: true }], cycles: 1 }]
          },
          [400, "InvalidParameter", "phases[0].items[1].quantity"]
        ],
        [
          {
            start: "next_period",
            phases: [{ items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: 8.5 }], cycles: 1 }]
          },
          [400, "InvalidParameter", "phases[0].items[1].quantity"]
        ],
        [
          {
            start: "next_period",
            phases: [
              {
                items: [{ price_id: team.priceId }, { price_id: "pri_01m8djyj2de45vy8qwk7yc8p10" }],
                cycles: 1
              }
            ]
          },
          [404, "resource_not_found", "phases[0].items[1].price_id"]
        ],
        // more than 20 items
        [
          {
            start: "next_period",
            phases: [{ items: Array.from({ length: 21 }, () => ({ price_id: team.priceId })), cycles: 1 }]
          },
          [400, "InvalidParameter", "phases[0].items"]
        ],
        // from the current period, the first phase is what the subscription bills now, every item
        [
          { phases: [{ items: [{ price_id: team.priceId }], cycles: 1 }] },
          [400, "InvalidParameter", "phases[0].items"]
        ],
        [
          { phases: [{ items: [{ price_id: team.priceId }, { price_id: sso.priceId }], cycles: 1 }] },
          [400, "InvalidParameter", "phases[0].items"]
        ],
        [{ phases: [{ items: both("11"), cycles: 1 }] }, [400, "InvalidParameter", "phases[0].items"]]
      ] as const) {
        expect([JSON.stringify(body), ...refusal(await schedule(k, sub, body))]).toEqual([
          JSON.stringify(body),
          ...answer
        ])
      }
      const interval = await schedule(k, sub, {
        start: "next_period",
        phases: [{ items: [{ price_id: team.priceId }, { price_id: yearly.priceId }], cycles: 1 }]
      })
      expect((interval.body as any).message).toContain("interval")
      expect((await api.call("GET", `/api/v1/subscription/${sub}/schedule`, k)).status).toBe(404)
      // the items in another order are the same items, the base item first
      expect(
        (
          await schedule(k, sub, {
            phases: [
              { items: both("10"), cycles: 1 },
              { items: [{ price_id: team.priceId }], cycles: 1 }
            ]
          })
        ).status
      ).toBe(200)
    })

    it("a pause and resume moves the dates of the phases to come; the phases still start on their cycles", async () => {
      const k = await fresh()
      const { team, seats } = await catalog(k)
      const sub = await subscribe(k, [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "10" }])
      const made = await schedule(k, sub, {
        phases: [
          { items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: "10" }], cycles: 2 },
          // a quantity as a number, as the items endpoint takes it
          { items: [{ price_id: team.priceId }, { price_id: seats.priceId, quantity: 20 }], cycles: 2 }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      await advance(k, "2026-01-10T00:00:00Z")
      expect((await api.call("POST", `/api/v1/subscription/${sub}/pause`, k, {})).status).toBe(200)
      await advance(k, "2026-01-20T00:00:00Z")
      expect((await api.call("POST", `/api/v1/subscription/${sub}/resume`, k, {})).status).toBe(200)
      // the resume opened cycle 1 on 2026-01-20: the phases to come follow that calendar
      const sc = await scheduleOf(k, sub)
      expect(sc.phases.map((p: any) => [p.start_cycle, p.start_date, p.end_date])).toEqual([
        [0, "2026-01-01T00:00:00Z", "2026-02-20T00:00:00Z"],
        [2, "2026-02-20T00:00:00Z", "2026-04-20T00:00:00Z"]
      ])
      await advance(k, "2026-02-20T00:00:00Z")
      expect((await scheduleOf(k, sub)).current_phase).toBe(1)
      expect(await items(k, sub)).toEqual([
        [team.priceId, "1"],
        [seats.priceId, "20"]
      ])
      expect((await invoices(k, sub)).map((i: any) => [i[0], i[2]])).toEqual([
        [0, "169.00"],
        [1, "169.00"],
        [2, "289.00"]
      ])
    })
  })
}
