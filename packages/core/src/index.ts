/**
 * @recur/core — the pure heart of Recur.
 *
 * @since 0.1.0
 */
export * from "./money/index.js"
export * from "./kernel/index.js"
export * from "./catalog/index.js"
export * from "./customers/index.js"
export * from "./credits/index.js"
export * from "./checkout/index.js"
export * from "./subscriptions/index.js"
export * from "./invoices/index.js"
export * from "./payments/index.js"
export * from "./refunds/index.js"
export * from "./discounts/index.js"
export * from "./schedules/index.js"
export * from "./taxes/index.js"
export * from "./usage/index.js"
export * from "./webhooks/index.js"
export * from "./notifications/index.js"
export * from "./portal/index.js"
export * from "./tenants/index.js"
export * from "./entitlements/index.js"
export * from "./engine/index.js"
