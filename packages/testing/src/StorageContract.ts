/**
 * The contract every {@link Store.Storage} adapter must pass: CRUD, every filter kind,
 * pagination in both directions with `created_at` ties, the 1..100 limit, unique constraints
 * as typed errors, rollback, tenant isolation, the outbox, the work queue and idempotency
 * records, meter events. Run it against a new adapter with {@link suite}.
 *
 * @example
 * import { StorageContract } from "@recur/testing"
 * StorageContract.suite("my adapter", myStorageLayer)
 * @since 0.1.0
 */
import { layer } from "@effect/vitest"
import type { Store } from "@recur/core"
import type { Layer } from "effect"
import { meter } from "./storage/Meter.js"
import { queues } from "./storage/Queues.js"
import { records } from "./storage/Records.js"
import { tenancy } from "./storage/Tenancy.js"

/**
 * Options of the suite.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The adapter can run two transactions at once (real Postgres): also test claim races. */
  readonly concurrent?: boolean
  readonly timeout?: number
}

/**
 * Registers the storage contract suite for an adapter layer. The layer is built once for the
 * file; every test works in fresh merchants, so tests do not see each other's rows. The tests
 * are in `storage/`: records, tenancy, queues.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>, options: Options = {}) =>
  layer(storage, { timeout: "60 seconds" })(`Storage contract: ${name}`, (it) => {
    records(it)
    tenancy(it)
    queues(it, options)
    meter(it)
  })
