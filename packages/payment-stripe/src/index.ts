/**
 * Stripe as Recur's payment gateway.
 *
 * @since 0.1.0
 */
export * as StripeGateway from "./StripeGateway.js"
