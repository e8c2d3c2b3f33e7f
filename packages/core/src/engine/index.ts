/**
 * `engine/` — The wiring: every service in one Layer (Engine), the Billing entry point and the background Worker.
 *
 * @since 0.1.0
 */
export * as Billing from "./Billing.js"
export * as Engine from "./Engine.js"
export * as Worker from "./Worker.js"
