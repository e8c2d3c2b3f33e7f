/**
 * The credit grant's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * Credit grant `status`: an `active` grant holds `remaining` credit on the customer's balance;
 * it ends `depleted` (invoices used it all), `expired` (what remained was removed at
 * `expires_at`) or `voided` (the merchant removed what remained).
 *
 * @since 0.1.0
 */
export const CreditGrantStatus = Schema.Literals(["active", "depleted", "expired", "voided"])
/** @since 0.1.0 */
export type CreditGrantStatus = typeof CreditGrantStatus.Type

/**
 * The credit grant machine.
 *
 * @since 0.1.0
 */
export const creditGrant: Machine<CreditGrantStatus, "consume" | "deplete" | "expire" | "void"> = {
  name: "CreditGrant",
  field: "status",
  states: CreditGrantStatus.literals,
  initial: "active",
  createEvents: ["v2.credit_grant.created"],
  terminal: ["depleted", "expired", "voided"],
  transitions: [
    {
      from: ["active"],
      trigger: "consume",
      events: [],
      description: "an invoice applied part of what remains (earliest-expiring grant first)"
    },
    {
      from: ["active"],
      trigger: "deplete",
      to: "depleted",
      events: ["v2.credit_grant.depleted"],
      description: "an invoice applied the last of what remained"
    },
    {
      from: ["active"],
      trigger: "expire",
      to: "expired",
      events: ["v2.credit_grant.expired"],
      description: "its `expires_at` passed: what remained is removed from the balance (`credit_grant_expired`)"
    },
    {
      from: ["active"],
      trigger: "void",
      to: "voided",
      events: ["v2.credit_grant.voided"],
      description: "voided by the merchant: what remained is removed from the balance (`credit_grant_voided`)"
    }
  ]
}
