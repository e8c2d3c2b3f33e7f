/**
 * Webhook endpoints and events as the REST API returns them.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { NullableString, Timestamp } from "./Common.js"
import { DeliveryStatus, EndpointStatus, EventType } from "./Lifecycle.js"

/**
 * The delivery state of one event at one endpoint.
 *
 * @since 0.1.0
 */
export class EndpointEvent extends Schema.Class<EndpointEvent>("EndpointEvent")({
  endpoint_id: Schema.String,
  url: Schema.String,
  event_status: DeliveryStatus
}) {}

/**
 * A webhook event: `content` is the JSON payload text, `business_id` the object's id.
 *
 * @since 0.1.0
 */
export class WebhookEvent extends Schema.Class<WebhookEvent>("WebhookEvent")({
  id: Schema.String,
  business_id: Schema.String,
  event_type: EventType,
  content: Schema.String,
  endpoint_events: Schema.Array(EndpointEvent)
}) {}

/**
 * A webhook endpoint.
 *
 * @since 0.1.0
 */
export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")({
  id: Schema.String,
  url: Schema.String,
  desc: NullableString,
  event_version: Schema.String,
  all_events: Schema.Boolean,
  event_types: Schema.Array(EventType),
  status: EndpointStatus
}) {}

/**
 * The payload delivered to endpoints: `data` is the object as the REST API returns it.
 *
 * @since 0.1.0
 */
export class EventPayload extends Schema.Class<EventPayload>("EventPayload")({
  id: Schema.String,
  type: EventType,
  created: Timestamp,
  sequence: Schema.Int,
  data: Schema.Unknown
}) {}
