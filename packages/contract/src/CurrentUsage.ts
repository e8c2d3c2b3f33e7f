/**
 * The answer of `GET /api/v1/subscription/{subscription_id}/current_usage` (issue 35), shared by
 * the REST adapter and the facade's `subscriptions.currentUsage`: each item of the subscription
 * billed by a billable metric with its metric, group, aggregated value over the current period
 * and what it would bill, and their total — the computation the next renewal makes
 * (`MetricUsage.current`). Amounts are before discounts and tax, in the subscription's currency.
 *
 * @since 0.1.0
 */
import { Common, Money, type MetricUsage } from "@recur/core"
import { Schema } from "effect"

/**
 * One metered item's usage so far.
 *
 * @since 0.1.0
 */
export const CurrentUsageItem = Schema.Struct({
  item_id: Schema.String,
  price_id: Schema.String,
  billable_metric_id: Schema.String,
  metric_code: Schema.String,
  metric_group: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  value: Schema.String.annotate({ description: "The metric's aggregated value over the period, exact decimal text" }),
  events: Schema.Int.annotate({ description: "How many events took part in the value" }),
  amount: Schema.String.annotate({ description: "What the value bills, rounded once half-even to the currency" })
}).annotate({ identifier: "CurrentUsageItem" })

/**
 * A subscription's current usage.
 *
 * @since 0.1.0
 */
export const CurrentUsage = Schema.Struct({
  subscription_id: Schema.String,
  customer_id: Schema.String,
  cycle_index: Schema.Int,
  currency: Schema.String,
  period_start: Schema.NullOr(Schema.String),
  period_end: Schema.NullOr(Schema.String),
  items: Schema.Array(CurrentUsageItem),
  amount: Schema.String.annotate({ description: "The items' total, before discounts and tax" })
}).annotate({ identifier: "CurrentUsage" })

/** @since 0.1.0 */
export type CurrentUsage = typeof CurrentUsage.Type

/**
 * The answer of a core current usage.
 *
 * @since 0.1.0
 */
export const currentUsageJson = (u: MetricUsage.CurrentUsage): CurrentUsage => ({
  subscription_id: u.subscription_id,
  customer_id: u.customer_id,
  cycle_index: u.cycle_index,
  currency: u.currency,
  period_start: u.period_start === null ? null : Common.formatInstant(u.period_start),
  period_end: u.period_end === null ? null : Common.formatInstant(u.period_end),
  items: u.charges.map((c) => ({
    item_id: c.item_id,
    price_id: c.price_id,
    billable_metric_id: c.billable_metric_id,
    metric_code: c.metric_code,
    metric_group: c.metric_group === null ? null : { ...c.metric_group },
    value: c.value,
    events: c.events,
    amount: Money.format(c.amount)
  })),
  amount: Money.format(u.total)
})
