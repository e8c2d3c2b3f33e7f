/**
 * A chosen billing cycle anchor (Stripe's `billing_cycle_anchor`, Kill Bill's billing cycle day):
 * the instant whose anniversaries the subscription's periods start on, e.g. the 1st of the month.
 *
 * The first period runs from the first payment to the anchor (a short period, "stub"); it is
 * cycle 0 and is charged as the part of a whole period it covers under the merchant's proration
 * policy ({@link firstShare}), or nothing when the checkout asked `proration_behavior: none`.
 * Every later period runs anchor to anchor, computed from the anchor as every schedule is
 * (`BillingPeriod`: day 31 clamps to a short month's last day and comes back).
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import type * as Price from "../catalog/Price.js"
import type * as Entities from "../kernel/Entities.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as Proration from "../money/Proration.js"

/**
 * Whether the short first period is prorated (`create_prorations`, the default) or free (`none`).
 *
 * @since 0.1.0
 */
export type Behavior = "create_prorations" | "none"

/**
 * The calendar interval a recurring price bills by, or `null` when it has none (one-time,
 * customer-initiated, over-threshold).
 *
 * @since 0.1.0
 */
export const intervalOf = (
  pv: Price.PriceVersion
): { readonly unit: "week" | "month" | "quarter" | "year"; readonly count: number } | null => {
  const unit = pv.price_plan?.billing_cycle_unit
  return pv.billing_type === "recurring" && unit !== undefined && BillingPeriod.isCalendar(unit)
    ? { unit, count: pv.price_plan?.billing_cycle_count ?? 1 }
    : null
}

/**
 * Why `anchor` cannot anchor a checkout of `pv` opened at `at` (`withTrial`: the payer gets a
 * trial), or `undefined` when it can: the price must bill by a calendar interval, come without
 * a trial (a trial's end is its anchor, as in Stripe's Checkout), and the anchor must be after
 * `at` and at most one interval after it.
 *
 * @example
 * BillingAnchor.refusal(Date.UTC(2026, 2, 1), Date.UTC(2026, 0, 15), monthly, false)
 * // "must be at most one billing interval (1 month) after now, 2026-02-15T00:00:00Z"
 * @since 0.1.0
 */
export const refusal = (anchor: number, at: number, pv: Price.PriceVersion, withTrial: boolean): string | undefined => {
  const interval = intervalOf(pv)
  if (interval === null) return "needs a recurring price billed every week, month, quarter or year"
  if (withTrial) return "cannot be combined with a trial: the trial's end anchors the subscription"
  if (anchor <= at) return `must be in the future (after ${iso(at)})`
  const latest = BillingPeriod.add(at, interval.unit, interval.count)
  if (anchor > latest)
    return `must be at most one billing interval (${interval.count} ${interval.unit}) after now, ${iso(latest)}`
  return undefined
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, "Z")

/**
 * The anchor in force for a first payment at `at`: `anchor` itself, or its first anniversary
 * after `at` when the payment comes at or after it (a session paid late keeps its anchor day).
 *
 * @example
 * BillingAnchor.effective(Date.UTC(2026, 1, 1), "month", 1, Date.UTC(2026, 1, 1, 9)) // 2026-03-01
 * @since 0.1.0
 */
export const effective = (anchor: number, unit: BillingPeriod.IntervalUnit, count: number, at: number): number => {
  let k = 0
  while (BillingPeriod.add(anchor, unit, k * count) <= at) k++
  return BillingPeriod.add(anchor, unit, k * count)
}

/**
 * The whole period that ends at `anchor`: what the short first period is a part of, and the
 * span a change during it is prorated over.
 *
 * @since 0.1.0
 */
export const wholePeriodBefore = (
  anchor: number,
  unit: BillingPeriod.IntervalUnit,
  count: number
): BillingPeriod.Period => ({ index: -1, start: BillingPeriod.add(anchor, unit, -count), end: anchor })

/**
 * The part of a whole period the first period `[at, anchor)` is, under `policy`; nothing under
 * `none`. `anchor` is the anchor in force ({@link effective}).
 *
 * @example
 * // monthly, started 2026-01-15, anchored on Feb 1, per_day: 17 of 31 days
 * BillingAnchor.firstShare(Proration.Policy.PerDay(), "create_prorations", Date.UTC(2026, 1, 1), "month", 1, Date.UTC(2026, 0, 15))
 * // { unused: 17n, total: 31n }
 * @since 0.1.0
 */
export const firstShare = (
  policy: Proration.Policy,
  behavior: Behavior,
  anchor: number,
  unit: BillingPeriod.IntervalUnit,
  count: number,
  at: number
): Proration.Fraction =>
  behavior === "none"
    ? { unused: 0n, total: 1n }
    : Proration.unusedFraction(policy, wholePeriodBefore(anchor, unit, count), at)

/**
 * Whether the subscription is in its short first period (paid, before its anchor): a cycle
 * before `anchor_cycle` that is not a trial.
 *
 * @since 0.1.0
 */
export const inFirstPeriod = (rec: Entities.SubscriptionRecord): boolean =>
  rec.trial_end === null && rec.anchor !== null && rec.subscription.cycle_index < rec.anchor_cycle

/**
 * The span a change prorates over: the current period, except in the short first period,
 * where it is the whole period ending at the anchor — the plan's basis is a whole period's
 * amount, so the credit is what the short period was charged for the time left, and the charge
 * the new plan's share of it.
 *
 * @since 0.1.0
 */
export const prorationSpan = (
  rec: Entities.SubscriptionRecord,
  pv: Price.PriceVersion,
  current: { readonly start: number; readonly end: number }
): { readonly start: number; readonly end: number } => {
  const interval = intervalOf(pv)
  if (!inFirstPeriod(rec) || interval === null) return current
  const whole = wholePeriodBefore(rec.anchor!, interval.unit, interval.count)
  return { start: whole.start, end: whole.end }
}

/**
 * The first period of a subscription to `pv` with the chosen `anchor`, measured from `at` (the
 * checkout's opening, so the payment charges what the page showed), under the merchant's
 * proration policy (`policyText`, `per_day` …): the anchor in force ({@link effective}) and the
 * share of a whole period charged for it ({@link firstShare}); `undefined` for a price without
 * a calendar interval.
 *
 * @since 0.1.0
 */
export const firstPeriod = (
  policyText: string,
  pv: Price.PriceVersion,
  anchor: number,
  behavior: Behavior,
  at: number
): { readonly anchor: number; readonly share: Proration.Fraction } | undefined => {
  const interval = intervalOf(pv)
  if (interval === null) return undefined
  const policy = Result.getOrElse(Proration.parsePolicy(policyText), () => Proration.defaultPolicy)
  const inForce = effective(anchor, interval.unit, interval.count, at)
  return { anchor: inForce, share: firstShare(policy, behavior, inForce, interval.unit, interval.count, at) }
}
