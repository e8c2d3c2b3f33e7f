/**
 * Schedules as pure functions: phases laid end to end cover contiguous cycles, and renewing a
 * subscription cycle after cycle through `RenewalPlan` (the schedule's step, `bill`, `advance`)
 * bills each cycle at exactly one phase's price and quantity, starts each phase once, and ends
 * the schedule by its end behavior; phases of several items set the extra items once, at their
 * start; a resume moves the dates of the phases to come.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { DateTime, Option, Result } from "effect"
import { type Entities, Lifecycle, PhaseItems, Price, RenewalPlan, Schedule, Subscription } from "../../src/index.js"
import { priceVersion } from "../fixtures.js"
import { prop } from "../prop.js"

const at0 = Date.UTC(2026, 0, 1)
const dt = (ms: number) => DateTime.makeUnsafe(ms)

/** A price version of `amount` a month, with its own ids. */
const version = (i: number, amount: string) => {
  const base = priceVersion()
  return priceVersion({
    id: `pri_${i}`,
    price_version_id: `prv_${i}`,
    price_plan: new Price.PricePlan({ ...base.price_plan!, base_price_val: amount })
  })
}

/** An active monthly subscription anchored on 2026-01-01 in cycle `cycle` of `pv` × `quantity`. */
const record = (pv: Price.PriceVersion, cycle: number, quantity: string): Entities.SubscriptionRecord => ({
  merchant_id: "mch_1",
  extra_items: [],
  pending_prorations: [],
  anchor: at0,
  trial_end: null,
  payment_token: "tok",
  payment_method: null,
  scheduled_price_version_id: null,
  dunning_attempts: 0,
  accrued_usage: "0",
  fx_rate: null,
  currency: "USD",
  convert_to_continuous: false,
  paused_at: null,
  anchor_cycle: 0,
  plan_basis: null,
  discounts: [],
  owed_refunds: [],
  credited: [],
  moved: [],
  subscription: new Subscription.Subscription({
    id: "sub_1",
    customer_id: "cus_1",
    email: null,
    cancel_reason: null,
    sub_merchant_id: null,
    status: "active",
    price_id: pv.id,
    current_period_start: dt(Date.UTC(2026, cycle, 1)),
    current_period_end: dt(Date.UTC(2026, cycle + 1, 1)),
    next_invoice_date: dt(Date.UTC(2026, cycle + 1, 1)),
    created_at: dt(at0),
    updated_at: dt(at0),
    cancel_at: null,
    order_id: null,
    source_trade_id: null,
    price_type: pv.price_type,
    price_version_id: pv.price_version_id,
    first_source_channel: null,
    last_source_channel: null,
    quantity,
    quantity_unit: null,
    payment_timing: pv.payment_timing,
    billing_dimension: "quantity",
    quantity_tier_type: null,
    price_tier_type: null,
    usage_amount: null,
    merchant_price_id: null,
    cycle_index: cycle,
    total_cycles: null,
    metadata: {},
    quantity_tiers: [],
    usage_tiers: [],
    pending_change: null,
    billing_cycle_unit: "month",
    cancel_at_period_end: false,
    credit_balance: "0.00"
  })
})

/** A schedule of phases (price index, quantity, cycles) from `first`, not started. */
const scheduleOf = (
  phases: ReadonlyArray<readonly [number, number, number]>,
  first: number,
  endBehavior: "release" | "cancel"
) => {
  const spans = Schedule.layout(
    first,
    phases.map(([, , n]) => n)
  )
  return new Schedule.SubscriptionSchedule({
    id: "sch_1",
    subscription_id: "sub_1",
    customer_id: "cus_1",
    status: Lifecycle.schedule.initial,
    end_behavior: endBehavior,
    current_phase: null,
    phases: phases.map(
      ([p, q, n], i) =>
        new Schedule.SchedulePhase({
          items: [
            new Schedule.ScheduleItem({ price_id: `pri_${p}`, price_version_id: `prv_${p}`, quantity: String(q) })
          ],
          discount_id: null,
          discount_code: null,
          cycles: n,
          start_cycle: spans[i]!.start_cycle,
          end_cycle: spans[i]!.end_cycle,
          start_date: null,
          end_date: null
        })
    ),
    created_at: dt(at0),
    updated_at: dt(at0),
    released_at: null,
    canceled_at: null,
    completed_at: null
  })
}

const prices = ["10.00", "30.00", "49.00", "12.00"].map((a, i) => version(i, a))

describe("Schedule", () => {
  prop(
    "phases laid end to end cover contiguous cycles: every cycle of the span is in exactly one phase",
    [fc.integer({ min: 0, max: 50 }), fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 10 })],
    ([first, cycles]) => {
      const spans = Schedule.layout(first, cycles)
      expect(spans[0]!.start_cycle).toBe(first)
      for (const [i, s] of spans.entries()) {
        expect(s.end_cycle - s.start_cycle).toBe(cycles[i])
        if (i > 0) expect(s.start_cycle).toBe(spans[i - 1]!.end_cycle)
      }
      const sc = scheduleOf(
        cycles.map((n, i) => [i % prices.length, 1, n] as const),
        first,
        "release"
      )
      const end = Schedule.endCycle(sc)
      expect(end).toBe(first + cycles.reduce((a, b) => a + b, 0))
      for (let c = first; c < end; c++) {
        const owners = spans.filter((s) => s.start_cycle <= c && c < s.end_cycle)
        expect(owners).toHaveLength(1)
        expect(Schedule.phaseOf(sc, c)).toBe(spans.indexOf(owners[0]!))
      }
      expect(Schedule.phaseOf(sc, end)).toBeUndefined()
      expect(Schedule.phaseOf(sc, first - 1)).toBeUndefined()
    },
    { numRuns: 200 }
  )

  prop(
    "renewing cycle after cycle bills each cycle at its phase's price × quantity, starts each phase once, then ends",
    [
      fc.array(
        fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 25 }), fc.integer({ min: 1, max: 4 })),
        { minLength: 1, maxLength: 5 }
      ),
      fc.boolean(),
      fc.constantFrom<"release" | "cancel">("release", "cancel")
    ],
    ([phases, nextPeriod, endBehavior]) => {
      const first = nextPeriod ? 1 : 0
      const [p0, q0] = phases[0]!
      // from the current period, the subscription bills phase 0 already; from the next, another price
      let rec: Entities.SubscriptionRecord = {
        ...record(nextPeriod ? prices[3]! : prices[p0]!, 0, nextPeriod ? "7" : String(q0)),
        schedule: scheduleOf(phases, first, endBehavior)
      }
      if (!nextPeriod)
        rec = {
          ...rec,
          schedule: Result.getOrThrow(Schedule.move(rec.schedule!, "start", at0, { current_phase: 0 })).value
        }
      const started = new Map<number, number>()
      const end = Schedule.endCycle(rec.schedule!)
      for (let cycle = 1; cycle <= end + 1; cycle++) {
        const at = Date.UTC(2026, cycle, 1)
        const decision = RenewalPlan.decide(rec, at)
        const stepped = RenewalPlan.scheduleStep(rec, at, decision._tag !== "Bill")
        if (decision._tag !== "Bill") {
          // only a cancel end behavior stops the renewals, at the cycle after the last phase
          expect([decision._tag, endBehavior, cycle]).toEqual(["CancelAtPeriodEnd", "cancel", end])
          expect(stepped.schedule?.status).toBe("completed")
          expect(stepped.events).toEqual(["v2.subscription_schedule.completed"])
          return
        }
        if (stepped.events.includes("v2.subscription_schedule.phase_started")) {
          const k = stepped.schedule!.current_phase!
          started.set(k, (started.get(k) ?? 0) + 1)
        }
        const next = stepped.rec
        const byId = (id: string) => prices.find((p) => p.price_version_id === id)!
        const inForce = byId(next.subscription.price_version_id)
        const billed = next.scheduled_price_version_id !== null ? byId(next.scheduled_price_version_id) : inForce
        const b = Result.getOrThrow(RenewalPlan.bill(next, inForce, billed, []))
        // the phase of this cycle, or the last one after the schedule released
        const phase = phases[Schedule.phaseOf(rec.schedule!, cycle) ?? phases.length - 1]!
        const expected =
          BigInt(Math.round(Number(prices[phase[0]]!.price_plan!.base_price_val) * 100)) * BigInt(phase[1])
        expect([cycle, b.draft.subtotal.amount]).toEqual([cycle, expected])
        rec = RenewalPlan.advance(next, billed, b, b.draft, at).next
        expect(rec.subscription.quantity).toBe(String(phase[1]))
        // a rerun of the same renewal (the cycle already advanced) is not due and steps nothing
        expect(RenewalPlan.decide(rec, at)._tag).toBe("NotDue")
      }
      expect(endBehavior).toBe("release")
      expect(rec.schedule!.status).toBe("released")
      for (let k = nextPeriod ? 0 : 1; k < phases.length; k++) expect(started.get(k)).toBe(1)
      expect(started.has(0)).toBe(nextPeriod)
      expect(Option.isSome(Option.fromNullishOr(rec.schedule))).toBe(true)
    },
    { numRuns: 150 }
  )

  it("a schedule that no longer governs steps nothing; a subscription ending early cancels a governing one", () => {
    const sc = scheduleOf([[1, 1, 2]], 1, "release")
    const rec: Entities.SubscriptionRecord = { ...record(prices[0]!, 0, "1"), schedule: sc }
    const released = Result.getOrThrow(Schedule.move(sc, "release", at0)).value
    expect(Schedule.stepAt(released, 1)).toEqual({ _tag: "None" })
    const ended = RenewalPlan.scheduleStep(rec, at0, true)
    expect([ended.schedule?.status, ended.events]).toEqual(["canceled", ["v2.subscription_schedule.canceled"]])
    expect(Result.isFailure(Schedule.move(released, "cancel", at0))).toBe(true)
  })
})

/** A phase of several items: (price index, quantity) each, lasting `cycles`, from `first`. */
const itemsPhase = (
  items: ReadonlyArray<readonly [number, number]>,
  span: { start_cycle: number; end_cycle: number }
) =>
  new Schedule.SchedulePhase({
    items: items.map(
      ([p, q]) => new Schedule.ScheduleItem({ price_id: `pri_${p}`, price_version_id: `prv_${p}`, quantity: String(q) })
    ),
    discount_id: null,
    discount_code: null,
    cycles: span.end_cycle - span.start_cycle,
    start_cycle: span.start_cycle,
    end_cycle: span.end_cycle,
    start_date: null,
    end_date: null
  })

const versions = new Map(prices.map((p) => [p.price_version_id, p]))

describe("Schedule phases of several items", () => {
  // the ramp deal: Team 49.00 × 1 + Seats 12.00 × 10 for 2 cycles, then Team × 1 + Seats × 20
  const ramp = (first: number) => {
    const [a, b] = Schedule.layout(first, [2, 2])
    return new Schedule.SubscriptionSchedule({
      ...scheduleOf([[2, 1, 1]], first, "release"),
      phases: [
        itemsPhase(
          [
            [2, 1],
            [3, 10]
          ],
          a!
        ),
        itemsPhase(
          [
            [2, 1],
            [3, 20]
          ],
          b!
        )
      ]
    })
  }

  it("renewing through a ramp deal bills each cycle one line per item and sets the extra items once per phase", () => {
    let rec: Entities.SubscriptionRecord = { ...record(prices[1]!, 0, "1"), schedule: ramp(1) }
    const subtotals: Array<[number, bigint, ReadonlyArray<string>]> = []
    const ids = new Set<string>()
    let n = 0
    for (let cycle = 1; cycle <= 6; cycle++) {
      const at = Date.UTC(2026, cycle, 1)
      const phase = PhaseItems.starting(rec)
      const extras = phase === undefined ? undefined : PhaseItems.extraTerms(phase, rec, versions, [`si_new${n++}`], at)
      const stepped = RenewalPlan.scheduleStep(rec, at, false, extras)
      const next = stepped.rec
      const inForce = versions.get(next.subscription.price_version_id)!
      const billed = next.scheduled_price_version_id !== null ? versions.get(next.scheduled_price_version_id)! : inForce
      const b = Result.getOrThrow(RenewalPlan.bill(next, inForce, billed, []))
      subtotals.push([cycle, b.draft.subtotal.amount, b.draft.lines.map((l) => `${l.quantity}×${l.amount.amount}`)])
      rec = RenewalPlan.advance(next, billed, b, b.draft, at).next
      for (const x of rec.extra_items) ids.add(x.id)
      // a rerun finds the cycle advanced: not due, nothing starts again
      expect(RenewalPlan.decide(rec, at)._tag).toBe("NotDue")
      expect(PhaseItems.starting(rec)?.start_cycle).not.toBe(cycle)
    }
    expect(subtotals).toEqual([
      [1, 16900n, ["1×4900", "10×12000"]],
      [2, 16900n, ["1×4900", "10×12000"]],
      [3, 28900n, ["1×4900", "20×24000"]],
      [4, 28900n, ["1×4900", "20×24000"]],
      [5, 28900n, ["1×4900", "20×24000"]],
      [6, 28900n, ["1×4900", "20×24000"]]
    ])
    // the seats are one item throughout: the second phase kept the first phase's item
    expect([...ids]).toEqual(["si_new0"])
    expect(rec.schedule!.status).toBe("released")
    expect(rec.subscription.price_id).toBe("pri_2")
    expect(rec.extra_items.map((x) => [x.price_id, x.quantity, x.created_at])).toEqual([
      ["pri_3", "20", Date.UTC(2026, 1, 1)]
    ])
    // the plan basis is the whole phase: 49.00 + 20 × 12.00
    expect(rec.plan_basis).toBe("289.00")
  })

  prop(
    "phases of 1–4 items: every cycle bills the sum of its phase's items, each phase sets them once, an item keeps its id",
    [
      fc.array(
        fc.tuple(
          fc.subarray([0, 1, 2, 3], { minLength: 1 }),
          fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 4, maxLength: 4 }),
          fc.integer({ min: 1, max: 3 })
        ),
        { minLength: 1, maxLength: 4 }
      )
    ],
    ([drawn]) => {
      const spans = Schedule.layout(
        1,
        drawn.map(([, , n]) => n)
      )
      const phases = drawn.map(([ps, qs], i) =>
        itemsPhase(
          ps.map((p) => [p, qs[p]!] as const),
          spans[i]!
        )
      )
      let rec: Entities.SubscriptionRecord = {
        ...record(prices[1]!, 0, "1"),
        schedule: new Schedule.SubscriptionSchedule({ ...scheduleOf([[1, 1, 1]], 1, "release"), phases })
      }
      const idOf = new Map<string, string>()
      let made = 0
      const end = Schedule.endCycle(rec.schedule!)
      for (let cycle = 1; cycle < end; cycle++) {
        const at = Date.UTC(2026, cycle, 1)
        const phase = PhaseItems.starting(rec)
        const fresh = Array.from({ length: 4 }, (_, n) => `si_${made + n}`)
        const extras = phase === undefined ? undefined : PhaseItems.extraTerms(phase, rec, versions, fresh, at)
        made += extras?.filter((x) => !rec.extra_items.some((y) => y.id === x.id)).length ?? 0
        const next = RenewalPlan.scheduleStep(rec, at, false, extras).rec
        const inForce = versions.get(next.subscription.price_version_id)!
        const billed =
          next.scheduled_price_version_id !== null ? versions.get(next.scheduled_price_version_id)! : inForce
        const b = Result.getOrThrow(RenewalPlan.bill(next, inForce, billed, []))
        const [ps, qs] = drawn[Schedule.phaseOf(rec.schedule!, cycle)!]!
        const expected = ps.reduce(
          (sum, p) => sum + BigInt(Math.round(Number(prices[p]!.price_plan!.base_price_val) * 100)) * BigInt(qs[p]!),
          0n
        )
        expect([cycle, b.draft.subtotal.amount, b.draft.lines.length]).toEqual([cycle, expected, ps.length])
        const before = rec.extra_items
        rec = RenewalPlan.advance(next, billed, b, b.draft, at).next
        // an item after the base one keeps its id while its price stays one; a new one gets a new id
        for (const x of rec.extra_items) {
          const was = before.find((y) => y.price_id === x.price_id)
          if (was !== undefined) expect(x.id).toBe(was.id)
          else expect([...idOf.values()]).not.toContain(x.id)
          idOf.set(x.price_id, x.id)
        }
        expect(rec.extra_items.map((x) => x.price_id)).toEqual(ps.slice(1).map((p) => `pri_${p}`))
      }
    },
    { numRuns: 100 }
  )

  it("a phase of one item drops the extra items; a phase of several whose items were not resolved is a defect", () => {
    const withSeats: Entities.SubscriptionRecord = {
      ...record(prices[2]!, 0, "1"),
      extra_items: [
        {
          id: "si_seats",
          price_id: "pri_3",
          price_version_id: "prv_3",
          quantity: "10",
          created_at: at0,
          version: prices[3]!
        }
      ],
      schedule: scheduleOf([[1, 1, 2]], 1, "release")
    }
    const stepped = RenewalPlan.scheduleStep(withSeats, Date.UTC(2026, 1, 1))
    expect([stepped.rec.extra_items, stepped.rec.scheduled_price_version_id]).toEqual([[], "prv_1"])
    expect(() => RenewalPlan.scheduleStep({ ...withSeats, schedule: ramp(1) }, Date.UTC(2026, 1, 1))).toThrow(
      /not resolved/
    )
    // resolved, the seats keep their id and change quantity; a new price gets a new id
    const phase = itemsPhase(
      [
        [2, 1],
        [3, 20],
        [0, 1]
      ],
      { start_cycle: 1, end_cycle: 2 }
    )
    expect(
      PhaseItems.extraTerms(phase, withSeats, versions, ["si_fresh"], 7).map((x) => [
        x.id,
        x.price_id,
        x.quantity,
        x.created_at
      ])
    ).toEqual([
      ["si_seats", "pri_3", "20", at0],
      ["si_fresh", "pri_0", "1", 7]
    ])
  })

  it("a resume moves the dates of the phases to come; the cycles and the dates before stay", () => {
    const sc = ramp(1)
    const dated = new Schedule.SubscriptionSchedule({
      ...sc,
      phases: sc.phases.map(
        (p) =>
          new Schedule.SchedulePhase({
            ...p,
            start_date: dt(Date.UTC(2026, p.start_cycle, 1)),
            end_date: dt(Date.UTC(2026, p.end_cycle, 1))
          })
      )
    })
    // resumed on 2026-02-10 in cycle 1: cycle 2 starts then, one month each
    const resumedAt = Date.UTC(2026, 1, 10)
    const periodOf = (cycle: number) =>
      Option.some({ start: Date.UTC(2026, 1 + cycle - 2, 10), end: Date.UTC(2026, 2 + cycle - 2, 10) })
    const moved = Schedule.redated(dated, 2, periodOf, resumedAt)
    expect(moved.phases.map((p) => [p.start_cycle, p.end_cycle, p.start_date, p.end_date].map(String))).toEqual([
      ["1", "3", String(dt(Date.UTC(2026, 1, 1))), String(dt(Date.UTC(2026, 2, 10)))],
      ["3", "5", String(dt(Date.UTC(2026, 2, 10))), String(dt(Date.UTC(2026, 4, 10)))]
    ])
    expect(moved.updated_at).toEqual(dt(resumedAt))
  })
})
