/**
 * The tax rate's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

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
