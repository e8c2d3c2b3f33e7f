/**
 * `tenants/` — Merchants, their API keys, settings and encrypted secrets (and the master key's
 * rotation), and the sandbox clock.
 *
 * @since 0.1.0
 */
export * as Merchant from "./Merchant.js"
export * as Merchants from "./Merchants.js"
export * as MasterKeyRotation from "./MasterKeyRotation.js"
export * as Secrets from "./Secrets.js"
export * as SandboxClock from "./SandboxClock.js"
export * as Settings from "./Settings.js"
