/**
 * `checkout/` — Checkout sessions: the entity and its machine, the command that creates one, and the services that create and pay them.
 *
 * @since 0.1.0
 */
export * as CheckoutSession from "./CheckoutSession.js"
export * as Checkout from "./Checkout.js"
export * as SessionPayments from "./SessionPayments.js"
