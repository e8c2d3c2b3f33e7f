/**
 * Stripe as Recur's payment gateway.
 *
 * @since 0.1.0
 */
export * as StripeGateway from "./StripeGateway.js"

/**
 * Stripe's currency rules (decimals, precision, minimum charge) and the conversion of amounts
 * between Recur's units and Stripe's: the table lives in `@recur/core` (the hosted pages use it
 * too) and is the same object.
 *
 * @since 0.1.0
 */
export { StripeCurrency } from "@recur/core"

/**
 * Stripe's decline codes classed for dunning (`hard`, `soft`, `expired_card`).
 *
 * @since 0.1.0
 */
export * as StripeDeclines from "./StripeDeclines.js"
