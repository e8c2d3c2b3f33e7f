/**
 * The discount's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

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
