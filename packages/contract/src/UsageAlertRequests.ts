/**
 * The merchant API's usage alert and progressive billing bodies and answers (issue 35):
 * `POST /api/v1/usage_alerts`, `GET /api/v1/usage_alerts[/{id}]`,
 * `POST /api/v1/usage_alerts/{id}/delete`, and a subscription's
 * `GET|POST /api/v1/subscription/{id}/progressive_billing`. Loosely typed bodies on purpose, as
 * core's commands take them: the engine's checks name the field a value breaks. The REST adapter
 * and the Promise facade decode the same way.
 *
 * @since 0.1.0
 */
import { Money, UsageAlert } from "@recur/core"
import { Schema } from "effect"

/**
 * One threshold of a new alert: `type` `value` (the metric's aggregated value) or `amount` (what
 * its items bill so far, in the subscription's currency), `value` (a positive decimal or amount,
 * as a string or a number), `recurring` (fires again at each multiple; at most one per alert).
 *
 * @since 0.1.0
 */
export const ThresholdBody = Schema.Struct({
  type: Schema.optional(Schema.String),
  value: Schema.optional(Schema.Union([Schema.String, Schema.Number])),
  recurring: Schema.optional(Schema.Boolean)
})

/**
 * The body of a new usage alert: the `subscription_id`, the `billable_metric_id` (its id or
 * code), 1 to 20 `thresholds`, and an optional `name`.
 *
 * @since 0.1.0
 */
export const CreateUsageAlert = Schema.Struct({
  subscription_id: Schema.optional(Schema.String),
  billable_metric_id: Schema.optional(Schema.String),
  thresholds: Schema.optional(Schema.Array(ThresholdBody)),
  name: Schema.optional(Schema.NullOr(Schema.String))
})

/** @since 0.1.0 */
export type CreateUsageAlert = typeof CreateUsageAlert.Type

/**
 * The answer of an alert's create, read and delete.
 *
 * @since 0.1.0
 */
export const UsageAlertAnswer = Schema.Struct({ usage_alert: UsageAlert.UsageAlert })

/**
 * The body of a subscription's progressive billing setting: the threshold (an amount in the
 * subscription's currency), or `null` to turn it off.
 *
 * @since 0.1.0
 */
export const SetProgressiveBilling = Schema.Struct({
  progressive_billing_threshold: Schema.optional(Schema.NullOr(Schema.String))
})

/** @since 0.1.0 */
export type SetProgressiveBilling = typeof SetProgressiveBilling.Type

/**
 * A subscription's progressive billing: its threshold, and what progressive invoices billed in
 * cycle `cycle_index` (per item, cumulative; `deducted` once the cycle's renewal deducted it).
 *
 * @since 0.1.0
 */
export const ProgressiveBilling = Schema.Struct({
  subscription_id: Schema.String,
  currency: Schema.String,
  progressive_billing_threshold: Schema.NullOr(Schema.String),
  alerts: Schema.Int.annotate({ description: "How many usage alerts watch the subscription" }),
  cycle_index: Schema.NullOr(Schema.Int),
  billed: Schema.Array(
    Schema.Struct({
      item_id: Schema.String,
      description: Schema.String,
      amount: Schema.String.annotate({ description: "Invoiced early for the item in the cycle so far" })
    }).annotate({ identifier: "ProgressiveBilledItem" })
  ),
  invoice_ids: Schema.Array(Schema.String),
  deducted: Schema.Boolean
}).annotate({ identifier: "ProgressiveBilling" })

/** @since 0.1.0 */
export type ProgressiveBilling = typeof ProgressiveBilling.Type

/**
 * The answer of a core usage billing record.
 *
 * @since 0.1.0
 */
export const progressiveBillingJson = (r: UsageAlert.UsageBilling): ProgressiveBilling => ({
  subscription_id: r.subscription_id,
  currency: r.currency,
  progressive_billing_threshold: r.progressive_billing_threshold,
  alerts: r.alerts,
  cycle_index: r.cycle_index,
  billed: r.billed.map((b) => ({
    item_id: b.item_id,
    description: b.description,
    amount: Money.format(Money.make(BigInt(b.amount_minor), r.currency))
  })),
  invoice_ids: [...r.invoice_ids],
  deducted: r.closed
})
