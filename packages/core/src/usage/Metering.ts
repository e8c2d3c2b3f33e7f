/**
 * Metering: usage events of subscriptions with a metered (usage-based) item — the base item or
 * one beside other items, at most one per subscription — one at a time or up to 1,000 in one
 * transaction, de-duplicated by `event_id`, bounded so that no cycle rates above what one
 * invoice may carry; the usage summary of a cycle; a threshold reached bills at once; and the
 * current usage of the items billed by a billable metric (`MetricUsage`).
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, nowOf } from "../kernel/ServiceSupport.js"
import { mustBeLive } from "../subscriptions/SubscriptionStore.js"
import { meteredIndex } from "../subscriptions/SubscriptionItems.js"
import { paidIndex } from "../subscriptions/SubscriptionTerms.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { must } from "../kernel/ServiceSupport.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Price from "../catalog/Price.js"
import * as Pricing from "../money/Pricing.js"
import * as Renewals from "../subscriptions/Renewals.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Usage from "./Usage.js"
import * as MetricUsage from "./MetricUsage.js"

/**
 * The most units one usage event may carry.
 *
 * @since 0.1.0
 */
export const MAX_USAGE_COUNT = 1_000_000_000_000

/**
 * How far ahead of the merchant's clock a usage timestamp may be (a producer's clock running a
 * little fast): 5 minutes. Earlier than the open cycle's start, or later than this, is refused.
 *
 * @since 0.1.0
 */
export const USAGE_CLOCK_SKEW_MS = 5 * 60_000

/** The most billable units one cycle may accrue (its total stays a safe integer). */
const MAX_CYCLE_USAGE = 1_000_000_000_000_000n

/**
 * One usage event: `count` units of a usage-billed subscription. `eventId` makes re-sends
 * harmless (one record per subscription and event id); `at` (Unix ms) is when the usage
 * happened, default now. Built from a request by the contract's `Requests.usageEvent(s)`, in
 * code by {@link usageOf}.
 *
 * @since 0.1.0
 */
export interface UsageEvent {
  readonly subscriptionId: Ids.SubscriptionId
  readonly count: number
  readonly eventId?: string | undefined
  readonly at?: number | undefined
}

/**
 * A {@link UsageEvent} from its parts (a wrong id prefix throws: this is for code).
 *
 * @example
 * yield* metering.recordUsage(merchantId, Metering.usageOf(sub.id, 400, { eventId: "e1" }))
 * @since 0.1.0
 */
export const usageOf = (
  subscriptionId: string,
  count: number,
  parts: { readonly eventId?: string | undefined; readonly at?: number | undefined } = {}
): UsageEvent => ({ subscriptionId: Ids.SubscriptionId.make(subscriptionId), count, ...parts })

/**
 * The most records one usage batch may hold.
 *
 * @since 0.1.0
 */
export const MAX_USAGE_BATCH = 1000

/** The largest instant a JavaScript Date holds (±8.64e15 ms). */
const MAX_INSTANT_MS = 8_640_000_000_000_000

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const live = mustBeLive

/**
 * The price version of a subscription's metered item when it is an extra item (held on the
 * record); `undefined` when it is the base item (read by its id) or there is none.
 */
const meteredVersion = (rec: Entities.SubscriptionRecord): Price.PriceVersion | undefined => {
  const i = meteredIndex(rec)
  return i !== undefined && i > 0 ? rec.extra_items[i - 1]!.version : undefined
}

/**
 * The metering service.
 *
 * @since 0.1.0
 */
export class Metering extends Context.Service<Metering>()("@recur/core/Metering", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const renewals = yield* Renewals.Renewals
    const subs = storage.repository(Entities.subscription)
    const usage = storage.repository(Entities.usageRecord)
    const { version } = writes(storage)

    /**
     * Records usage for many subscriptions of one merchant in one transaction: the records in
     * one multi-row insert that skips re-sent `event_id`s, then one running-total update per
     * subscription. All or nothing: a bad event fails the batch (its position in the error's
     * `index` when `batch`) and writes nothing. A subscription that reaches its usage threshold
     * is invoiced afterwards.
     */
    const ingest = (merchantId: string, events: ReadonlyArray<UsageEvent>, batch: boolean) =>
      Effect.gen(function* () {
        if (events.length < 1 || events.length > MAX_USAGE_BATCH)
          return yield* new Errors.UsageBatchRefused({ size: events.length, max: MAX_USAGE_BATCH })
        const refuse = (i: number, reason: Errors.UsageRefused["reason"], detail: string) =>
          new Errors.UsageRefused({
            subscriptionId: events[i]!.subscriptionId,
            ...(batch ? { index: i } : {}),
            reason,
            detail
          })
        for (let i = 0; i < events.length; i++) {
          const r = events[i]!
          if (!Number.isSafeInteger(r.count) || r.count < 1 || r.count > MAX_USAGE_COUNT)
            return yield* refuse(i, "count", `must be a whole number from 1 to ${MAX_USAGE_COUNT}`)
          if (r.eventId !== undefined && (r.eventId.length < 1 || r.eventId.length > 255))
            return yield* refuse(i, "event_id", "must be 1 to 255 characters")
          if (r.at !== undefined && (!Number.isSafeInteger(r.at) || Math.abs(r.at) > MAX_INSTANT_MS))
            return yield* refuse(i, "instant", "must be an instant (Unix ms)")
        }
        const records = events
        const merchant = yield* merchants.get(merchantId)
        const result = yield* storage
          .withTransaction(
            Effect.gen(function* () {
              const at = yield* nowOf(merchant)
              const createdAt = dt(at)
              const found = yield* subs.getMany(
                merchantId,
                records.map((r) => r.subscriptionId)
              )
              const rows: Array<Entities.UsageRecordRow> = []
              for (let i = 0; i < records.length; i++) {
                const r = records[i]!
                const sv = found.get(r.subscriptionId)
                if (sv === undefined)
                  return yield* new Errors.NotFound({ resource: "subscription", id: r.subscriptionId })
                const sub = sv.value.subscription
                if (meteredIndex(sv.value) === undefined)
                  return yield* refuse(i, "not_metered", "the subscription has no item billed by usage")
                yield* live(sv.value, "record usage")
                if (r.at !== undefined) {
                  // usage belongs to the open cycle: from its start to now (plus a small clock skew)
                  const start =
                    sub.current_period_start === null
                      ? Number.NEGATIVE_INFINITY
                      : DateTime.toEpochMillis(sub.current_period_start)
                  if (r.at < start || r.at > at + USAGE_CLOCK_SKEW_MS)
                    return yield* refuse(
                      i,
                      "instant",
                      `must be inside the subscription's open cycle: from ${Number.isFinite(start) ? new Date(start).toISOString() : "its start"} to ${new Date(at + USAGE_CLOCK_SKEW_MS).toISOString()} (now + 5 minutes)`
                    )
                }
                const id = yield* Ids.make(Ids.prefixes.usageRecord)
                rows.push({
                  merchant_id: merchantId,
                  trial: sub.status === "trial",
                  // fields checked above: skip the constructor's re-validation (hot path, 1,000 per batch)
                  usage: new Usage.UsageRecord(
                    {
                      id,
                      subscription_id: r.subscriptionId,
                      event_id: r.eventId ?? id,
                      usage_count: r.count,
                      cycle_index: sub.cycle_index,
                      timestamp: dt(r.at ?? at),
                      created_at: createdAt
                    },
                    { disableChecks: true }
                  )
                })
              }
              // one lock order for every writer (records, then subscriptions, by id): concurrent batches never deadlock
              const ordered = [...rows].sort(
                (a, b) =>
                  compareKeys(a.usage.subscription_id, b.usage.subscription_id) ||
                  compareKeys(a.usage.event_id, b.usage.event_id)
              )
              const inserted = new Set(yield* usage.insertMany(ordered))
              const added = new Map<string, bigint>()
              for (const row of inserted) {
                if (!row.trial)
                  added.set(
                    row.usage.subscription_id,
                    (added.get(row.usage.subscription_id) ?? 0n) + BigInt(row.usage.usage_count)
                  )
              }
              const changed = [...added.keys()].sort(compareKeys).map((id) => {
                const sv = found.get(id)!
                const accrued = BigInt(sv.value.accrued_usage) + added.get(id)!
                return {
                  value: {
                    ...sv.value,
                    accrued_usage: accrued.toString(),
                    subscription: new Subscription.Subscription(
                      { ...sv.value.subscription, updated_at: dt(at) },
                      { disableChecks: true }
                    )
                  },
                  expectedVersion: sv.version
                }
              })
              // a cycle's usage never bills more than an invoice can carry
              const prices = new Map<string, Price.PriceVersion>()
              for (const { value } of changed) {
                const id = value.subscription.price_version_id
                const pv = meteredVersion(value) ?? prices.get(id) ?? (yield* version(merchantId, id))
                prices.set(pv.price_version_id, pv)
                const accrued = BigInt(value.accrued_usage)
                const amount =
                  accrued <= MAX_CYCLE_USAGE
                    ? Pricing.rate(
                        Price.modelOf(pv, paidIndex(value, value.subscription.cycle_index)),
                        accrued,
                        pv.currency
                      ).amount
                    : undefined
                if (amount === undefined || !Money.isWithinBounds(amount)) {
                  const index = records.findIndex((r) => r.subscriptionId === value.subscription.id)
                  return yield* refuse(
                    index,
                    "above_bound",
                    `this cycle's usage of ${value.subscription.id} would reach ${accrued} units${amount ? ` (${Money.format(amount)} ${amount.currency})` : ""}, above the most one cycle may bill`
                  )
                }
              }
              yield* subs.updateMany(changed)
              const due: Array<string> = []
              for (const { value } of changed) {
                if (value.subscription.billing_cycle_unit !== "over_threshold") continue
                const pv = yield* version(merchantId, value.subscription.price_version_id)
                if (Pricing.thresholdReached(BigInt(value.accrued_usage), BigInt(pv.usage_threshold ?? "0")))
                  due.push(value.subscription.id)
              }
              return { rows, inserted, due }
            })
          )
          .pipe(
            // another writer updated one of the subscriptions first: re-read and apply again
            Effect.retry({ while: (e) => e._tag === "VersionConflict", times: 50 }),
            Effect.catchTags({ VersionConflict: (e) => Effect.die(e), UniqueViolation: (e) => Effect.die(e) })
          )
        for (const id of result.due) yield* renewals.renew(merchantId, id, { force: true })
        const results = result.rows.map((row) => ({
          subscription_id: row.usage.subscription_id,
          event_id: row.usage.event_id,
          cycle_index: row.usage.cycle_index,
          usage_count: row.usage.usage_count,
          duplicate: !result.inserted.has(row)
        }))
        const duplicates = results.reduce((n, r) => (r.duplicate ? n + 1 : n), 0)
        return { accepted: results.length - duplicates, duplicates, records: results }
      })

    /** Records one usage event (`event_id` de-duplicates re-sends). */
    const recordUsage = Effect.fn("Metering.recordUsage")(function* (merchantId: string, event: UsageEvent) {
      return yield* Effect.map(ingest(merchantId, [event], false), (batch) => {
        const r = batch.records[0]!
        return {
          subscription_id: r.subscription_id,
          cycle_index: r.cycle_index,
          usage_count: r.usage_count,
          duplicate: r.duplicate
        }
      })
    })

    /** Records up to 1,000 usage events of any of the merchant's subscriptions in one transaction. */
    const recordUsageBatch = Effect.fn("Metering.recordUsageBatch")(function* (
      merchantId: string,
      events: ReadonlyArray<UsageEvent>
    ) {
      return yield* ingest(merchantId, events, true)
    })

    const usageSummary = Effect.fn("Metering.usageSummary")(function* (
      merchantId: string,
      subscriptionId: string,
      cycleIndex?: number
    ) {
      const rec = (yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )).value
      const cycle = cycleIndex ?? rec.subscription.cycle_index
      const rows: Array<Entities.UsageRecordRow> = []
      let cursor: string | undefined
      for (;;) {
        const page = yield* Effect.orDie(
          usage.list(merchantId, {
            limit: 100,
            starting_after: cursor,
            filters: [
              { column: "subscription_id", op: "in", values: [subscriptionId] },
              { column: "cycle_index", op: "in", values: [cycle] }
            ]
          })
        )
        rows.push(...page.list)
        if (!page.has_more) break
        cursor = page.list[page.list.length - 1]!.usage.id
      }
      const total = rows.reduce((a, r) => a + BigInt(r.usage.usage_count), 0n)
      const trial = rows.filter((r) => r.trial).reduce((a, r) => a + BigInt(r.usage.usage_count), 0n)
      const pv = meteredVersion(rec) ?? (yield* version(merchantId, rec.subscription.price_version_id))
      const amount =
        pv.billing_dimension === "usage"
          ? Pricing.rate(Price.modelOf(pv, paidIndex(rec, cycle)), total - trial, pv.currency).amount
          : Money.zero(pv.currency)
      return new Usage.UsageSummary({
        subscription_id: subscriptionId,
        usage_unit: pv.usage_unit,
        billing_amount: Money.format(amount),
        currency: pv.currency,
        total_usage_count: Number(total),
        billing_usage_count: Number(total - trial),
        trial_usage_count: Number(trial)
      })
    })

    /**
     * The usage of a subscription's current period so far, item by item billed by a billable
     * metric (`MetricUsage.current`): what its next renewal bills of them if no more event comes.
     */
    const currentUsage = Effect.fn("Metering.currentUsage")(function* (merchantId: string, subscriptionId: string) {
      yield* merchants.get(merchantId)
      const rec = (yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )).value
      return yield* MetricUsage.current(storage)(merchantId, rec)
    })

    return { recordUsage, recordUsageBatch, usageSummary, currentUsage } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
