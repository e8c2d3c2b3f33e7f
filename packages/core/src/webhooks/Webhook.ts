/**
 * Webhook endpoints and events as the REST API returns them.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { NullableString, Timestamp } from "../kernel/Common.js"
import type { Result } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { DeliveryStatus, EndpointStatus, EventType } from "../kernel/Lifecycle.js"

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

/**
 * Moves an endpoint's `status` (the {@link Lifecycle.webhookEndpoint} machine). The only way it
 * changes.
 *
 * @since 0.1.0
 */
export const moveEndpoint = (
  endpoint: WebhookEndpoint,
  trigger: "disable" | "enable" | "gone"
): Result.Result<Lifecycle.Moved<WebhookEndpoint>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.webhookEndpoint,
    endpoint.status,
    trigger,
    (to) => new WebhookEndpoint({ ...endpoint, status: to }, { disableChecks: true })
  )

/**
 * Moves a delivery record's `status` (the {@link Lifecycle.webhookDelivery} machine). The only
 * way it changes.
 *
 * @since 0.1.0
 */
export const moveDelivery = <D extends { readonly status: Lifecycle.DeliveryStatus }>(
  delivery: D,
  trigger: "delivered" | "attempt_failed" | "retries_exhausted" | "abandon" | "resend",
  patch: Partial<Omit<D, "status">> = {}
): Result.Result<Lifecycle.Moved<D>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(Lifecycle.webhookDelivery, delivery.status, trigger, (to) => ({ ...delivery, ...patch, status: to }))
