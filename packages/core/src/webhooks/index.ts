/**
 * `webhooks/` — Webhook endpoints and events: entities, machines, dispatch and delivery.
 *
 * @since 0.1.0
 */
export * as Webhook from "./Webhook.js"
export * as WebhookDispatch from "./WebhookDispatch.js"
export * as Webhooks from "./Webhooks.js"
export * as WebhookDelivery from "./WebhookDelivery.js"
