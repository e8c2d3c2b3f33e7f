/**
 * Merchants: the tenant of every record, with the settings the engine reads.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { NullableTimestamp, Timestamp } from "./Common.js"
import { CreditMode } from "./Proration.js"

/**
 * A merchant and its billing settings.
 *
 * @since 0.1.0
 */
export class Merchant extends Schema.Class<Merchant>("Merchant")({
  merchant_id: Schema.String,
  name: Schema.String,
  currency: Schema.String,
  mode: Schema.Literals(["sandbox", "live"]),
  /** A sandbox merchant's frozen clock; moves only through `advance_clock`. */
  frozen_time: NullableTimestamp,
  /** `per_second` (default), `per_day` or `fixed_days(n)`. */
  proration_policy: Schema.String,
  proration_credit: CreditMode,
  /** Where a subscription goes when dunning retries are exhausted. */
  dunning_final_state: Schema.Literals(["unpaid", "canceled"]),
  created_at: Timestamp
}) {}
