/**
 * `discounts/` — Discounts: the entity, its machine and rules, and the service that creates, applies and ends them.
 *
 * @since 0.1.0
 */
export * as Discount from "./Discount.js"
export * as Discounts from "./Discounts.js"
