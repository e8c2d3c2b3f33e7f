/**
 * @recur/memory — Recur's storage in process memory: every `Store.Storage` operation, with
 * transactions that roll back, unique constraints, leases and version checks, and nothing
 * written to disk. For unit tests, sandboxes and examples; data lives as long as the Layer.
 *
 * @since 0.1.0
 */
export * as MemoryStorage from "./MemoryStorage.js"
