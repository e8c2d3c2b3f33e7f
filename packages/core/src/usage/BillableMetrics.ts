/**
 * The merchant's billable metrics: created, listed, read (by id or code), updated and archived,
 * and the check a usage price referencing one passes ({@link forPrice}). What a metric is and
 * its rules are in `BillableMetric`; what it computes in `Aggregation`.
 *
 * @example
 * const metric = yield* (yield* BillableMetrics).create(merchantId, { code: "api_calls", name: "API calls", aggregation: "count", group_by: ["region"] })
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { maxItems, pageErrors } from "../kernel/Paging.js"
import { emitAll, merchantNow, type StorageService } from "../kernel/ServiceSupport.js"
import type * as Store from "../kernel/Store.js"
import { Storage } from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import * as BillableMetric from "./BillableMetric.js"

/**
 * Billable metric list filters.
 *
 * @since 0.1.0
 */
export interface ListMetrics {
  readonly status?: ReadonlyArray<Lifecycle.BillableMetricStatus>
  readonly codes?: ReadonlyArray<string>
  readonly created?: Store.CreatedRange | undefined
  readonly limit?: number | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/**
 * A metric by its id (`bm_…`) or its code: an id is looked up first, then a code (a code may
 * itself look like an id; ids are found first).
 *
 * @since 0.1.0
 */
export const find = (storage: StorageService, merchantId: string, ref: string) =>
  Effect.gen(function* () {
    const metrics = storage.repository(Entities.billableMetric)
    if (Ids.isValid(Ids.prefixes.billableMetric, ref)) {
      const byId = yield* metrics.get(merchantId, ref)
      if (Option.isSome(byId)) return byId
    }
    return BillableMetric.CODE_PATTERN.test(ref) ? yield* metrics.findBy(merchantId, "code", ref) : Option.none()
  })

/**
 * The metric a new usage price references and its group, checked (the one check of a new price
 * and of a new version): the metric exists (by id or code: `NotFound` naming
 * `billable_metric_id`) and is active (an archived one: `InvalidParameter`); `group` has one
 * value for each of its `group_by` properties (`InvalidParameter` naming `metric_group`).
 * Returns the metric's id and the group to store (`null` without grouping).
 *
 * @since 0.1.0
 */
export const forPrice = (
  storage: StorageService,
  merchantId: string,
  ref: string,
  group: Readonly<Record<string, string>> | null
) =>
  Effect.gen(function* () {
    const found = yield* find(storage, merchantId, ref)
    if (Option.isNone(found))
      return yield* new Errors.NotFound({ resource: "billable_metric", id: ref, param: "billable_metric_id" })
    const metric = found.value.value
    if (metric.status !== "active")
      return yield* new Errors.InvalidParameter({
        param: "billable_metric_id",
        reason: "this billable metric is archived: new prices cannot reference it"
      })
    const why = BillableMetric.groupRefusal(metric, group)
    if (why !== undefined) return yield* new Errors.InvalidParameter({ param: "metric_group", reason: why })
    return {
      billable_metric_id: metric.billable_metric_id,
      metric_group: metric.group_by.length === 0 ? null : { ...group }
    } as const
  })

/**
 * The billable metrics service.
 *
 * @since 0.1.0
 */
export class BillableMetrics extends Context.Service<BillableMetrics>()("@recur/core/BillableMetrics", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const merchants = yield* Merchants.Merchants
    const metrics = storage.repository(Entities.billableMetric)
    const now = merchantNow(storage)

    const getRecord = (merchantId: string, ref: string) =>
      Effect.flatMap(find(storage, merchantId, ref), (o) =>
        Option.isSome(o)
          ? Effect.succeed(o.value)
          : Effect.fail(new Errors.NotFound({ resource: "billable_metric", id: ref }))
      )

    /** Saves a moved metric at its version and emits its events, in one transaction. */
    const save = (
      merchantId: string,
      moved: Lifecycle.Moved<BillableMetric.BillableMetric>,
      version: number,
      at: number
    ) =>
      storage.withTransaction(
        Effect.gen(function* () {
          yield* metrics.update(moved.value, version).pipe(
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(
                new Errors.ConcurrentUpdate({ resource: "billable_metric", id: moved.value.billable_metric_id })
              )
            )
          )
          yield* emitAll(storage, moved.events, {
            merchant_id: merchantId,
            business_id: moved.value.billable_metric_id,
            schema: BillableMetric.BillableMetric,
            data: moved.value,
            at
          })
          return moved.value
        })
      )

    /**
     * Creates a metric (checked by `BillableMetric.checkNew`: `InvalidParameter` naming the
     * field); emits `v2.billable_metric.created`. A code already used by another metric of the
     * merchant, archived or not, is a `DuplicateResource`.
     */
    const create = Effect.fn("BillableMetrics.create")(function* (
      merchantId: string,
      command: BillableMetric.MetricCommand
    ) {
      yield* merchants.get(merchantId)
      const checked = yield* Effect.fromResult(BillableMetric.checkNew(command))
      const at = yield* now(merchantId)
      const metric = new BillableMetric.BillableMetric({
        billable_metric_id: yield* Ids.make(Ids.prefixes.billableMetric),
        merchant_id: merchantId,
        ...checked,
        filters: [...checked.filters],
        group_by: [...checked.group_by],
        status: Lifecycle.billableMetric.initial,
        created_at: DateTime.makeUnsafe(at),
        updated_at: DateTime.makeUnsafe(at)
      })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.catchTag(metrics.insert(metric), "UniqueViolation", () =>
            Effect.fail(new Errors.DuplicateResource({ resource: "billable_metric", param: "code" }))
          )
          yield* emitAll(storage, Lifecycle.billableMetric.createEvents, {
            merchant_id: merchantId,
            business_id: metric.billable_metric_id,
            schema: BillableMetric.BillableMetric,
            data: metric,
            at
          })
        })
      )
      return metric
    })

    /** One metric of this merchant, by its id or its code. */
    const get = Effect.fn("BillableMetrics.get")(function* (merchantId: string, ref: string) {
      return (yield* getRecord(merchantId, ref)).value
    })

    /** The merchant's metrics, newest first, by status and code. */
    const list = Effect.fn("BillableMetrics.list")(function* (merchantId: string, q: ListMetrics) {
      yield* maxItems("code", q.codes, 100)
      const filters: Array<Store.Filter> = []
      if (q.status?.length) filters.push({ column: "status", op: "in", values: q.status })
      if (q.codes?.length) filters.push({ column: "code", op: "in", values: q.codes })
      return yield* pageErrors(
        metrics.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
    })

    /**
     * Changes an active metric's name, description, filters or late window (checked as at
     * creation); emits `v2.billable_metric.updated`. An archived metric is a `StateConflict`.
     */
    const update = Effect.fn("BillableMetrics.update")(function* (
      merchantId: string,
      ref: string,
      input: BillableMetric.MetricUpdate
    ) {
      const current = yield* getRecord(merchantId, ref)
      const patch = yield* Effect.fromResult(BillableMetric.checkUpdate(current.value, input))
      const at = yield* now(merchantId)
      const moved = BillableMetric.move(current.value, "update", {
        ...patch,
        filters: [...patch.filters],
        updated_at: DateTime.makeUnsafe(at)
      })
      if (Result.isFailure(moved))
        return yield* new Errors.StateConflict({
          resource: "billable_metric",
          id: current.value.billable_metric_id,
          state: current.value.status,
          reason: "an archived metric cannot be changed"
        })
      return yield* save(merchantId, moved.success, current.version, at)
    })

    /**
     * Archives a metric: no new price may reference it; prices that already do keep billing it
     * (and its events keep counting). Emits `v2.billable_metric.archived`; archiving twice is a
     * `StateConflict`.
     */
    const archive = Effect.fn("BillableMetrics.archive")(function* (merchantId: string, ref: string) {
      const current = yield* getRecord(merchantId, ref)
      const at = yield* now(merchantId)
      const moved = BillableMetric.move(current.value, "archive", { updated_at: DateTime.makeUnsafe(at) })
      if (Result.isFailure(moved))
        return yield* new Errors.StateConflict({
          resource: "billable_metric",
          id: current.value.billable_metric_id,
          state: current.value.status,
          reason: "it is already archived"
        })
      return yield* save(merchantId, moved.success, current.version, at)
    })

    return { create, get, list, update, archive } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
