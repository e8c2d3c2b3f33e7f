/**
 * The webhook delivery's and endpoint's state machines (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Per-endpoint delivery `event_status`.
 *
 * @since 0.1.0
 */
export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "retrying", "failed"])
/** @since 0.1.0 */
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * The webhook delivery machine.
 *
 * @since 0.1.0
 */
export const webhookDelivery: Machine<
  DeliveryStatus,
  "delivered" | "attempt_failed" | "retries_exhausted" | "abandon" | "resend"
> = {
  name: "WebhookDelivery",
  field: "event_status",
  states: DeliveryStatus.literals,
  initial: "pending",
  createEvents: [],
  terminal: ["succeeded", "failed"],
  transitions: [
    {
      from: ["pending", "retrying"],
      trigger: "delivered",
      to: "succeeded",
      events: [],
      description: "the endpoint answered 2xx within 10 s"
    },
    {
      from: ["pending", "retrying"],
      trigger: "attempt_failed",
      to: "retrying",
      events: [],
      description: "non-2xx, timeout or network error; a retry is scheduled"
    },
    {
      from: ["pending", "retrying"],
      trigger: "retries_exhausted",
      to: "failed",
      events: [],
      description: "16 retries within 48 h all failed"
    },
    {
      from: ["pending", "retrying"],
      trigger: "abandon",
      to: "failed",
      events: [],
      description: "the endpoint is disabled or deleted, the event is gone, or the endpoint answered 410 Gone"
    },
    {
      from: ["pending", "retrying", "succeeded", "failed"],
      trigger: "resend",
      to: "pending",
      events: [],
      description: "manual redelivery (attempts start again)"
    }
  ]
}

/**
 * Webhook endpoint `status`.
 *
 * @since 0.1.0
 */
export const EndpointStatus = Schema.Literals(["enabled", "disabled"])
/** @since 0.1.0 */
export type EndpointStatus = typeof EndpointStatus.Type

/**
 * The webhook endpoint machine.
 *
 * @since 0.1.0
 */
export const webhookEndpoint: Machine<EndpointStatus, "disable" | "enable" | "gone"> = {
  name: "WebhookEndpoint",
  field: "status",
  states: EndpointStatus.literals,
  initial: "enabled",
  createEvents: [],
  terminal: [],
  transitions: [
    { from: ["enabled"], trigger: "disable", to: "disabled", events: [], description: "disabled by the merchant" },
    { from: ["enabled"], trigger: "gone", to: "disabled", events: [], description: "the endpoint answered 410 Gone" },
    { from: ["disabled"], trigger: "enable", to: "enabled", events: [], description: "enabled by the merchant" }
  ]
}
