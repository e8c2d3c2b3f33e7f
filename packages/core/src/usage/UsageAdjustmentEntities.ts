/**
 * Usage adjustments as stored (re-exported by `Entities`).
 */
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"
import { UsageAdjustment } from "./UsageAdjustment.js"

/**
 * The (subscription, period) an adjustment re-rated: `sub_…:<period start, Unix ms>`.
 *
 * @since 0.1.0
 */
export const periodKey = (subscriptionId: string, periodStart: number): string => `${subscriptionId}:${periodStart}`

/**
 * A usage adjustment; `period_key` (the period and its sequence) is unique, so two re-ratings of
 * one period racing cannot both record theirs: the later fails whole and is computed again.
 *
 * @since 0.1.0
 */
export const usageAdjustment: Store.Entity<UsageAdjustment, typeof UsageAdjustment.Encoded> = Store.entity({
  name: "usage_adjustment",
  table: "recur_usage_adjustments",
  schema: UsageAdjustment,
  id: "usage_adjustment_id",
  createdAt: (a) => ms(a.created_at),
  columns: {
    subscription_id: "subscription_id",
    period: (a) => periodKey(a.subscription_id, ms(a.period_start)),
    period_key: (a) => `${periodKey(a.subscription_id, ms(a.period_start))}:${a.sequence}`
  },
  unique: [{ name: "usage_adjustment_period", columns: ["period_key"] }]
})
