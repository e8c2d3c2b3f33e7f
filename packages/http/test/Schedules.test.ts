/**
 * Subscription schedules end to end on the sandbox clock: an intro price for three months then
 * the standard price (released), a yearly ramp deal of 10 then 20 seats over two years, a
 * schedule ending with `cancel`, release and cancel by API, refusals naming the field, and a
 * renewal run twice at a phase boundary (concurrently, then again) billing the phase once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Entities, Merchant, Renewals, Store } from "@recur/core"
import type { TestClient } from "@recur/http"
import { DateTime, Effect, Option } from "effect"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`subscription schedules (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => {
      const m = await api.merchant({ frozen: "2026-01-01T00:00:00Z" })
      return { k: m.api_key, m: m.merchant.merchant_id }
    }
    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const subscribe = async (k: string, priceId: string, quantity = "1") => {
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId, quantity }]
      })
      const id = (s.body as any).data.session_id
      expect((await pay(id)).status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const advance = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })
    const invoices = async (k: string, sub: string) =>
      ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
        .filter((i: any) => i.subscription_id === sub)
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index)
        .map((i: any) => [i.cycle_index, i.amount, i.price_id])
    const schedule = (k: string, sub: string, body: unknown) =>
      api.call("POST", `/api/v1/subscription/${sub}/schedule`, k, body)
    const scheduleOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}/schedule`, k)).body as any).data.schedule
    const subscription = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription
    const upcoming = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}/upcoming_invoice`, k)).body as any).data.upcoming_invoice
    const events = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v2/webhook/events?business_ids=${id}&limit=100`, k)).body as any).data.list
        .map((e: any) => e.event_type)
        .sort()

    it("intro price for three months, then the standard price; released at the end, the subscription keeps it", async () => {
      const { k } = await fresh()
      const intro = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" } })
      const standard = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" } })
      const sub = await subscribe(k, intro.priceId)
      const made = await schedule(k, sub, {
        phases: [
          { items: [{ price_id: intro.priceId }], cycles: 3 },
          { items: [{ price_id: standard.priceId }], cycles: 1 }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const sc = (made.body as any).data.schedule
      expect(sc).toMatchObject({ status: "active", current_phase: 0, end_behavior: "release", subscription_id: sub })
      expect(sc.id).toMatch(/^sch_/)
      expect(sc.phases.map((p: any) => [p.start_cycle, p.end_cycle, p.start_date, p.end_date])).toEqual([
        [0, 3, "2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z"],
        [3, 4, "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"]
      ])
      // the schedule governs: a manual change is a conflict, and a second schedule too
      expect(refusal(await api.call("POST", `/api/v1/subscription/${sub}`, k, { price_id: standard.priceId }))).toEqual(
        [409, "state_conflict", undefined]
      )
      expect(
        refusal(await schedule(k, sub, { phases: [{ items: [{ price_id: intro.priceId }], cycles: 1 }] }))
      ).toEqual([409, "state_conflict", undefined])
      expect((await upcoming(k, sub)).amount).toBe("10.00")
      await advance(k, "2026-02-01T00:00:00Z")
      await advance(k, "2026-03-01T00:00:00Z")
      // the next cycle starts the standard phase: the upcoming invoice shows it
      const next = await upcoming(k, sub)
      expect([next.amount, next.price_id, next.cycle_index]).toEqual(["30.00", standard.priceId, 3])
      await advance(k, "2026-04-01T00:00:00Z")
      expect((await scheduleOf(k, sub)).current_phase).toBe(1)
      expect((await subscription(k, sub)).price_id).toBe(standard.priceId)
      await advance(k, "2026-05-01T00:00:00Z")
      await advance(k, "2026-06-01T00:00:00Z")
      expect(await invoices(k, sub)).toEqual([
        [0, "10.00", intro.priceId],
        [1, "10.00", intro.priceId],
        [2, "10.00", intro.priceId],
        [3, "30.00", standard.priceId],
        [4, "30.00", standard.priceId],
        [5, "30.00", standard.priceId]
      ])
      const ended = await scheduleOf(k, sub)
      expect([ended.status, ended.released_at]).toEqual(["released", "2026-05-01T00:00:00Z"])
      expect((await subscription(k, sub)).status).toBe("active")
      expect(await events(k, sc.id)).toEqual([
        "v2.subscription_schedule.phase_started",
        "v2.subscription_schedule.phase_started",
        "v2.subscription_schedule.released"
      ])
      // released: a manual change is allowed again
      expect((await api.call("POST", `/api/v1/subscription/${sub}`, k, { quantity: "2" })).status).toBe(200)
    })

    it("a yearly ramp deal: 10 seats the first year, 20 the second (until a date), billed 1,200.00 then 2,400.00", async () => {
      const { k } = await fresh()
      const seat = await api.priceOf(k, { price_plan: { billing_cycle_unit: "year", base_price_val: "120.00" } })
      const sub = await subscribe(k, seat.priceId, "10")
      // refusals name the field and create nothing
      for (const [body, answer] of [
        [
          { phases: [{ items: [{ price_id: seat.priceId, quantity: "10" }, { price_id: seat.priceId }], cycles: 1 }] },
          [400, "InvalidParameter", "phases[0].items[1].price_id"]
        ],
        [
          {
            phases: [
              { items: [{ price_id: seat.priceId, quantity: "10" }], cycles: 1 },
              { items: [{ price_id: seat.priceId, quantity: "20" }], end_date: "2027-06-01T00:00:00Z" }
            ]
          },
          [400, "InvalidParameter", "phases[1].end_date"]
        ],
        [
          { phases: [{ items: [{ price_id: seat.priceId, quantity: "12" }], cycles: 1 }] },
          [400, "InvalidParameter", "phases[0].items"]
        ],
        [
          { phases: [{ items: [{ price_id: "pri_01m8djyj2de45vy8qwk7yc8p10" }], cycles: 1 }], start: "next_period" },
          [404, "resource_not_found", "phases[0].items[0].price_id"]
        ],
        [{ phases: [] }, [400, "InvalidParameter", "phases"]],
        [{ phases: [{ items: [{ price_id: seat.priceId }] }] }, [400, "InvalidParameter", "phases[0].cycles"]],
        [
          { phases: [{ items: [{ price_id: seat.priceId }], cycles: 1 }], end_behavior: "x" },
          [400, "InvalidParameter", "end_behavior"]
        ],
        [
          { phases: [{ items: [{ price_id: seat.priceId }], cycles: 1 }], start: "tomorrow" },
          [400, "InvalidParameter", "start"]
        ]
      ] as const) {
        expect([JSON.stringify(body), ...refusal(await schedule(k, sub, body))]).toEqual([
          JSON.stringify(body),
          ...answer
        ])
      }
      expect((await api.call("GET", `/api/v1/subscription/${sub}/schedule`, k)).status).toBe(404)
      const made = await schedule(k, sub, {
        phases: [
          { items: [{ price_id: seat.priceId, quantity: "10" }], cycles: 1 },
          { items: [{ price_id: seat.priceId, quantity: "20" }], end_date: "2028-01-01T00:00:00Z" }
        ]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const next = await upcoming(k, sub)
      expect([next.amount, next.cycle_index]).toEqual(["2400.00", 1])
      await advance(k, "2027-01-01T00:00:00Z")
      expect((await subscription(k, sub)).quantity).toBe("20")
      await advance(k, "2028-01-01T00:00:00Z")
      expect(await invoices(k, sub)).toEqual([
        [0, "1200.00", seat.priceId],
        [1, "2400.00", seat.priceId],
        [2, "2400.00", seat.priceId]
      ])
      expect((await scheduleOf(k, sub)).status).toBe("released")
    })

    it("end_behavior cancel: two cycles of another price from the next period, then the subscription cancels", async () => {
      const { k } = await fresh()
      const base = await api.priceOf(k)
      const promo = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "20.00" } })
      const sub = await subscribe(k, base.priceId)
      const made = await schedule(k, sub, {
        start: "next_period",
        end_behavior: "cancel",
        phases: [{ items: [{ price_id: promo.priceId }], cycles: 2 }]
      })
      expect((made.body as any).data.schedule).toMatchObject({ status: "not_started", current_phase: null })
      expect((await upcoming(k, sub)).amount).toBe("20.00")
      await advance(k, "2026-02-01T00:00:00Z")
      expect((await scheduleOf(k, sub)).status).toBe("active")
      await advance(k, "2026-03-01T00:00:00Z")
      // the last phase's last cycle is billed: nothing comes after it
      expect(await upcoming(k, sub)).toBeNull()
      await advance(k, "2026-04-01T00:00:00Z")
      await advance(k, "2026-05-01T00:00:00Z")
      expect(await invoices(k, sub)).toEqual([
        [0, "30.00", base.priceId],
        [1, "20.00", promo.priceId],
        [2, "20.00", promo.priceId]
      ])
      const s = await subscription(k, sub)
      expect([s.status, s.cancel_reason]).toEqual(["canceled", "schedule_completed"])
      const sc = await scheduleOf(k, sub)
      expect([sc.status, sc.completed_at]).toEqual(["completed", "2026-04-01T00:00:00Z"])
      expect(await events(k, sc.id)).toEqual([
        "v2.subscription_schedule.completed",
        "v2.subscription_schedule.phase_started"
      ])
      expect(refusal(await api.call("POST", `/api/v1/subscription/${sub}/schedule/release`, k))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
      // a subscription in its trial takes none (its periods are not on their anchor yet)
      const trial = await api.priceOf(k, {
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
      const inTrial = await subscribe(k, trial.priceId)
      expect((await subscription(k, inTrial)).status).toBe("trial")
      expect(
        refusal(
          await schedule(k, inTrial, {
            start: "next_period",
            phases: [{ items: [{ price_id: trial.priceId }], cycles: 1 }]
          })
        )
      ).toEqual([409, "state_conflict", undefined])
    })

    it("released by API keeps the current phase; canceled by API cancels the subscription at its period's end", async () => {
      const { k } = await fresh()
      const base = await api.priceOf(k)
      const other = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" } })
      const a = await subscribe(k, base.priceId)
      const b = await subscribe(k, base.priceId)
      const body = {
        phases: [
          { items: [{ price_id: base.priceId }], cycles: 1 },
          { items: [{ price_id: other.priceId }], cycles: 3 }
        ]
      }
      // a phase on another interval, or at another customer's private price, is refused naming it
      const yearly = await api.priceOf(k, { price_plan: { billing_cycle_unit: "year", base_price_val: "300.00" } })
      const onYearly = await schedule(k, a, { phases: [{ items: [{ price_id: yearly.priceId }], cycles: 1 }] })
      expect([onYearly.status, (onYearly.body as any).data?.param]).toEqual([400, "phases[0].items[0].price_id"])
      expect((await schedule(k, a, body)).status).toBe(200)
      expect((await schedule(k, b, body)).status).toBe(200)
      const released = await api.call("POST", `/api/v1/subscription/${a}/schedule/release`, k)
      expect((released.body as any).data.schedule.status).toBe("released")
      const canceled = await api.call("POST", `/api/v1/subscription/${b}/schedule/cancel`, k)
      expect((canceled.body as any).data.schedule.status).toBe("canceled")
      expect((await subscription(k, b)).cancel_at_period_end).toBe(true)
      await advance(k, "2026-02-01T00:00:00Z")
      expect(await invoices(k, a)).toEqual([
        [0, "30.00", base.priceId],
        [1, "30.00", base.priceId]
      ])
      expect((await subscription(k, b)).status).toBe("canceled")
      expect(await invoices(k, b)).toEqual([[0, "30.00", base.priceId]])
      expect((await api.call("GET", "/api/v1/subscription/sub_01m8djyj2de45vy8qwk7yc8p10/schedule", k)).status).toBe(
        404
      )
      // a subscription canceled at once ends the schedule that governed it
      const c = await subscribe(k, base.priceId)
      expect((await schedule(k, c, body)).status).toBe(200)
      expect((await api.call("POST", `/api/v1/subscription/${c}/cancel`, k, {})).status).toBe(200)
      expect((await subscription(k, c)).status).toBe("canceled")
      const ended = await scheduleOf(k, c)
      expect(ended.status).toBe("canceled")
      expect(await events(k, ended.id)).toEqual([
        "v2.subscription_schedule.canceled",
        "v2.subscription_schedule.phase_started"
      ])
    })

    it("a phase's discount covers its cycles only; releasing drops the discount of a phase that never started", async () => {
      const { k } = await fresh()
      const base = await api.priceOf(k)
      for (const code of ["HALF", "TENOFF"])
        await api.call("POST", "/api/v1/discounts", k, {
          name: code,
          code,
          discount_type: "percentage",
          percent_off: code === "HALF" ? 50 : 10,
          duration: "forever"
        })
      const body = {
        start: "next_period",
        phases: [
          { items: [{ price_id: base.priceId }], cycles: 2, discount_code: "HALF" },
          { items: [{ price_id: base.priceId }], cycles: 1 },
          { items: [{ price_id: base.priceId }], cycles: 1, discount_code: "TENOFF" }
        ]
      }
      const a = await subscribe(k, base.priceId)
      const b = await subscribe(k, base.priceId)
      expect((await schedule(k, a, body)).status).toBe(200)
      expect((await schedule(k, b, body)).status).toBe(200)
      expect(
        refusal(
          await schedule(k, await subscribe(k, base.priceId), {
            phases: [{ items: [{ price_id: base.priceId }], cycles: 1, discount_code: "NOPE" }],
            start: "next_period"
          })
        )
      ).toEqual([404, "resource_not_found", "phases[0].discount_code"])
      expect((await upcoming(k, a)).amount).toBe("15.00")
      for (const month of ["02", "03"]) await advance(k, `2026-${month}-01T00:00:00Z`)
      // b is released in its second phase: its third phase (10 % off) never starts
      expect((await api.call("POST", `/api/v1/subscription/${b}/schedule/release`, k)).status).toBe(200)
      expect((await subscription(k, b)).discounts.map((d: any) => d.discount_code)).toEqual(["HALF"])
      for (const month of ["04", "05", "06"]) await advance(k, `2026-${month}-01T00:00:00Z`)
      expect((await invoices(k, a)).map((i: any) => i[1])).toEqual([
        "30.00",
        "15.00",
        "15.00",
        "30.00",
        "27.00",
        "30.00"
      ])
      expect((await invoices(k, b)).map((i: any) => i[1])).toEqual([
        "30.00",
        "15.00",
        "15.00",
        "30.00",
        "30.00",
        "30.00"
      ])
      const half = ((await api.call("GET", "/api/v1/discounts?code=HALF", k)).body as any).data.list[0]
      expect(half.times_redeemed).toBe(2)
    })

    it("a renewal run twice at a phase boundary (concurrently, then once more) starts the phase and bills it once", async () => {
      const { k, m } = await fresh()
      const base = await api.priceOf(k)
      const other = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "45.00" } })
      const sub = await subscribe(k, base.priceId)
      expect(
        (
          await schedule(k, sub, {
            start: "next_period",
            phases: [{ items: [{ price_id: other.priceId }], cycles: 2 }]
          })
        ).status
      ).toBe(200)
      // the clock reaches the boundary without running the worker: two renewals race, a third reruns
      const renew = () =>
        api.runtime.runPromise(
          Renewals.Renewals.use((r) => r.renew(m, sub)).pipe(
            Effect.as("renewed"),
            Effect.catch((e) => Effect.succeed(e._tag))
          )
        )
      await api.runtime.runPromise(
        Effect.gen(function* () {
          const merchants = (yield* Store.Storage).repository(Entities.merchant)
          const current = Option.getOrThrow(yield* merchants.get(m, m))
          const moved = { ...current.value, frozen_time: DateTime.makeUnsafe(Date.parse("2026-02-01T00:00:00Z")) }
          yield* Effect.orDie(merchants.update(new Merchant.Merchant(moved, { disableChecks: true }), current.version))
        })
      )
      const raced = await Promise.all([renew(), renew()])
      expect(raced).toContain("renewed")
      expect(await renew()).toBe("renewed")
      expect(await invoices(k, sub)).toEqual([
        [0, "30.00", base.priceId],
        [1, "45.00", other.priceId]
      ])
      const sc = await scheduleOf(k, sub)
      expect([sc.status, sc.current_phase]).toEqual(["active", 0])
      expect(await events(k, sc.id)).toEqual(["v2.subscription_schedule.phase_started"])
    })
  })
}
