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
export * as CheckoutSession from "./CheckoutSession.js"
export * as Common from "./Common.js"
export * as Customer from "./Customer.js"
export * as Invoice from "./Invoice.js"
export * as Merchant from "./Merchant.js"
export * as Price from "./Price.js"
export * as Product from "./Product.js"
export * as Refund from "./Refund.js"
export * as Subscription from "./Subscription.js"
export * as Trade from "./Trade.js"
export * as Usage from "./Usage.js"
export * as Webhook from "./Webhook.js"
export * as PriceRules from "./PriceRules.js"
export * as Invoicing from "./Invoicing.js"
export * as Store from "./Store.js"
export * as Entities from "./Entities.js"
