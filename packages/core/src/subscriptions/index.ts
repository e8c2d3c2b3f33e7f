/**
 * `subscriptions/` — Subscriptions: the entity and its machine, lifecycle operations, price and quantity changes, renewals (single and batched) and their plan.
 *
 * @since 0.1.0
 */
export * as Subscription from "./Subscription.js"
export * as PriceChanges from "./PriceChanges.js"
export * as ItemChanges from "./ItemChanges.js"
export * as ItemRules from "./ItemRules.js"
export * as PriceMigration from "./PriceMigration.js"
export * as PriceMigrations from "./PriceMigrations.js"
export * as RenewalBatches from "./RenewalBatches.js"
export * as RenewalPlan from "./RenewalPlan.js"
export * as Renewals from "./Renewals.js"
export * as Subscriptions from "./Subscriptions.js"
export * as BillingAnchor from "./BillingAnchor.js"
export * as SubscriptionItems from "./SubscriptionItems.js"
