/**
 * `money/` — Money, exact decimals, billing periods, pricing and proration: the pure floor, no services (what a proration test imports).
 *
 * @since 0.1.0
 */
export * as BillingPeriod from "./BillingPeriod.js"
export * as Decimal from "./Decimal.js"
export * as Money from "./Money.js"
export * as Pricing from "./Pricing.js"
export * as Proration from "./Proration.js"
