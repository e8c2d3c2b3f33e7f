/**
 * The stored records of webhooks: endpoints (with the encrypted secret), events (the outbox
 * log) and deliveries with their attempts (re-exported by `Entities`).
 */
import { Effect, Schema } from "effect"
import * as Store from "../kernel/Store.js"
import * as Webhook from "./Webhook.js"

/**
 * A stored webhook endpoint, with its `whsec_` secret encrypted.
 *
 * @since 0.1.0
 */
export const WebhookEndpointRecord = Schema.Struct({
  merchant_id: Schema.String,
  endpoint: Webhook.WebhookEndpoint,
  secret_ciphertext: Schema.String,
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type WebhookEndpointRecord = typeof WebhookEndpointRecord.Type

/** @since 0.1.0 */
export const webhookEndpoint: Store.Entity<WebhookEndpointRecord, typeof WebhookEndpointRecord.Encoded> = Store.entity({
  name: "webhook_endpoint",
  table: "recur_webhook_endpoints",
  schema: WebhookEndpointRecord,
  id: (e) => e.endpoint.id,
  createdAt: "created_at",
  columns: { status: (e) => e.endpoint.status }
})

/**
 * An outbox event as the merchant lists it; written through `Outbox.append`.
 *
 * @since 0.1.0
 */
export const EventRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  type: Schema.String,
  business_id: Schema.String,
  content: Schema.String,
  sequence: Schema.Number,
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type EventRecord = typeof EventRecord.Type

/** @since 0.1.0 */
export const webhookEvent: Store.Entity<EventRecord, typeof EventRecord.Encoded> = Store.entity({
  name: "webhook_event",
  table: "recur_events",
  schema: EventRecord,
  id: "id",
  createdAt: "created_at",
  columns: { business_id: "business_id", type: "type" }
})

/**
 * One event's delivery to one endpoint.
 *
 * @since 0.1.0
 */
export const DeliveryRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  event_id: Schema.String,
  endpoint_id: Schema.String,
  status: Webhook.EndpointEvent.fields.event_status,
  attempts: Schema.Number,
  next_attempt_at: Schema.NullOr(Schema.Number),
  last_status_code: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Number,
  /** When the first attempt of the current run was made (the 48 h window starts there). */
  first_attempt_at: Schema.NullOr(Schema.Number).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** Every attempt: merchant time, HTTP status (null without an answer), latency, error. */
  history: Schema.Array(
    Schema.Struct({
      at: Schema.Number,
      status_code: Schema.NullOr(Schema.Number),
      latency_ms: Schema.Number,
      error: Schema.NullOr(Schema.String)
    })
  ).pipe(Schema.withDecodingDefault(Effect.succeed([])))
})
/** @since 0.1.0 */
export type DeliveryRecord = typeof DeliveryRecord.Type

/** @since 0.1.0 */
export const webhookDelivery: Store.Entity<DeliveryRecord, typeof DeliveryRecord.Encoded> = Store.entity({
  name: "webhook_delivery",
  table: "recur_webhook_deliveries",
  schema: DeliveryRecord,
  id: "id",
  createdAt: "created_at",
  columns: { event_id: "event_id", endpoint_id: "endpoint_id", status: "status" },
  unique: [{ name: "delivery_event_endpoint", columns: ["event_id", "endpoint_id"] }]
})
