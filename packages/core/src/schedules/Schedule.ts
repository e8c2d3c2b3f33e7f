/**
 * A subscription schedule: phases that follow each other on a subscription's renewal
 * boundaries (an intro price for three cycles then the standard price; 10 seats this year, 20
 * the next), each billed by the renewal that opens its first cycle, and what happens at the end
 * of the last one (`release`: the subscription keeps it; `cancel`: it cancels). Pure: the
 * entity, its moves through the {@link ScheduleMachine.schedule} machine and the cycle rules.
 *
 * @since 0.1.0
 */
import { DateTime, Option, type Result, Schema } from "effect"
import { NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { ScheduleStatus, type ScheduleTrigger } from "./ScheduleMachine.js"

/** Most phases a schedule has. @since 0.1.0 */
export const MAX_PHASES = 10

/** Most items a phase has: as many as a subscription. @since 0.1.0 */
export const MAX_ITEMS = Subscription.MAX_ITEMS

/** Most cycles one phase lasts. @since 0.1.0 */
export const MAX_PHASE_CYCLES = 120

/**
 * One item of a phase: a recurring price (the version in force when the schedule was created,
 * `price_version_id`) and its quantity.
 *
 * @since 0.1.0
 */
export class ScheduleItem extends Schema.Class<ScheduleItem>("ScheduleItem")({
  price_id: Schema.String,
  price_version_id: Schema.String,
  quantity: Schema.String
}) {}

/**
 * One phase: its items, an optional discount for its cycles, and the cycles it covers
 * (`start_cycle` up to, not including, `end_cycle`: the subscription's `cycle_index`es), with
 * the dates of those boundaries.
 *
 * @since 0.1.0
 */
export class SchedulePhase extends Schema.Class<SchedulePhase>("SchedulePhase")({
  items: Schema.Array(ScheduleItem),
  discount_id: NullableString,
  discount_code: NullableString,
  cycles: Schema.Int,
  start_cycle: Schema.Int,
  end_cycle: Schema.Int,
  start_date: NullableTimestamp,
  end_date: NullableTimestamp
}) {}

/**
 * A subscription schedule as the API shows it. `current_phase` is the index of the phase in
 * force (`null` before the first starts).
 *
 * @since 0.1.0
 */
export class SubscriptionSchedule extends Schema.Class<SubscriptionSchedule>("SubscriptionSchedule")({
  id: Schema.String,
  subscription_id: Schema.String,
  customer_id: Schema.String,
  status: ScheduleStatus,
  end_behavior: Schema.Literals(["release", "cancel"]),
  current_phase: Schema.NullOr(Schema.Int),
  phases: Schema.Array(SchedulePhase),
  created_at: Timestamp,
  updated_at: Timestamp,
  released_at: NullableTimestamp,
  canceled_at: NullableTimestamp,
  completed_at: NullableTimestamp
}) {}

/**
 * Moves a schedule by `trigger` (the schedule machine), stamping `updated_at` and the patch;
 * the only way its `status` changes.
 *
 * @since 0.1.0
 */
export const move = (
  schedule: SubscriptionSchedule,
  trigger: ScheduleTrigger,
  at: number,
  patch: Partial<Omit<SubscriptionSchedule, "status">> = {}
): Result.Result<Lifecycle.Moved<SubscriptionSchedule>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.schedule,
    schedule.status,
    trigger,
    (to) =>
      new SubscriptionSchedule(
        { ...schedule, ...patch, status: to, updated_at: DateTime.makeUnsafe(at) },
        { disableChecks: true }
      )
  )

/**
 * Whether the schedule still governs its subscription (not started or active): its phases
 * decide the subscription's price and quantity, and a manual change is refused.
 *
 * @since 0.1.0
 */
export const governs = (schedule: SubscriptionSchedule | null): schedule is SubscriptionSchedule =>
  schedule !== null && (schedule.status === "not_started" || schedule.status === "active")

/**
 * The cycle after the last phase: the renewal that would open it ends the schedule.
 *
 * @since 0.1.0
 */
export const endCycle = (schedule: SubscriptionSchedule): number => schedule.phases.at(-1)!.end_cycle

/**
 * The index of the phase that cycle `cycle` bills, or undefined outside the phases.
 *
 * @since 0.1.0
 */
export const phaseOf = (schedule: SubscriptionSchedule, cycle: number): number | undefined => {
  const i = schedule.phases.findIndex((p) => p.start_cycle <= cycle && cycle < p.end_cycle)
  return i < 0 ? undefined : i
}

/**
 * What a governing schedule does at the renewal that opens cycle `cycle`: start phase `phase`
 * (its first cycle), end (`end`: the cycle after the last phase, by its end behavior), or nothing.
 *
 * @since 0.1.0
 */
export type Step =
  | { readonly _tag: "None" }
  | { readonly _tag: "Start"; readonly phase: number; readonly trigger: "start" | "next_phase" }
  | { readonly _tag: "End"; readonly trigger: "end_release" | "end_cancel" }

/**
 * The {@link Step} of `schedule` at the renewal that opens `cycle`. A phase starts once: a
 * schedule already in that phase (`current_phase`) does nothing.
 *
 * @since 0.1.0
 */
export const stepAt = (schedule: SubscriptionSchedule | null, cycle: number): Step => {
  if (!governs(schedule)) return { _tag: "None" }
  if (cycle >= endCycle(schedule))
    return { _tag: "End", trigger: schedule.end_behavior === "cancel" ? "end_cancel" : "end_release" }
  const phase = schedule.phases.findIndex((p) => p.start_cycle === cycle)
  if (phase < 0 || phase === schedule.current_phase) return { _tag: "None" }
  return { _tag: "Start", phase, trigger: schedule.status === "not_started" ? "start" : "next_phase" }
}

/**
 * Lays phases of `cycles` each end to end from `firstCycle`: the start and end cycle of each,
 * contiguous (each phase starts where the one before ends).
 *
 * @example
 * layout(3, [3, 12]) // [{ start_cycle: 3, end_cycle: 6 }, { start_cycle: 6, end_cycle: 18 }]
 * @since 0.1.0
 */
export const layout = (
  firstCycle: number,
  cycles: ReadonlyArray<number>
): ReadonlyArray<{ readonly start_cycle: number; readonly end_cycle: number }> => {
  let start = firstCycle
  return cycles.map((n) => {
    const span = { start_cycle: start, end_cycle: start + n }
    start += n
    return span
  })
}

/**
 * The schedule with the dates of its cycles from `fromCycle` on computed again by `periodOf`
 * (a cycle's period on the subscription's calendar), stamped at `at`: a resume after a pause
 * starts cycle `fromCycle` at the resume, so the phases still to come (and the end of the one in
 * force) move with it. Cycles — what the renewals bill — do not change; earlier dates stay.
 *
 * @example
 * redated(schedule, 4, periodOf, at) // phases from cycle 4 dated from the resume on
 * @since 0.1.0
 */
export const redated = (
  schedule: SubscriptionSchedule,
  fromCycle: number,
  periodOf: (cycle: number) => Option.Option<{ readonly start: number; readonly end: number }>,
  at: number
): SubscriptionSchedule => {
  const date = (cycle: number, edge: "start" | "end", was: DateTime.Utc | null) =>
    cycle < fromCycle
      ? was
      : Option.match(periodOf(cycle), { onNone: () => was, onSome: (p) => DateTime.makeUnsafe(p[edge]) })
  return new SubscriptionSchedule(
    {
      ...schedule,
      phases: schedule.phases.map(
        (p) =>
          new SchedulePhase(
            {
              ...p,
              start_date: date(p.start_cycle, "start", p.start_date),
              end_date: date(p.end_cycle - 1, "end", p.end_date)
            },
            { disableChecks: true }
          )
      ),
      updated_at: DateTime.makeUnsafe(at)
    },
    { disableChecks: true }
  )
}
