/**
 * `credits/` — prepaid credits: credit grants on the customer's balance, top-ups and automatic
 * top-ups.
 *
 * @since 0.1.0
 */
export * as CreditGrant from "./CreditGrant.js"
export * as CreditGrants from "./CreditGrants.js"
export * as GrantLedger from "./GrantLedger.js"
