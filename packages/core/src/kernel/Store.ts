/**
 * Storage ports: one generic repository shape for every entity, a unit of work, the outbox
 * and the work queue. Adapters (`@recur/sql` for PGlite and Postgres, `@recur/testing` in
 * memory) implement {@link Storage}; services never see SQL.
 *
 * Every list is evaluated in the store: filters, `created_at` ranges and cursor pagination
 * (`created_at` descending, ties broken by id descending).
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { AggregatedValue, AggregationSpec } from "../usage/Aggregation.js"

/**
 * A value an indexed column can hold.
 *
 * @since 0.1.0
 */
export type ColumnValue = string | number | bigint | boolean | null | ReadonlyArray<string>

/**
 * How one kind of record is stored: its schema, its indexed columns (filters and unique
 * constraints read them) and its unique constraints. Every record belongs to one merchant.
 *
 * @since 0.1.0
 */
export interface Entity<A, I = unknown> {
  readonly name: string
  readonly table: string
  readonly schema: Schema.Codec<A, I>
  readonly id: (a: A) => string
  readonly merchantId: (a: A) => string
  /** Creation instant, Unix ms: the list order. */
  readonly createdAt: (a: A) => number
  /** Indexed columns, by SQL column name. */
  readonly columns: { readonly [column: string]: (a: A) => ColumnValue }
  /** Unique constraints within a merchant (a `null` value never conflicts). */
  readonly unique: ReadonlyArray<{ readonly name: string; readonly columns: ReadonlyArray<string> }>
}

/** The fields of `A` whose values are `V`. */
type FieldOf<A, V> = { [K in keyof A]-?: A[K] extends V ? K : never }[keyof A] & string

/**
 * How an {@link entity} reads a value of a record: the name of one of its fields, or a function
 * of the record.
 *
 * @since 0.1.0
 */
export type Read<A, V> = FieldOf<A, V> | ((a: A) => V)

const reader = <A, V>(read: Read<A, V>): ((a: A) => V) => (typeof read === "function" ? read : (a) => a[read] as V)

/**
 * An {@link Entity} described once: `id`, `createdAt` and each indexed column name a field of
 * the record (or are a function of it), `merchantId` is the record's `merchant_id` unless told
 * otherwise, and there is no unique constraint unless given.
 *
 * @since 0.1.0
 */
export const entity = <A, I>(spec: {
  readonly name: string
  readonly table: string
  readonly schema: Schema.Codec<A, I>
  readonly id: Read<A, string>
  readonly merchantId?: Read<A, string>
  readonly createdAt: Read<A, number>
  readonly columns?: { readonly [column: string]: Read<A, ColumnValue> }
  readonly unique?: Entity<A, I>["unique"]
}): Entity<A, I> => ({
  name: spec.name,
  table: spec.table,
  schema: spec.schema,
  id: reader(spec.id),
  merchantId: reader(spec.merchantId ?? ("merchant_id" as Read<A, string>)),
  createdAt: reader(spec.createdAt),
  columns: Object.fromEntries(Object.entries(spec.columns ?? {}).map(([column, read]) => [column, reader(read)])),
  unique: spec.unique ?? []
})

/**
 * A filter on an indexed column: `in` (any of the values), `overlaps` (an array column shares a
 * value), `is_null` / `not_null`.
 *
 * @since 0.1.0
 */
export type Filter =
  | { readonly column: string; readonly op: "in"; readonly values: ReadonlyArray<string | number | boolean> }
  | { readonly column: string; readonly op: "overlaps"; readonly values: ReadonlyArray<string> }
  | { readonly column: string; readonly op: "is_null" | "not_null" }

/**
 * `created_at` range filters, Unix ms.
 *
 * @since 0.1.0
 */
export interface CreatedRange {
  readonly gt?: number | undefined
  readonly gte?: number | undefined
  readonly lt?: number | undefined
  readonly lte?: number | undefined
}

/**
 * A list request: filters, range and the seed's cursor page.
 *
 * @since 0.1.0
 */
export interface ListQuery {
  readonly filters?: ReadonlyArray<Filter>
  readonly created?: CreatedRange
  /** 1..100. */
  readonly limit: number
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/**
 * A page of records, newest first.
 *
 * @since 0.1.0
 */
export interface Page<A> {
  readonly list: ReadonlyArray<A>
  readonly has_more: boolean
}

/**
 * A record and its optimistic-concurrency version.
 *
 * @since 0.1.0
 */
export interface Versioned<A> {
  readonly value: A
  readonly version: number
}

/**
 * A unique constraint would be broken.
 *
 * @since 0.1.0
 */
export class UniqueViolation extends Schema.TaggedError<UniqueViolation>()("UniqueViolation", {
  entity: Schema.String,
  constraint: Schema.String
}) {}

/**
 * The record changed since it was read.
 *
 * @since 0.1.0
 */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("VersionConflict", {
  entity: Schema.String,
  id: Schema.String
}) {}

/**
 * A pagination cursor that is not a record of this merchant and entity.
 *
 * @since 0.1.0
 */
export class CursorNotFound extends Schema.TaggedError<CursorNotFound>()("CursorNotFound", {
  entity: Schema.String,
  cursor: Schema.String
}) {}

/**
 * A page request outside the rules: limit not in 1..100, or both cursors.
 *
 * @since 0.1.0
 */
export class InvalidPage extends Schema.TaggedError<InvalidPage>()("InvalidPage", {
  reason: Schema.Literals(["limit_out_of_range", "both_cursors"])
}) {}

/**
 * The repository of one entity. Reads and writes are scoped to a merchant: a record of
 * another merchant is never returned, changed or used as a cursor.
 *
 * @example
 * const customers = yield* Storage.pipe(Effect.map((s) => s.repository(Entities.customer)))
 * yield* customers.insert(record)
 * const page = yield* customers.list(merchantId, { limit: 10, filters: [{ column: "email", op: "in", values: [email] }] })
 * @since 0.1.0
 */
export interface Repository<A> {
  readonly insert: (a: A) => Effect.Effect<void, UniqueViolation>
  /** Replaces the record if its version is still `expectedVersion`; returns the new version. */
  readonly update: (a: A, expectedVersion: number) => Effect.Effect<number, UniqueViolation | VersionConflict>
  readonly get: (merchantId: string, id: string) => Effect.Effect<Option.Option<Versioned<A>>>
  /** The record whose indexed `column` equals `value` (use on unique columns). */
  readonly findBy: (
    merchantId: string,
    column: string,
    value: string | number | boolean
  ) => Effect.Effect<Option.Option<Versioned<A>>>
  readonly list: (merchantId: string, query: ListQuery) => Effect.Effect<Page<A>, CursorNotFound | InvalidPage>
  /**
   * Finds a record by a unique column across all merchants. Only for resolving the tenant
   * itself (an API key by its hash); everything else goes through a merchant.
   */
  readonly lookup: (column: string, value: string) => Effect.Effect<Option.Option<Versioned<A>>>
  /** Hard delete (soft deletes are updates). Returns whether a record was removed. */
  readonly remove: (merchantId: string, id: string) => Effect.Effect<boolean>
  /**
   * The merchant's records among `ids`, by id, in one round trip (unknown and foreign ids are
   * absent from the map).
   */
  readonly getMany: (merchantId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Versioned<A>>>
  /**
   * Inserts many records in one round trip, skipping every record that would break a unique
   * constraint or the primary key (including a later duplicate of an earlier record of the same
   * batch). Returns the records inserted, in input order. The ingestion path: de-duplication
   * by constraint, not by error.
   */
  readonly insertMany: (as: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<A>>
  /**
   * Replaces many records, each only if its version is still the expected one; all or none:
   * one stale record fails the call with {@link VersionConflict} and changes nothing.
   * Returns the new versions, in input order.
   */
  readonly updateMany: (
    items: ReadonlyArray<{ readonly value: A; readonly expectedVersion: number }>
  ) => Effect.Effect<ReadonlyArray<number>, UniqueViolation | VersionConflict>
  /**
   * Every merchant's records, in id order: the page of up to `limit` records after the id
   * `after`. Only for maintenance that must touch every record (a master key rotation
   * re-encrypting every stored secret), never for serving a merchant.
   */
  readonly scan: (options: {
    readonly after?: string | undefined
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Versioned<A>>>
}

/**
 * An event written to the outbox in the transaction of the change that caused it.
 *
 * @since 0.1.0
 */
export interface OutboxEvent {
  readonly id: string
  readonly merchant_id: string
  readonly type: string
  readonly business_id: string
  /** The payload JSON text. */
  readonly content: string
  /** Per-object counter. */
  readonly sequence: number
  readonly created_at: number
}

/**
 * The outbox: append inside a transaction; dispatchers claim due events with a lease.
 *
 * @since 0.1.0
 */
export interface Outbox {
  readonly append: (events: ReadonlyArray<OutboxEvent>) => Effect.Effect<void>
  /** Claims up to `limit` undispatched events whose lease is free at `now`, leased until `now + leaseMs`. */
  readonly claim: (options: {
    readonly now: number
    readonly limit: number
    readonly leaseMs: number
    readonly owner: string
  }) => Effect.Effect<ReadonlyArray<OutboxEvent>>
  /** Marks a claimed event dispatched (only by its lease owner). */
  readonly complete: (id: string, owner: string) => Effect.Effect<boolean>
  /** Marks many claimed events dispatched in one round trip (only those the owner holds); returns how many. */
  readonly completeMany: (ids: ReadonlyArray<string>, owner: string) => Effect.Effect<number>
  /** The next sequence number for an object (1 for its first event). */
  readonly nextSequence: (merchantId: string, businessId: string) => Effect.Effect<number>
  /** The next sequence number of each of many objects of one merchant, in one round trip. */
  readonly nextSequences: (
    merchantId: string,
    businessIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, number>>
}

/**
 * A unit of due work (a renewal, a retry, a trial end, a scheduled change...).
 *
 * @since 0.1.0
 */
export interface WorkItem {
  /**
   * `live` items run on real time; `frozen` items belong to a sandbox merchant with a frozen
   * clock and run only when that clock is advanced.
   */
  readonly lane?: "live" | "frozen" | "held"
  readonly merchant_id: string
  readonly kind: string
  readonly subject_id: string
  readonly due_at: number
  readonly attempts: number
}

/**
 * The work queue: one item per (kind, subject); workers claim due items with leases, so many
 * workers can run at once and none gets an item another holds.
 *
 * @since 0.1.0
 */
export interface WorkQueue {
  /** Schedules (or reschedules) the item for its subject. */
  readonly schedule: (item: Omit<WorkItem, "attempts">) => Effect.Effect<void>
  /** Schedules (or reschedules) many items in one round trip (a later item wins over an earlier one of the same subject). */
  readonly scheduleMany: (items: ReadonlyArray<Omit<WorkItem, "attempts">>) => Effect.Effect<void>
  readonly cancel: (merchantId: string, kind: string, subjectId: string) => Effect.Effect<void>
  /** Cancels many items in one round trip. */
  readonly cancelMany: (
    keys: ReadonlyArray<{ readonly merchant_id: string; readonly kind: string; readonly subject_id: string }>
  ) => Effect.Effect<void>
  /** Claims due items of one lane (default `live`), optionally of one merchant. */
  readonly claim: (options: {
    readonly now: number
    readonly limit: number
    readonly leaseMs: number
    readonly owner: string
    readonly merchantId?: string
    readonly lane?: "live" | "frozen"
  }) => Effect.Effect<ReadonlyArray<WorkItem>>
  /** Removes a claimed item once done (only by its lease owner, and only if not rescheduled since). */
  readonly complete: (item: WorkItem, owner: string) => Effect.Effect<boolean>
  /** `complete` for many claimed items in one round trip; returns how many were removed. */
  readonly completeMany: (items: ReadonlyArray<WorkItem>, owner: string) => Effect.Effect<number>
  /**
   * A claimed item failed: keep it, claimable again at `at` (only by its lease owner, and only
   * if not rescheduled since). `attempts` keeps counting until it completes or is rescheduled.
   */
  readonly retryLater: (item: WorkItem, owner: string, at: number) => Effect.Effect<boolean>
  /**
   * A claimed item failed too often: move it to the `held` lane, where no worker claims it and
   * it no longer counts as due; scheduling the same (kind, subject) again releases it.
   */
  readonly setAside: (item: WorkItem, owner: string) => Effect.Effect<boolean>
  /** The items set aside, of one merchant or all, oldest due first (at most `limit`). */
  readonly listSetAside: (options: {
    readonly merchantId?: string
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<WorkItem>>
  /** When a merchant's next item can be claimed (due and not leased), if any; items set aside do not count. */
  readonly nextDue: (merchantId: string) => Effect.Effect<Option.Option<number>>
}

/**
 * A stored Request-Id: in progress, or completed with its response.
 *
 * @since 0.1.0
 */
export interface IdempotencyRecord {
  readonly merchant_id: string
  readonly request_id: string
  readonly fingerprint: string
  readonly state: "in_progress" | "completed"
  readonly status: number | null
  readonly response: string | null
  readonly created_at: number
  readonly expires_at: number
}

/**
 * Idempotency records, one per (merchant, Request-Id).
 *
 * @since 0.1.0
 */
export interface IdempotencyStore {
  /** Inserts an in-progress record, or returns the existing one (expired ones are replaced). */
  readonly begin: (
    record: IdempotencyRecord
  ) => Effect.Effect<{ readonly created: true } | { readonly created: false; readonly existing: IdempotencyRecord }>
  readonly complete: (
    merchantId: string,
    requestId: string,
    status: number,
    response: string,
    expiresAt: number
  ) => Effect.Effect<void>
  /** Forgets a request (a 5xx is not stored, so it can be retried). */
  readonly release: (merchantId: string, requestId: string) => Effect.Effect<void>
  /**
   * Every merchant's completed records, ordered by (merchant, Request-Id): the page of up to
   * `limit` after `after`. For maintenance only (a master key rotation re-encrypting the stored
   * answers through `complete`).
   */
  readonly scanCompleted: (options: {
    readonly after?: { readonly merchant_id: string; readonly request_id: string } | undefined
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<IdempotencyRecord>>
}

/**
 * The storage of Recur: repositories, a unit of work, the outbox, the work queue and the
 * idempotency records. Provided by `@recur/sql` (`layerPg`, `layerPglite`) or
 * `@recur/testing` (`layerMemory`).
 *
 * @example
 * const program = Effect.gen(function* () {
 *   const storage = yield* Storage
 *   yield* storage.withTransaction(Effect.gen(function* () {
 *     yield* storage.repository(Entities.customer).insert(customer)
 *     yield* storage.outbox.append([event])
 *   }))
 * })
 * @since 0.1.0
 */
/**
 * Gapless counters: document numbers. `take` reserves the next `count` numbers of a merchant's
 * series and returns the first (1 for a series' first number). Inside a transaction the
 * reservation commits or rolls back with it, and concurrent transactions taking from the same
 * series wait for each other — so committed numbers never skip and never repeat.
 *
 * @since 0.1.0
 */
export interface Counters {
  readonly take: (merchantId: string, series: string, count: number) => Effect.Effect<number>
}

/**
 * One stored meter event (issue 35): usage of a billable metric (`code`) by a customer, at
 * `timestamp` (Unix ms), de-duplicated by `transaction_id` within the merchant. Property values
 * are stored as given, numbers as their exact decimal text (`1.5` is `"1.5"`); booleans stay
 * booleans. `voided_at` is set once a correction voids the event: aggregations ignore it.
 *
 * @since 0.1.0
 */
export interface MeterEvent {
  /** `mev_…` */
  readonly id: string
  readonly merchant_id: string
  /** The producer's idempotency key, 1–255 characters, unique within the merchant. */
  readonly transaction_id: string
  readonly customer_id: string
  readonly subscription_id: string | null
  /** The billable metric's code. */
  readonly code: string
  readonly timestamp: number
  readonly properties: Readonly<Record<string, string | boolean>>
  readonly created_at: number
  readonly voided_at: number | null
}

/**
 * What to aggregate: one customer's events of one metric in the half-open period
 * `[from, to)` (Unix ms). `subscription_id` narrows to one subscription's events (`null`: only
 * events without one; absent: every event of the customer).
 *
 * @since 0.1.0
 */
export interface MeterAggregateQuery {
  readonly merchant_id: string
  readonly customer_id: string
  readonly subscription_id?: string | null | undefined
  readonly code: string
  readonly from: number
  readonly to: number
  readonly spec: AggregationSpec
}

/**
 * The meter event store: append-only events, de-duplicated by `(merchant_id, transaction_id)`,
 * aggregated in the store (in SQL for the SQL adapters) exactly as `usage/Aggregation.ts`
 * defines. Every operation runs in the caller's transaction when in one.
 *
 * A property's value is numeric (read by `sum`, `max`, `latest`, `weighted_sum`) when its text
 * is a plain decimal (`^[+-]?[0-9]+(\.[0-9]+)?$`) of at most `MAX_SCALE` decimals (trailing
 * zeros aside) within ±`MAX_ABS_VALUE`; an event whose property is absent (or, for those four,
 * not numeric) takes no part in the value and is not counted in `events`. Without `group_by`
 * the answer is always one value (`"0"` over no event); with it, one per group present. Values
 * are normalized decimal text (`"3.5"`, never `"3.50"`); groups come in no particular order.
 *
 * @example
 * const { meter } = yield* Storage
 * const added = yield* meter.insertMany(events) // re-sent transaction ids are skipped
 * const [total] = yield* meter.aggregate({ merchant_id, customer_id, code: "api_calls", from, to,
 *   spec: { aggregation: "count", property: null, filters: [], group_by: [] } })
 * @since 0.1.0
 */
export interface MeterEvents {
  /**
   * Appends events in one round trip, skipping every event whose `(merchant_id, transaction_id)`
   * is already stored (or repeats an earlier event of the same batch). Returns the events
   * stored, in input order; input order is ingestion order (the tie-break of `latest` and
   * `weighted_sum` between events of one timestamp).
   */
  readonly insertMany: (events: ReadonlyArray<MeterEvent>) => Effect.Effect<ReadonlyArray<MeterEvent>>
  /** The aggregated values of one customer's metric over a period. */
  readonly aggregate: (query: MeterAggregateQuery) => Effect.Effect<ReadonlyArray<AggregatedValue>>
  /** The event of a transaction id, voided or not. */
  readonly get: (merchantId: string, transactionId: string) => Effect.Effect<Option.Option<MeterEvent>>
  /**
   * A page of a merchant's events, most recently ingested first, optionally of one customer
   * and one code; `starting_after` is an event id of an earlier page.
   */
  readonly list: (
    merchantId: string,
    query: {
      readonly customer_id?: string | undefined
      readonly code?: string | undefined
      readonly limit: number
      readonly starting_after?: string | undefined
    }
  ) => Effect.Effect<Page<MeterEvent>>
  /** Voids an event at `at`: aggregations ignore it from then on. `false` when unknown or already voided. */
  readonly void: (merchantId: string, transactionId: string, at: number) => Effect.Effect<boolean>
}

/**
 * @since 0.1.0
 */
export class Storage extends Context.Service<
  Storage,
  {
    readonly repository: <A, I>(entity: Entity<A, I>) => Repository<A>
    /** Runs `effect` in one transaction: every write commits, or none does (also on defects and interruption). */
    readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly outbox: Outbox
    readonly workQueue: WorkQueue
    readonly idempotency: IdempotencyStore
    readonly counters: Counters
    /** Meter events: ingestion and aggregation of usage-based billing. */
    readonly meter: MeterEvents
  }
>()("@recur/core/Storage") {}

/**
 * Checks a list request's page rules (shared by every adapter).
 *
 * @since 0.1.0
 */
export const checkPage = (query: ListQuery): InvalidPage | undefined =>
  !Number.isInteger(query.limit) || query.limit < 1 || query.limit > 100
    ? new InvalidPage({ reason: "limit_out_of_range" })
    : query.starting_after !== undefined && query.ending_before !== undefined
      ? new InvalidPage({ reason: "both_cursors" })
      : undefined
