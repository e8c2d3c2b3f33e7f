/**
 * `customers/` — Customers: the entity and the service that keeps them.
 *
 * @since 0.1.0
 */
export * as Customer from "./Customer.js"
export * as Customers from "./Customers.js"
export * as CustomerBalance from "./CustomerBalance.js"
export * as BalanceTransaction from "./BalanceTransaction.js"
export * as CustomerBalances from "./CustomerBalances.js"
export * as SharedCredit from "./SharedCredit.js"
