/**
 * What the customer portal shows of a subscription's usage-based items (issue 35): each item
 * billed by a billable metric with its metric, its value and what it bills so far in the current
 * period — `MetricUsage.current`, the computation the next renewal makes.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type * as Entities from "../kernel/Entities.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import * as MetricUsage from "../usage/MetricUsage.js"

/**
 * A subscription's usage in the current period, as the portal shows it (`PortalView`'s `usage`,
 * `null` for a subscription without metric items).
 *
 * @since 0.1.0
 */
export interface PortalUsage {
  readonly currency: string
  /** The items' total so far, before discounts and tax. */
  readonly amount: string
  readonly items: ReadonlyArray<{
    /** The item's price name. */
    readonly name: string
    /** The metric's code, and its group's values. */
    readonly metric: string
    /** The aggregated value, exact decimal text. */
    readonly value: string
    readonly amount: string
  }>
}

/**
 * The usage so far of a live subscription's metric items; `null` for a subscription without such
 * items or not live (nothing accrues).
 *
 * @example
 * const usage = yield* PortalUsage.of(storage)(merchantId, rec) // { amount: "24.21", items: [...] }
 * @since 0.1.0
 */
export const of =
  (storage: StorageService) =>
  (merchantId: string, rec: Entities.SubscriptionRecord): Effect.Effect<PortalUsage | null> =>
    rec.extra_items.some((x) => x.version.billing_dimension === "usage" && x.version.billable_metric_id !== null) &&
    (rec.subscription.status === "trial" ||
      rec.subscription.status === "active" ||
      rec.subscription.status === "past_due")
      ? Effect.map(
          MetricUsage.current(storage)(merchantId, rec),
          (u): PortalUsage => ({
            currency: u.currency,
            amount: Money.format(u.total),
            items: u.charges.map((c) => ({
              name: c.line.description.split(": ")[0] ?? c.metric_code,
              metric: `${c.metric_code}${c.metric_group === null ? "" : ` (${Object.values(c.metric_group).join(", ")})`}`,
              value: c.value,
              amount: Money.format(c.amount)
            }))
          })
        )
      : Effect.succeed(null)
