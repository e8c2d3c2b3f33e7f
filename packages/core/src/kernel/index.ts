/**
 * `kernel/` — What every concept stands on: ids, common fields, errors, the state-machine runner (Lifecycle), the storage and outside-world ports, and log redaction.
 *
 * @since 0.1.0
 */
export * as Ids from "./Ids.js"
export * as NetworkAddress from "./NetworkAddress.js"
export * as Lifecycle from "./Lifecycle.js"
export * as Common from "./Common.js"
export * as Store from "./Store.js"
export * as Entities from "./Entities.js"
export * as Errors from "./Errors.js"
export * as Ports from "./Ports.js"
export * as Redaction from "./Redaction.js"
export * as Telemetry from "./Telemetry.js"
