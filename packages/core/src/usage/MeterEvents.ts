/**
 * Meter events (issue 35): usage of a billable metric by a customer, ingested one at a time or
 * up to 1,000 in one transaction, de-duplicated by `transaction_id`, stored for the
 * aggregations of `usage/Aggregation.ts` (computed by the store: `Store.MeterEvents`).
 * Validation is all or nothing: a bad event refuses the batch, naming its index. An event's
 * code names an active billable metric; a numeric metric's property, when present, is a number;
 * an event without a subscription is attached to the customer's one live subscription pricing
 * its metric (refused when there are several).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as Common from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import type { PropertyValue } from "./Aggregation.js"
import * as MeterValues from "./MeterValues.js"
import type * as BillableMetric from "./BillableMetric.js"
import * as Price from "../catalog/Price.js"
import * as LateEvents from "./LateEvents.js"
import * as UsageChecks from "./UsageChecks.js"

/** The aggregations that read a numeric property. */
const NUMERIC: ReadonlySet<string> = new Set(["sum", "max", "latest", "weighted_sum"])

/**
 * The most events one call may carry.
 *
 * @since 0.1.0
 */
export const MAX_BATCH = 1000

/**
 * How far ahead of the merchant's clock an event's timestamp may be: 5 minutes.
 *
 * @since 0.1.0
 */
export const CLOCK_SKEW_MS = 5 * 60_000

/**
 * The most properties one event may carry.
 *
 * @since 0.1.0
 */
export const MAX_PROPERTIES = 32

/** The largest instant a JavaScript Date holds (±8.64e15 ms). */
const MAX_INSTANT_MS = 8_640_000_000_000_000

const CODE = /^[a-z0-9_]{1,64}$/

/**
 * One event as the API and the facade give it: `timestamp` in Unix ms (now when absent),
 * `subscription_id` optional (it must be the customer's).
 *
 * @since 0.1.0
 */
export interface MeterEventInput {
  readonly transaction_id: string
  readonly customer_id: string
  readonly subscription_id?: string | null | undefined
  readonly code: string
  readonly timestamp?: number | undefined
  readonly properties?: Readonly<Record<string, PropertyValue>> | undefined
}

/**
 * A stored event as the API shows it (instants in RFC 3339).
 *
 * @since 0.1.0
 */
export const MeterEventView = Schema.Struct({
  id: Schema.String,
  transaction_id: Schema.String,
  customer_id: Schema.String,
  subscription_id: Schema.NullOr(Schema.String),
  code: Schema.String,
  timestamp: Schema.String,
  properties: Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Boolean])),
  created_at: Schema.String,
  voided_at: Schema.NullOr(Schema.String)
})

/** @since 0.1.0 */
export type MeterEventView = typeof MeterEventView.Type

/**
 * The API's view of a stored event.
 *
 * @since 0.1.0
 */
export const viewOf = (e: Store.MeterEvent): MeterEventView => ({
  id: e.id,
  transaction_id: e.transaction_id,
  customer_id: e.customer_id,
  subscription_id: e.subscription_id,
  code: e.code,
  timestamp: Common.formatInstant(e.timestamp),
  properties: e.properties,
  created_at: Common.formatInstant(e.created_at),
  voided_at: e.voided_at === null ? null : Common.formatInstant(e.voided_at)
})

/**
 * What an ingestion did: the events stored, and the transaction ids already known (skipped).
 *
 * @since 0.1.0
 */
export interface Ingested {
  readonly accepted: ReadonlyArray<Store.MeterEvent>
  readonly duplicates: ReadonlyArray<string>
}

/**
 * The stored properties of an event: numbers as their exact decimal text; or what is wrong.
 *
 * @since 0.1.0
 */
export const propertiesOf = (
  properties: Readonly<Record<string, unknown>>
): { readonly stored: Record<string, string | boolean> } | { readonly property?: string; readonly detail: string } => {
  const stored: Record<string, string | boolean> = {}
  let n = 0
  for (const key in properties) {
    if (!Object.hasOwn(properties, key)) continue
    if (++n > MAX_PROPERTIES) return { detail: `at most ${MAX_PROPERTIES} properties` }
    if (key.length < 1 || key.length > 64) return { property: key, detail: "a property name is 1 to 64 characters" }
    const v = properties[key]
    if (typeof v === "string") {
      if (v.length > 255) return { property: key, detail: "must be at most 255 characters" }
      stored[key] = v
    } else if (typeof v === "boolean") stored[key] = v
    else if (typeof v === "number") {
      const t = MeterValues.numberText(v)
      if ("refused" in t) return { property: key, detail: t.refused }
      stored[key] = t.text
    } else return { property: key, detail: "must be a string, a number or a boolean" }
  }
  return { stored }
}

/**
 * The meter event service.
 *
 * @example
 * const meter = yield* MeterEvents.MeterEvents
 * yield* meter.ingest(merchantId, [{ transaction_id: "t1", customer_id, code: "api_calls", properties: { region: "eu" } }])
 * @since 0.1.0
 */
export class MeterEvents extends Context.Service<MeterEvents>()("@recur/core/MeterEvents", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const customers = storage.repository(Entities.customer)
    const subscriptions = storage.repository(Entities.subscription)
    const metrics = storage.repository(Entities.billableMetric)

    /**
     * The events sent without a subscription, each given the customer's one live subscription
     * (trial, active, past due) pricing its metric; kept without one when the customer has none
     * (no subscription bills it); refused when it has several (which one is ambiguous: the
     * producer names it). One read of the live subscriptions of the batch's customers.
     */
    const attach = (
      merchantId: string,
      rows: ReadonlyArray<Store.MeterEvent>,
      byCode: ReadonlyMap<string, BillableMetric.BillableMetric | undefined>,
      refuse: (i: number, field: "subscription_id", detail: string) => Errors.MeterEventRefused
    ) =>
      Effect.gen(function* () {
        const loose = [...new Set(rows.filter((r) => r.subscription_id === null).map((r) => r.customer_id))]
        if (loose.length === 0) return rows
        const live = new Map<string, Array<Entities.SubscriptionRecord>>()
        let cursor: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(
            subscriptions.list(merchantId, {
              limit: 100,
              starting_after: cursor,
              filters: [
                { column: "customer_id", op: "in", values: loose },
                { column: "status", op: "in", values: ["trial", "active", "past_due"] }
              ]
            })
          )
          for (const rec of page.list)
            if (rec.extra_items.some((x) => Price.isMetricBased(x.version)))
              live.set(rec.subscription.customer_id, [...(live.get(rec.subscription.customer_id) ?? []), rec])
          if (!page.has_more || page.list.length === 0) break
          cursor = page.list[page.list.length - 1]!.subscription.id
        }
        if (live.size === 0) return rows
        const out: Array<Store.MeterEvent> = []
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!
          if (r.subscription_id !== null) {
            out.push(r)
            continue
          }
          const metricId = byCode.get(r.code)!.billable_metric_id
          const pricing = (live.get(r.customer_id) ?? []).filter((rec) =>
            rec.extra_items.some((x) => Price.isMetricBased(x.version) && x.version.billable_metric_id === metricId)
          )
          if (pricing.length > 1)
            return yield* refuse(
              i,
              "subscription_id",
              `is required: customer ${r.customer_id} has ${pricing.length} live subscriptions pricing "${r.code}" (${pricing.map((x) => x.subscription.id).join(", ")})`
            )
          out.push(pricing.length === 1 ? { ...r, subscription_id: pricing[0]!.subscription.id } : r)
        }
        return out
      })

    const ingestAll = (merchantId: string, events: ReadonlyArray<MeterEventInput>, batch: boolean) =>
      Effect.gen(function* () {
        if (events.length < 1 || events.length > MAX_BATCH)
          return yield* new Errors.MeterEventRefused({
            field: "events",
            detail: `a batch holds 1 to ${MAX_BATCH} events, not ${events.length}`
          })
        const refuse = (i: number, field: Errors.MeterEventRefused["field"], detail: string, property?: string) =>
          new Errors.MeterEventRefused({
            ...(batch ? { index: i } : {}),
            field,
            detail,
            ...(property !== undefined ? { property } : {})
          })
        const merchant = yield* merchants.get(merchantId)
        const now = yield* nowOf(merchant)
        const rows: Array<Store.MeterEvent> = []
        const customerIds = new Set<string>()
        const subscriptionIds = new Set<string>()
        for (let i = 0; i < events.length; i++) {
          const e = events[i]!
          if (typeof e.transaction_id !== "string" || e.transaction_id.length < 1 || e.transaction_id.length > 255)
            return yield* refuse(i, "transaction_id", "must be 1 to 255 characters")
          if (typeof e.code !== "string" || !CODE.test(e.code))
            return yield* refuse(i, "code", "must be 1 to 64 characters of a-z, 0-9 and _")
          if (typeof e.customer_id !== "string" || e.customer_id.length === 0)
            return yield* refuse(i, "customer_id", "is required")
          const at = e.timestamp ?? now
          if (!Number.isSafeInteger(at) || Math.abs(at) > MAX_INSTANT_MS)
            return yield* refuse(i, "timestamp", "must be an instant (Unix ms)")
          if (at > now + CLOCK_SKEW_MS)
            return yield* refuse(
              i,
              "timestamp",
              `must not be after ${Common.formatInstant(now + CLOCK_SKEW_MS)} (now + 5 minutes)`
            )
          const props = propertiesOf(e.properties ?? {})
          if (!("stored" in props)) return yield* refuse(i, "properties", props.detail, props.property)
          customerIds.add(e.customer_id)
          const sub = e.subscription_id ?? null
          if (sub !== null) subscriptionIds.add(sub)
          rows.push({
            id: yield* Ids.make(Ids.prefixes.meterEvent),
            merchant_id: merchantId,
            transaction_id: e.transaction_id,
            customer_id: e.customer_id,
            subscription_id: sub,
            code: e.code,
            timestamp: at,
            properties: props.stored,
            created_at: now,
            voided_at: null
          })
        }
        // the metrics the events name: each code an active metric of the merchant, and a numeric
        // aggregation's property, when the event has it, a number (a missing one is allowed)
        const byCode = new Map<string, BillableMetric.BillableMetric | undefined>()
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!
          if (!byCode.has(r.code))
            byCode.set(r.code, Option.getOrUndefined(yield* metrics.findBy(merchantId, "code", r.code))?.value)
          const metric = byCode.get(r.code)
          if (metric === undefined || metric.status !== "active")
            return yield* refuse(
              i,
              "code",
              metric === undefined
                ? `names no billable metric of the merchant: define the metric "${r.code}" first`
                : `names billable metric "${r.code}", which is archived: it takes no more events`
            )
          const p = metric.property
          if (p !== null && NUMERIC.has(metric.aggregation) && Object.hasOwn(r.properties, p)) {
            if (MeterValues.micros(r.properties[p]) === undefined)
              return yield* refuse(
                i,
                "properties",
                `must be a number (plain decimal, at most 6 decimals, within ±10^12): metric "${r.code}" aggregates it (${metric.aggregation})`,
                p
              )
          }
        }
        const found = yield* customers.getMany(merchantId, [...customerIds])
        const subs =
          subscriptionIds.size === 0 ? new Map() : yield* subscriptions.getMany(merchantId, [...subscriptionIds])
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!
          const c = found.get(r.customer_id)
          if (c === undefined || c.value.deleted_at !== null)
            return yield* new Errors.NotFound({
              resource: "customer",
              id: r.customer_id,
              ...(batch ? { param: "events", entry: { index: i, field: "customer_id" } } : { param: "customer_id" })
            })
          if (r.subscription_id !== null) {
            const s = subs.get(r.subscription_id)
            if (s === undefined)
              return yield* new Errors.NotFound({
                resource: "subscription",
                id: r.subscription_id,
                ...(batch
                  ? { param: "events", entry: { index: i, field: "subscription_id" } }
                  : { param: "subscription_id" })
              })
            if (s.value.subscription.customer_id !== r.customer_id)
              return yield* refuse(i, "subscription_id", `is not a subscription of customer ${r.customer_id}`)
          }
        }
        const attached = yield* attach(merchantId, rows, byCode, refuse)
        // a closed period's events count while within the metric's late window (then re-rated)
        const placed = yield* LateEvents.place(
          storage,
          merchantId,
          now,
          attached.map((r) => ({
            subscription_id: r.subscription_id,
            timestamp: r.timestamp,
            late_window_days: byCode.get(r.code)!.late_window_days
          }))
        )
        for (const [i, p] of placed.entries()) if (p.at === "refused") return yield* refuse(i, "timestamp", p.detail)
        const accepted = yield* storage.meter.insertMany(attached)
        // alerts and progressive billing: a check per watched subscription, coalesced (never here)
        yield* UsageChecks.afterIngest(
          storage,
          merchant,
          [...new Set(accepted.flatMap((r) => (r.subscription_id === null ? [] : [r.subscription_id])))],
          now
        )
        const stored = new Set(accepted)
        yield* LateEvents.schedule(
          storage,
          merchant,
          placed.flatMap((p, i) =>
            p.at === "period" && stored.has(attached[i]!)
              ? [{ subscription_id: p.subscription_id, period_start: p.period.start }]
              : []
          ),
          now
        )
        return {
          accepted,
          duplicates: attached.filter((r) => !stored.has(r)).map((r) => r.transaction_id)
        } satisfies Ingested
      })

    /** Ingests one event; a re-sent transaction id answers the stored event as a duplicate. */
    const send = Effect.fn("MeterEvents.send")(function* (merchantId: string, event: MeterEventInput) {
      const { accepted } = yield* storage.withTransaction(ingestAll(merchantId, [event], false))
      if (accepted.length === 1) return { event: accepted[0]!, duplicate: false }
      const stored = yield* storage.meter.get(merchantId, event.transaction_id)
      return { event: Option.getOrThrow(stored), duplicate: true }
    })

    /** Ingests up to 1,000 events in one transaction (all or nothing). */
    const sendBatch = Effect.fn("MeterEvents.sendBatch")(function* (
      merchantId: string,
      events: ReadonlyArray<MeterEventInput>
    ) {
      return yield* storage.withTransaction(ingestAll(merchantId, events, true))
    })

    /** A page of the merchant's events, most recently ingested first. */
    const list = Effect.fn("MeterEvents.list")(function* (
      merchantId: string,
      query: {
        readonly customer_id?: string | undefined
        readonly code?: string | undefined
        readonly limit: number
        readonly starting_after?: string | undefined
      }
    ) {
      const invalid = Store.checkPage({ limit: query.limit })
      if (invalid !== undefined) return yield* Errors.invalid("limit", "must be 1 to 100")
      return yield* storage.meter.list(merchantId, query)
    })

    return { send, sendBatch, list }
  })
}) {
  /** @since 0.1.0 */
  static readonly layer = Layer.effect(this, this.make)
}
