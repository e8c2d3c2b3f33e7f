/**
 * Rating billable metrics (issue 35): what each item of a subscription billed by a billable
 * metric owes for a period — the metric's value aggregated by the store over the subscription's
 * meter events in `[from, to)` (`Storage.meter.aggregate`), the group its price names
 * (`metric_group`; no group: the metric's one value), rated by `Pricing.rateValue` at the item's
 * price version (one rounding, half-even, to the currency's minor units), as an invoice line in
 * the subscription's settlement currency. The one computation behind a renewal's usage lines, a
 * canceled subscription's final invoice, `upcoming_invoice` and `current_usage`.
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Result } from "effect"
import * as Price from "../catalog/Price.js"
import type * as Invoicing from "../invoices/Invoicing.js"
import * as Entities from "../kernel/Entities.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Decimal from "../money/Decimal.js"
import * as Money from "../money/Money.js"
import * as Pricing from "../money/Pricing.js"
import { paidIndex } from "../subscriptions/SubscriptionTerms.js"
import type * as Aggregation from "./Aggregation.js"
import * as BillableMetric from "./BillableMetric.js"

/**
 * One item's metric usage over a period, rated.
 *
 * @since 0.1.0
 */
export interface MetricCharge {
  readonly item_id: string
  readonly price_id: string
  readonly billable_metric_id: string
  readonly metric_code: string
  readonly metric_group: Readonly<Record<string, string>> | null
  /** The aggregated value, exact decimal text (`"720.5"`). */
  readonly value: string
  /** The number of events that took part in the value. */
  readonly events: number
  /** What it bills, in the subscription's settlement currency. */
  readonly amount: Money.Money
  /** The invoice line (kind `usage`, quantity 1, the value in its description, its period as span). */
  readonly line: Invoicing.Line
}

/**
 * The aggregated value a price's group selects: the value whose group is the price's
 * `metric_group` read in the metric's `group_by` order; the one ungrouped value without a group;
 * `"0"` (no event) when the period has none of that group.
 *
 * @example
 * selectGroup(["region"], { region: "eu" }, [{ group: ["us"], value: "3", events: 3 }, { group: ["eu"], value: "2", events: 2 }]) // { value: "2", events: 2 }
 * @since 0.1.0
 */
export const selectGroup = (
  groupBy: ReadonlyArray<string>,
  group: Readonly<Record<string, string>> | null,
  values: ReadonlyArray<Aggregation.AggregatedValue>
): { readonly value: string; readonly events: number } => {
  const wanted = groupBy.map((k) => group?.[k] ?? null)
  const found = values.find((v) => v.group.length === wanted.length && v.group.every((g, i) => g === wanted[i]))
  return found === undefined ? { value: "0", events: 0 } : { value: found.value, events: found.events }
}

/** `money` in the settlement currency at the subscription's rate (as `Invoicing.convertDraft` converts). */
const settle = (money: Money.Money, rec: Entities.SubscriptionRecord): Money.Money =>
  rec.fx_rate === null || money.currency === rec.currency
    ? money
    : Result.getOrThrow(Money.convert(money, Result.getOrThrow(Decimal.parse(rec.fx_rate)), rec.currency))

/** The label of a price's group on its line: `region eu`. */
const groupLabel = (group: Readonly<Record<string, string>> | null) =>
  group === null
    ? ""
    : `, ${Object.entries(group)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`

/**
 * The items of `rec` billed by a billable metric, each rated over `[from, to)` for paid cycle
 * `paidCycles` (its intro phase). Nothing in a trial (`paidCycles` below 0: trial usage is not
 * billed, as the seed's usage is not) or without such an item. Each metric is aggregated once
 * (two prices of one metric, `eu` and `us`, share one query); only the subscription's own events
 * count (`subscription_id`: ingestion attaches an event sent without one to the customer's one
 * live subscription pricing its metric). A negative value (a `sum` of refunds) bills 0.
 *
 * @example
 * const charges = yield* MetricUsage.charges(storage)(merchantId, rec, { from: jan1, to: feb1 }, 0)
 * @since 0.1.0
 */
export const charges =
  (storage: StorageService) =>
  (
    merchantId: string,
    rec: Entities.SubscriptionRecord,
    window: { readonly from: number; readonly to: number },
    paidCycles: number
  ): Effect.Effect<ReadonlyArray<MetricCharge>> =>
    Effect.gen(function* () {
      const items = rec.extra_items.filter((x) => Price.isMetricBased(x.version))
      if (items.length === 0 || paidCycles < 0 || window.to <= window.from) return []
      const metrics = yield* storage
        .repository(Entities.billableMetric)
        .getMany(merchantId, [...new Set(items.map((x) => x.version.billable_metric_id!))])
      const aggregated = new Map<string, ReadonlyArray<Aggregation.AggregatedValue>>()
      const out: Array<MetricCharge> = []
      for (const item of items) {
        const pv = item.version
        const metric = metrics.get(pv.billable_metric_id!)?.value
        if (metric === undefined) return yield* Effect.die(`missing billable metric ${pv.billable_metric_id}`)
        let values = aggregated.get(metric.billable_metric_id)
        if (values === undefined) {
          values = yield* storage.meter.aggregate({
            merchant_id: merchantId,
            customer_id: rec.subscription.customer_id,
            subscription_id: rec.subscription.id,
            code: metric.code,
            from: window.from,
            to: window.to,
            spec: BillableMetric.specOf(metric)
          })
          aggregated.set(metric.billable_metric_id, values)
        }
        const { value, events } = selectGroup(metric.group_by, pv.metric_group, values)
        const exact = Result.getOrThrow(Decimal.parse(value))
        const rated = Pricing.rateValue(
          Price.modelOf(pv, paidCycles),
          exact.value < 0n ? Decimal.make(0n) : exact,
          pv.currency
        )
        const amount = settle(rated.amount, rec)
        out.push({
          item_id: item.id,
          price_id: pv.id,
          billable_metric_id: metric.billable_metric_id,
          metric_code: metric.code,
          metric_group: pv.metric_group,
          value,
          events,
          amount,
          line: {
            kind: "usage",
            description: `${pv.price_name}: ${value} ${pv.usage_unit ?? "units"} (${metric.code}${groupLabel(pv.metric_group)})`,
            quantity: 1n,
            amount,
            span: { start: window.from, end: window.to }
          }
        })
      }
      return out
    })

/**
 * {@link charges} of the period `rec` is in (the one a renewal closes): `[current_period_start,
 * current_period_end)`, or up to `until` when that is earlier (a subscription canceled now bills
 * its period so far), rated for the period's paid cycle. Nothing without a period.
 *
 * @example
 * const owed = yield* MetricUsage.ofPeriod(storage)(merchantId, rec) // what the next renewal bills
 * @since 0.1.0
 */
export const ofPeriod =
  (storage: StorageService) =>
  (
    merchantId: string,
    rec: Entities.SubscriptionRecord,
    until?: number
  ): Effect.Effect<ReadonlyArray<MetricCharge>> => {
    const s = rec.subscription
    if (s.current_period_start === null || s.current_period_end === null) return Effect.succeed([])
    const end = DateTime.toEpochMillis(s.current_period_end)
    return charges(storage)(
      merchantId,
      rec,
      { from: DateTime.toEpochMillis(s.current_period_start), to: until !== undefined && until < end ? until : end },
      paidIndex(rec, s.cycle_index)
    )
  }

/**
 * A subscription's usage of its current period so far (`current_usage`): each item billed by a
 * billable metric with its value and what it would bill, and their total — before discounts and
 * tax, in the settlement currency.
 *
 * @since 0.1.0
 */
export interface CurrentUsage {
  readonly subscription_id: string
  readonly customer_id: string
  readonly cycle_index: number
  readonly currency: string
  /** The period (Unix ms), `null` for a subscription without one. */
  readonly period_start: number | null
  readonly period_end: number | null
  readonly charges: ReadonlyArray<MetricCharge>
  readonly total: Money.Money
}

/**
 * The current usage of `rec`: {@link ofPeriod} of its current period, whole — the computation its
 * next renewal makes (`Renewals.renew` and `upcoming_invoice` call the same), so a renewal right
 * after bills these amounts. A gauge (`weighted_sum`) counts its level held to the period's end.
 *
 * @since 0.1.0
 */
export const current =
  (storage: StorageService) =>
  (merchantId: string, rec: Entities.SubscriptionRecord): Effect.Effect<CurrentUsage> =>
    Effect.map(ofPeriod(storage)(merchantId, rec), (charged) => {
      const s = rec.subscription
      return {
        subscription_id: s.id,
        customer_id: s.customer_id,
        cycle_index: s.cycle_index,
        currency: rec.currency,
        period_start: s.current_period_start === null ? null : DateTime.toEpochMillis(s.current_period_start),
        period_end: s.current_period_end === null ? null : DateTime.toEpochMillis(s.current_period_end),
        charges: charged,
        total: Money.make(
          charged.reduce((a, c) => a + c.amount.amount, 0n),
          rec.currency
        )
      }
    })

/**
 * The lines of the charges whose value is not 0: what a final invoice bills (a renewal's invoice
 * shows every metric item, 0.00 included, as the seed's usage line; a final invoice of nothing
 * used is not issued).
 *
 * @since 0.1.0
 */
export const used = (charged: ReadonlyArray<MetricCharge>): ReadonlyArray<Invoicing.Line> =>
  charged.filter((c) => c.value !== "0").map((c) => c.line)
