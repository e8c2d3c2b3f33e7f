/**
 * `entitlements/` — Features declared on products and prices, the merchant's policy of which subscription states grant them, and a customer's entitlements computed from its subscriptions as committed.
 *
 * @since 0.1.0
 */
export * as Entitlement from "./Entitlement.js"
export * as Entitlements from "./Entitlements.js"
