/**
 * The catalog's state machines: price versions and products (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

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
