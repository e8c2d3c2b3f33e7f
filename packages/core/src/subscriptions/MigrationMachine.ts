/**
 * The catalog migration's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

/**
 * A migration's `status`.
 *
 * @since 0.1.0
 */
export const PriceMigrationStatus = Schema.Literals(["previewed", "running", "completed", "canceled"])
/** @since 0.1.0 */
export type PriceMigrationStatus = typeof PriceMigrationStatus.Type

/** @since 0.1.0 */
export type PriceMigrationTrigger = "run" | "complete" | "cancel"

/**
 * The migration machine: previewed → running (the merchant runs it) → completed (the worker moved
 * or skipped every line); a previewed migration may be canceled instead.
 *
 * @since 0.1.0
 */
export const priceMigration: Machine<PriceMigrationStatus, PriceMigrationTrigger> = {
  name: "PriceMigration",
  field: "status",
  states: PriceMigrationStatus.literals,
  initial: "previewed",
  createEvents: [],
  terminal: ["completed", "canceled"],
  transitions: [
    {
      from: ["previewed"],
      trigger: "run",
      to: "running",
      events: [],
      description: "the merchant runs it; the worker moves each line's subscription once"
    },
    {
      from: ["running"],
      trigger: "complete",
      to: "completed",
      events: [],
      description: "every line is migrated or skipped"
    },
    { from: ["previewed"], trigger: "cancel", to: "canceled", events: [], description: "canceled before it ran" }
  ]
}
