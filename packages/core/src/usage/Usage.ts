/**
 * Usage: individual records (de-duplicated by `event_id`) and the per-cycle summary.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Timestamp } from "../kernel/Common.js"

/**
 * One recorded usage event.
 *
 * @since 0.1.0
 */
export class UsageRecord extends Schema.Class<UsageRecord>("UsageRecord")({
  id: Schema.String,
  subscription_id: Schema.String,
  event_id: Schema.String,
  usage_count: Schema.Int.check(Schema.isGreaterThan(0)),
  cycle_index: Schema.Int,
  timestamp: Timestamp,
  created_at: Timestamp
}) {}

/**
 * The seed's subscription usage summary for one cycle.
 *
 * @since 0.1.0
 */
export class UsageSummary extends Schema.Class<UsageSummary>("UsageSummary")({
  subscription_id: Schema.String,
  usage_unit: Schema.NullOr(Schema.String),
  billing_amount: Schema.String,
  currency: Schema.String,
  total_usage_count: Schema.Int,
  billing_usage_count: Schema.Int,
  trial_usage_count: Schema.Int
}) {}
