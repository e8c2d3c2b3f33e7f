/**
 * The engine's ports to the world beyond storage: payments, webhook transport, customer
 * notifications, exchange rates, taxes and ids.
 * Each is a `Context.Tag` with no default implementation; adapters provide Layers
 * (`@recur/payment-sandbox` for payments; the static FX table, zero tax and the TypeID
 * generator below for the rest).
 *
 * @since 0.1.0
 */
export * from "../payments/PaymentGateway.js"
export * from "../payments/PaymentSources.js"
export * from "../payments/GatewayEvents.js"
export * from "../money/FxRates.js"
export * from "../taxes/TaxCalculator.js"
export * from "../webhooks/WebhookTransport.js"
export * from "../notifications/Notifier.js"
