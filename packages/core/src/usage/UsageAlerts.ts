/**
 * The merchant's usage alerts (created, listed, read, deleted) and a subscription's progressive
 * billing threshold (issue 35). What an alert is and when it fires: `UsageAlert`; the check that
 * fires it and bills progressively: `UsageChecks`.
 *
 * @example
 * const alert = yield* (yield* UsageAlerts).create(merchantId, { subscription_id, billable_metric_id: "api_calls", thresholds: [{ type: "amount", value: "80.00" }] })
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { pageErrors } from "../kernel/Paging.js"
import { laneOf, nowOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Merchants from "../tenants/Merchants.js"
import { find as findMetric } from "./BillableMetrics.js"
import * as ProgressiveBilling from "./ProgressiveBilling.js"
import * as UsageAlert from "./UsageAlert.js"

/**
 * A new usage alert: the subscription, the metric (id or code), the thresholds, a name.
 *
 * @since 0.1.0
 */
export interface CreateUsageAlert {
  readonly subscription_id?: string | undefined
  readonly billable_metric_id?: string | undefined
  readonly thresholds?: ReadonlyArray<UsageAlert.ThresholdInput> | undefined
  readonly name?: string | null | undefined
}

/**
 * Usage alert list filters.
 *
 * @since 0.1.0
 */
export interface ListUsageAlerts {
  readonly subscription_id?: string | undefined
  readonly customer_id?: string | undefined
  readonly limit?: number | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/** A fresh usage billing record of a subscription (nothing watched). */
const freshRecord = (rec: Entities.SubscriptionRecord, merchantId: string, at: number) =>
  new UsageAlert.UsageBilling({
    subscription_id: rec.subscription.id,
    merchant_id: merchantId,
    currency: rec.currency,
    progressive_billing_threshold: null,
    alerts: 0,
    cycle_index: null,
    billed: [],
    invoice_ids: [],
    closed: false,
    created_at: DateTime.makeUnsafe(at),
    updated_at: DateTime.makeUnsafe(at)
  })

/**
 * Writes a subscription's usage billing record changed by `change` at the version read (inserts
 * it the first time); a concurrent writer is a `ConcurrentUpdate`.
 *
 * @since 0.1.0
 */
export const changeRecord = (
  storage: StorageService,
  merchantId: string,
  rec: Entities.SubscriptionRecord,
  at: number,
  change: (r: UsageAlert.UsageBilling) => UsageAlert.UsageBilling
) =>
  Effect.gen(function* () {
    const records = storage.repository(Entities.usageBilling)
    const found = yield* records.get(merchantId, rec.subscription.id)
    const conflict = () =>
      Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: rec.subscription.id }))
    if (Option.isNone(found)) {
      const next = change(freshRecord(rec, merchantId, at))
      yield* records.insert(next).pipe(Effect.catchTag("UniqueViolation", conflict))
      return next
    }
    const next = new UsageAlert.UsageBilling({
      ...change(found.value.value),
      updated_at: DateTime.makeUnsafe(at)
    })
    yield* records
      .update(next, found.value.version)
      .pipe(Effect.catchTag("VersionConflict", conflict), Effect.catchTag("UniqueViolation", conflict))
    return next
  })

/**
 * The usage alerts service.
 *
 * @since 0.1.0
 */
export class UsageAlerts extends Context.Service<UsageAlerts>()("@recur/core/UsageAlerts", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const alerts = storage.repository(Entities.usageAlert)
    const subs = storage.repository(Entities.subscription)
    const records = storage.repository(Entities.usageBilling)

    const subscriptionOf = (merchantId: string, id: string | undefined, param?: string) =>
      Effect.gen(function* () {
        if (id === undefined || id === "")
          return yield* new Errors.InvalidParameter({ param: param ?? "subscription_id", reason: "is required" })
        const found = yield* subs.get(merchantId, id)
        if (Option.isNone(found))
          return yield* new Errors.NotFound({
            resource: "subscription",
            id,
            ...(param !== undefined ? { param } : {})
          })
        return found.value.value
      })

    /** Schedules the subscription's usage check now (a new alert fires at once when already crossed). */
    const checkSoon = (merchant: Parameters<typeof laneOf>[0], subscriptionId: string, at: number) =>
      storage.workQueue.schedule({
        lane: laneOf(merchant),
        merchant_id: merchant.merchant_id,
        kind: ProgressiveBilling.CHECK_KIND,
        subject_id: subscriptionId,
        due_at: at
      })

    /**
     * Creates an alert on a subscription's metric (`InvalidParameter` naming the field; a
     * subscription or metric that does not exist: `NotFound` naming it; a canceled subscription:
     * `StateConflict`); at most {@link UsageAlert.MAX_ALERTS_PER_SUBSCRIPTION} per subscription.
     * Its first check is scheduled at once.
     */
    const create = Effect.fn("UsageAlerts.create")(function* (merchantId: string, command: CreateUsageAlert) {
      const merchant = yield* merchants.get(merchantId)
      const rec = yield* subscriptionOf(merchantId, command.subscription_id, "subscription_id")
      if (rec.subscription.status === "canceled")
        return yield* new Errors.StateConflict({
          resource: "subscription",
          id: rec.subscription.id,
          state: rec.subscription.status,
          reason: "an ended subscription takes no usage alert"
        })
      if (command.billable_metric_id === undefined || command.billable_metric_id === "")
        return yield* new Errors.InvalidParameter({ param: "billable_metric_id", reason: "is required" })
      const metric = yield* findMetric(storage, merchantId, command.billable_metric_id)
      if (Option.isNone(metric))
        return yield* new Errors.NotFound({
          resource: "billable_metric",
          id: command.billable_metric_id,
          param: "billable_metric_id"
        })
      if (command.name !== undefined && command.name !== null && (command.name.length < 1 || command.name.length > 255))
        return yield* new Errors.InvalidParameter({ param: "name", reason: "must be 1 to 255 characters" })
      const thresholds = yield* Effect.fromResult(UsageAlert.checkThresholds(command.thresholds, rec.currency))
      const at = yield* nowOf(merchant)
      const alert = new UsageAlert.UsageAlert({
        usage_alert_id: yield* Ids.make(Ids.prefixes.usageAlert),
        merchant_id: merchantId,
        subscription_id: rec.subscription.id,
        customer_id: rec.subscription.customer_id,
        billable_metric_id: metric.value.value.billable_metric_id,
        metric_code: metric.value.value.code,
        name: command.name ?? null,
        currency: rec.currency,
        thresholds: [...thresholds],
        cycle_index: null,
        fired: [],
        created_at: DateTime.makeUnsafe(at),
        updated_at: DateTime.makeUnsafe(at)
      })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const next = yield* changeRecord(
            storage,
            merchantId,
            rec,
            at,
            (r) => new UsageAlert.UsageBilling({ ...r, alerts: r.alerts + 1 })
          )
          if (next.alerts > UsageAlert.MAX_ALERTS_PER_SUBSCRIPTION)
            return yield* new Errors.InvalidRequest({
              reason: `a subscription has at most ${UsageAlert.MAX_ALERTS_PER_SUBSCRIPTION} usage alerts`,
              param: "subscription_id"
            })
          yield* alerts.insert(alert).pipe(Effect.orDie)
          yield* checkSoon(merchant, rec.subscription.id, at)
        })
      )
      return alert
    })

    /** One alert of the merchant. */
    const get = Effect.fn("UsageAlerts.get")(function* (merchantId: string, id: string) {
      const found = yield* alerts.get(merchantId, id)
      if (Option.isNone(found)) return yield* new Errors.NotFound({ resource: "usage_alert", id })
      return found.value.value
    })

    /** The merchant's alerts, newest first, of a subscription or a customer. */
    const list = Effect.fn("UsageAlerts.list")(function* (merchantId: string, q: ListUsageAlerts) {
      const filters: Array<Store.Filter> = []
      if (q.subscription_id !== undefined)
        filters.push({ column: "subscription_id", op: "in", values: [q.subscription_id] })
      if (q.customer_id !== undefined) filters.push({ column: "customer_id", op: "in", values: [q.customer_id] })
      return yield* pageErrors(
        alerts.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before
        })
      )
    })

    /** Deletes an alert (it fires nothing more); answers it as it was. */
    const remove = Effect.fn("UsageAlerts.remove")(function* (merchantId: string, id: string) {
      const merchant = yield* merchants.get(merchantId)
      const alert = yield* get(merchantId, id)
      const at = yield* nowOf(merchant)
      const rec = yield* subscriptionOf(merchantId, alert.subscription_id)
      yield* storage.withTransaction(
        Effect.gen(function* () {
          if (!(yield* alerts.remove(merchantId, id)))
            return yield* new Errors.NotFound({ resource: "usage_alert", id })
          yield* changeRecord(
            storage,
            merchantId,
            rec,
            at,
            (r) => new UsageAlert.UsageBilling({ ...r, alerts: Math.max(0, r.alerts - 1) })
          )
        })
      )
      return alert
    })

    /** A subscription's usage billing record (its progressive billing threshold and what it billed early). */
    const usageBilling = Effect.fn("UsageAlerts.usageBilling")(function* (merchantId: string, subscriptionId: string) {
      const rec = yield* subscriptionOf(merchantId, subscriptionId)
      const found = yield* records.get(merchantId, subscriptionId)
      return Option.isSome(found) ? found.value.value : freshRecord(rec, merchantId, 0)
    })

    /**
     * Sets (an amount in the subscription's currency, above 0) or clears (`null`) a subscription's
     * progressive billing threshold; a check is scheduled at once.
     */
    const setProgressiveBilling = Effect.fn("UsageAlerts.setProgressiveBilling")(function* (
      merchantId: string,
      subscriptionId: string,
      threshold: string | null | undefined
    ) {
      const merchant = yield* merchants.get(merchantId)
      const rec = yield* subscriptionOf(merchantId, subscriptionId)
      let amount: string | null = null
      if (threshold === undefined)
        return yield* new Errors.InvalidParameter({ param: "progressive_billing_threshold", reason: "is required" })
      if (threshold !== null) {
        const parsed = Money.parse(threshold, rec.currency)
        if (Result.isFailure(parsed) || parsed.success.amount <= 0n || !Money.isWithinBounds(parsed.success))
          return yield* new Errors.InvalidParameter({
            param: "progressive_billing_threshold",
            reason: `must be a positive amount in ${rec.currency}, or null`
          })
        amount = Money.format(parsed.success)
      }
      const at = yield* nowOf(merchant)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const next = yield* changeRecord(
            storage,
            merchantId,
            rec,
            at,
            (r) => new UsageAlert.UsageBilling({ ...r, progressive_billing_threshold: amount })
          )
          if (amount !== null) yield* checkSoon(merchant, subscriptionId, at)
          return next
        })
      )
    })

    return { create, get, list, remove, usageBilling, setProgressiveBilling } as const
  })
}) {
  /** @since 0.1.0 */
  static readonly layer = Layer.effect(this, this.make)
}
