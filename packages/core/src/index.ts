/**
 * @recur/core — the pure heart of Recur.
 *
 * @since 0.1.0
 */
export * as BillingPeriod from "./BillingPeriod.js"
export * as Decimal from "./Decimal.js"
export * as Ids from "./Ids.js"
export * as Money from "./Money.js"
export * as Pricing from "./Pricing.js"
export * as Proration from "./Proration.js"
export * as Lifecycle from "./Lifecycle.js"
