/**
 * The API key's state machine (re-exported by `Lifecycle`).
 */
import { Schema } from "effect"
import type { Machine } from "../kernel/Machine.js"

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
