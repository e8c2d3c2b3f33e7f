/**
 * @recur/payment-sandbox — the deterministic test-card gateway.
 *
 * @since 0.1.0
 */
export * as SandboxGateway from "./SandboxGateway.js"
