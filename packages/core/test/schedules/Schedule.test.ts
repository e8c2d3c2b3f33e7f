/**
 * Schedules as pure functions: phases laid end to end cover contiguous cycles, and renewing a
 * subscription cycle after cycle through `RenewalPlan` (the schedule's step, `bill`, `advance`)
 * bills each cycle at exactly one phase's price and quantity, starts each phase once, and ends
 * the schedule by its end behavior.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { DateTime, Option, Result } from "effect"
import { type Entities, Lifecycle, Price, RenewalPlan, Schedule, Subscription } from "../../src/index.js"
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
