/**
 * The machines of the catalog, webhooks and API keys (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../Lifecycle.js"

/**
 * Price version status.
 *
 * @since 0.1.0
 */
export const PriceVersionStatus = Schema.Literals(["draft", "active", "frozen"])
/** @since 0.1.0 */
export type PriceVersionStatus = typeof PriceVersionStatus.Type

/**
 * The price version machine: only `active` sells; `frozen` keeps renewing.
 *
 * @since 0.1.0
 */
export const priceVersion: Machine<PriceVersionStatus, "activate" | "freeze"> = {
  name: "PriceVersion",
  field: "biz_status",
  states: PriceVersionStatus.literals,
  initial: "draft",
  createEvents: [],
  terminal: [],
  transitions: [
    {
      from: ["draft", "frozen"],
      trigger: "activate",
      to: "active",
      events: [],
      description: "sellable; immutable from now on"
    },
    {
      from: ["active"],
      trigger: "freeze",
      to: "frozen",
      events: [],
      description: "no new sales; existing subscriptions renew"
    }
  ]
}

/**
 * Product status.
 *
 * @since 0.1.0
 */
export const ProductStatus = Schema.Literals(["draft", "active", "disabled"])
/** @since 0.1.0 */
export type ProductStatus = typeof ProductStatus.Type

/**
 * The product machine.
 *
 * @since 0.1.0
 */
export const product: Machine<ProductStatus, "activate" | "disable"> = {
  name: "Product",
  field: "product_status",
  states: ProductStatus.literals,
  initial: "draft",
  createEvents: [],
  terminal: [],
  transitions: [
    {
      from: ["draft", "disabled"],
      trigger: "activate",
      to: "active",
      events: [],
      description: "the product can be sold"
    },
    { from: ["active"], trigger: "disable", to: "disabled", events: [], description: "the product is withdrawn" }
  ]
}

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

/**
 * API key `status`.
 *
 * @since 0.1.0
 */
export const ApiKeyStatus = Schema.Literals(["active", "expiring", "revoked"])
/** @since 0.1.0 */
export type ApiKeyStatus = typeof ApiKeyStatus.Type

/**
 * The API key machine.
 *
 * @since 0.1.0
 */
export const apiKey: Machine<ApiKeyStatus, "rotate" | "revoke"> = {
  name: "ApiKey",
  field: "status",
  states: ApiKeyStatus.literals,
  initial: "active",
  createEvents: [],
  terminal: ["revoked"],
  transitions: [
    {
      from: ["active"],
      trigger: "rotate",
      to: "expiring",
      events: [],
      description: "a new key replaced it; it works until its grace period ends"
    },
    {
      from: ["active", "expiring"],
      trigger: "revoke",
      to: "revoked",
      events: [],
      description: "revoked by the merchant: refused at once"
    }
  ]
}

/**
 * Discount `status`: a discount is redeemable while `active` (and inside its dates and limits);
 * once `ended` it never applies to a new checkout or subscription again.
 *
 * @since 0.1.0
 */
export const DiscountStatus = Schema.Literals(["active", "ended"])
/** @since 0.1.0 */
export type DiscountStatus = typeof DiscountStatus.Type

/**
 * The discount machine.
 *
 * @since 0.1.0
 */
export const discount: Machine<DiscountStatus, "end" | "redeem"> = {
  name: "Discount",
  field: "status",
  states: DiscountStatus.literals,
  initial: "active",
  createEvents: ["v2.discount.created"],
  terminal: ["ended"],
  transitions: [
    {
      from: ["active"],
      trigger: "redeem",
      events: ["v2.discount.redeemed"],
      description: "redeemed by a checkout or applied to a subscription: `times_redeemed` counts it"
    },
    {
      from: ["active"],
      trigger: "end",
      to: "ended",
      events: ["v2.discount.ended"],
      description: "ended by the merchant: no new redemption; subscriptions that carry it keep it"
    }
  ]
}

/**
 * Tax rate `status`: an `active` rate applies to new invoices at its country and region; an
 * `archived` one never again (invoices already issued keep their tax lines).
 *
 * @since 0.1.0
 */
export const TaxRateStatus = Schema.Literals(["active", "archived"])
/** @since 0.1.0 */
export type TaxRateStatus = typeof TaxRateStatus.Type

/**
 * The tax rate machine.
 *
 * @since 0.1.0
 */
export const taxRate: Machine<TaxRateStatus, "archive"> = {
  name: "TaxRate",
  field: "status",
  states: TaxRateStatus.literals,
  initial: "active",
  createEvents: ["v2.tax_rate.created"],
  terminal: ["archived"],
  transitions: [
    {
      from: ["active"],
      trigger: "archive",
      to: "archived",
      events: ["v2.tax_rate.archived"],
      description: "archived by the merchant: no new invoice uses it; a new rate may take its place"
    }
  ]
}
