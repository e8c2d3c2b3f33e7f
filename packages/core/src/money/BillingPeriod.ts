/**
 * Billing periods: anniversary-based from the subscription's anchor, in UTC.
 *
 * Every boundary is computed from the anchor (never from the previous boundary), so
 * month-end clamping returns to the anchor day when it exists again:
 * Jan 31 → Feb 29 (leap) / Feb 28 → Mar 31. `week` is 7 days, `quarter` is 3 months.
 *
 * @since 0.1.0
 */
import { Option, Schema } from "effect"

/**
 * The units a billing cycle or a trial can be expressed in.
 *
 * @since 0.1.0
 */
export const IntervalUnit = Schema.Literals(["day", "week", "month", "quarter", "year"])

/**
 * @since 0.1.0
 */
export type IntervalUnit = typeof IntervalUnit.Type

/**
 * The seed's `billing_cycle_unit` values. `customer-initiated` renews only on request and
 * `over_threshold` when accrued usage reaches the threshold: neither has an automatic end.
 *
 * @since 0.1.0
 */
export const BillingCycleUnit = Schema.Literals([
  "week",
  "month",
  "quarter",
  "year",
  "customer-initiated",
  "over_threshold"
])

/**
 * @since 0.1.0
 */
export type BillingCycleUnit = typeof BillingCycleUnit.Type

const DAY_MS = 86_400_000

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month + 1, 0)).getUTCDate()

/**
 * `count` intervals after `fromMs` (may be negative), clamping month-based steps to the last
 * day of the target month. Time of day is kept.
 *
 * @example
 * BillingPeriod.add(Date.UTC(2024, 0, 31), "month", 1) // 2024-02-29T00:00Z
 * @since 0.1.0
 */
export const add = (fromMs: number, unit: IntervalUnit, count: number): number => {
  switch (unit) {
    case "day":
      return fromMs + count * DAY_MS
    case "week":
      return fromMs + count * 7 * DAY_MS
    case "month":
    case "quarter":
    case "year": {
      const months = count * (unit === "month" ? 1 : unit === "quarter" ? 3 : 12)
      const d = new Date(fromMs)
      const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + months
      const year = Math.floor(total / 12)
      const month = total - year * 12
      const day = Math.min(d.getUTCDate(), daysInMonth(year, month))
      return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
    }
  }
}

/**
 * How a subscription's periods are laid out.
 *
 * @since 0.1.0
 */
export interface Schedule {
  /** The anniversary instant (Unix ms): start of cycle 0 of paid billing. */
  readonly anchor: number
  readonly unit: BillingCycleUnit
  /** `billing_cycle_count`: e.g. 3 with `month` bills every 3 months. */
  readonly count: number
  /** Fixed term: the number of cycles after which the subscription ends. */
  readonly totalCycles?: number | undefined
}

/**
 * One billing period, `[start, end)` in Unix ms.
 *
 * @since 0.1.0
 */
export interface Period {
  readonly index: number
  readonly start: number
  readonly end: number
}

/**
 * Whether the schedule advances on its own (calendar units) or only when asked
 * (`customer-initiated`, `over_threshold`).
 *
 * @since 0.1.0
 */
export const isCalendar = (unit: BillingCycleUnit): unit is "week" | "month" | "quarter" | "year" =>
  unit === "week" || unit === "month" || unit === "quarter" || unit === "year"

/**
 * The period with the given index (0-based) of a calendar schedule, or `None` for a schedule
 * without automatic periods or past a fixed term.
 *
 * @since 0.1.0
 */
export const period = (schedule: Schedule, index: number): Option.Option<Period> => {
  if (!isCalendar(schedule.unit) || index < 0) return Option.none()
  if (schedule.totalCycles !== undefined && index >= schedule.totalCycles) return Option.none()
  return Option.some({
    index,
    start: add(schedule.anchor, schedule.unit, index * schedule.count),
    end: add(schedule.anchor, schedule.unit, (index + 1) * schedule.count)
  })
}

/**
 * The period containing `instant`, or `None` before the anchor, after a fixed term, or for a
 * non-calendar schedule.
 *
 * @since 0.1.0
 */
export const periodAt = (schedule: Schedule, instant: number): Option.Option<Period> => {
  if (!isCalendar(schedule.unit) || instant < schedule.anchor) return Option.none()
  // The longest a period can be, so the first guess never overshoots; then walk forward.
  const longest =
    (schedule.unit === "week" ? 7 : schedule.unit === "month" ? 31 : schedule.unit === "quarter" ? 92 : 366) * DAY_MS
  let index = Math.floor((instant - schedule.anchor) / (longest * schedule.count))
  for (;;) {
    const p = period(schedule, index)
    if (Option.isNone(p)) return p
    if (instant < p.value.end) return instant >= p.value.start ? p : Option.none()
    index++
  }
}

/**
 * `n` consecutive periods starting at index `from`.
 *
 * @since 0.1.0
 */
export const periods = (schedule: Schedule, from: number, n: number): ReadonlyArray<Period> => {
  const out: Array<Period> = []
  for (let i = from; i < from + n; i++) {
    const p = period(schedule, i)
    if (Option.isNone(p)) break
    out.push(p.value)
  }
  return out
}

/**
 * Whether a fixed-term schedule has no period after `index`.
 *
 * @since 0.1.0
 */
export const isLastCycle = (schedule: Schedule, index: number): boolean =>
  schedule.totalCycles !== undefined && index >= schedule.totalCycles - 1

/**
 * The seed's `trial_period` object.
 *
 * @since 0.1.0
 */
export interface TrialPeriod {
  readonly trial_period_unit: IntervalUnit
  readonly trial_period_count: number
}

/**
 * When a trial that starts at `start` ends.
 *
 * @since 0.1.0
 */
export const trialEnd = (start: number, trial: TrialPeriod): number =>
  add(start, trial.trial_period_unit, trial.trial_period_count)

/**
 * The length of a period in milliseconds.
 *
 * @since 0.1.0
 */
export const lengthMs = (p: Pick<Period, "start" | "end">): number => p.end - p.start
