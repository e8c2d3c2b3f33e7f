/**
 * The usage check of one subscription (issue 35): the work item (`usage_alert_check`) an
 * ingestion schedules for each watched subscription its events name — coalesced per
 * {@link ProgressiveBilling.CHECK_WINDOW_MS} window, so the ingestion path never aggregates — and a
 * renewal schedules when its cycle starts. One transaction: the subscription's current usage
 * (`MetricUsage.ofPeriod`, the renewal's own computation), each alert's crossings
 * (`v2.usage_alert.triggered`, recorded on the alert), the crossings of an ended cycle resolved
 * (`v2.usage_alert.resolved`), and a progressive invoice when the usage not yet invoiced reaches
 * the threshold. Every record is written at the version read: two checks at once (or a check and
 * the renewal) commit one, the other fails whole (`ConcurrentUpdate`) and its retry finds nothing
 * left to fire or bill.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Common from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ports from "../kernel/Ports.js"
import { emit, laneOf, nowOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Charges from "../payments/Charges.js"
import { underMinimum } from "../payments/Charges.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as BillableMetric from "./BillableMetric.js"
import * as MetricUsage from "./MetricUsage.js"
import * as ProgressiveBilling from "./ProgressiveBilling.js"
import * as UsageAlert from "./UsageAlert.js"

/** The statuses whose cycle is open: usage counts, alerts fire, progressive billing bills. */
const LIVE: ReadonlyArray<string> = ["trial", "active", "past_due"]

/**
 * After an ingestion: schedules the usage check of each subscription among `subscriptionIds`
 * that something watches (an alert or a progressive billing threshold), at the end of the
 * current window — one read of their records and one write of the queue per ingestion call,
 * whatever the number of events. Called in the ingestion's transaction.
 *
 * @example
 * yield* UsageChecks.afterIngest(storage, merchant, ["sub_…"], now)
 * @since 0.1.0
 */
export const afterIngest = (
  storage: StorageService,
  merchant: Merchant.Merchant,
  subscriptionIds: ReadonlyArray<string>,
  now: number
): Effect.Effect<void> =>
  subscriptionIds.length === 0
    ? Effect.void
    : Effect.gen(function* () {
        const records = yield* storage.repository(Entities.usageBilling).getMany(merchant.merchant_id, subscriptionIds)
        const watched = [...records.values()].filter((r) => r.value.watched)
        if (watched.length === 0) return
        const due = ProgressiveBilling.checkDue(now)
        yield* storage.workQueue.scheduleMany(
          watched.map((r) => ({
            lane: laneOf(merchant),
            merchant_id: merchant.merchant_id,
            kind: ProgressiveBilling.CHECK_KIND,
            subject_id: r.value.subscription_id,
            due_at: due
          }))
        )
      })

/**
 * The usage checks service.
 *
 * @since 0.1.0
 */
export class UsageChecks extends Context.Service<UsageChecks>()("@recur/core/UsageChecks", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const charges = yield* Charges.Charges
    const gateway = yield* Ports.PaymentGateway
    const deps: ProgressiveBilling.IssueDeps = {
      storage,
      taxes: yield* Ports.TaxCalculator,
      secrets: yield* Secrets.Secrets,
      settings: yield* Settings.Settings
    }
    const alerts = storage.repository(Entities.usageAlert)
    const subs = storage.repository(Entities.subscription)
    const records = storage.repository(Entities.usageBilling)

    /** Every alert of the subscription (at most 25). */
    const alertsOf = (merchantId: string, subscriptionId: string) =>
      Effect.map(
        Effect.orDie(
          alerts.list(merchantId, {
            limit: 100,
            filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
          })
        ),
        (page) => page.list
      )

    /** The metric's value of the period, ungrouped: from a charge when one holds it, else aggregated. */
    const metricValue = (
      merchantId: string,
      rec: Entities.SubscriptionRecord,
      metric: BillableMetric.BillableMetric,
      charged: ReadonlyArray<MetricUsage.MetricCharge>,
      window: { readonly from: number; readonly to: number }
    ) =>
      Effect.gen(function* () {
        const own = charged.find((c) => c.billable_metric_id === metric.billable_metric_id)
        if (own !== undefined && metric.group_by.length === 0) return own.value
        const values = yield* storage.meter.aggregate({
          merchant_id: merchantId,
          customer_id: rec.subscription.customer_id,
          subscription_id: rec.subscription.id,
          code: metric.code,
          from: window.from,
          to: window.to,
          spec: { ...BillableMetric.specOf(metric), group_by: [] }
        })
        return values[0]?.value ?? "0"
      })

    /** Saves a changed alert at its version. */
    const saveAlert = (alert: UsageAlert.UsageAlert, version: number) =>
      alerts.update(alert, version).pipe(
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
        Effect.catchTag("VersionConflict", () =>
          Effect.fail(new Errors.ConcurrentUpdate({ resource: "usage_alert", id: alert.usage_alert_id }))
        )
      )

    /**
     * Checks one subscription's usage: fires the alerts its open cycle crossed, resolves those
     * of an ended cycle (or of an ended subscription), and bills its usage progressively when due.
     * Returns what it did (the events' count and the progressive invoice, if any).
     */
    const check = Effect.fn("UsageChecks.check")(function* (merchantId: string, subscriptionId: string) {
      const merchant = yield* merchants.get(merchantId)
      const done = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const nothing = { triggered: 0, resolved: 0, invoice_id: null as string | null, charge: Option.none() }
          const found = yield* subs.get(merchantId, subscriptionId)
          const recordFound = yield* records.get(merchantId, subscriptionId)
          if (Option.isNone(found) || Option.isNone(recordFound) || !recordFound.value.value.watched) return nothing
          const rec = found.value.value
          const s = rec.subscription
          const live = LIVE.includes(s.status) && s.current_period_start !== null && s.current_period_end !== null
          const window = live
            ? {
                from: DateTime.toEpochMillis(s.current_period_start!),
                to: DateTime.toEpochMillis(s.current_period_end!)
              }
            : undefined
          const charged = live ? yield* MetricUsage.ofPeriod(storage)(merchantId, rec) : []
          const listed = recordFound.value.value.alerts > 0 ? yield* alertsOf(merchantId, subscriptionId) : []
          // each alert at the version read before anything is computed: a check that commits
          // in between makes this one's write fail, never fire twice
          const versions = yield* alerts.getMany(
            merchantId,
            listed.map((a) => a.usage_alert_id)
          )
          const watching = [...versions.values()].map((v) => v.value)
          const metrics = yield* storage
            .repository(Entities.billableMetric)
            .getMany(merchantId, [...new Set(watching.map((a) => a.billable_metric_id))])
          let triggered = 0
          let resolved = 0
          for (const alert of watching) {
            let next = alert
            // the crossings of an ended cycle (or subscription) resolve
            if (alert.fired.length > 0 && (!live || alert.cycle_index !== s.cycle_index)) {
              next = new UsageAlert.UsageAlert({
                ...alert,
                cycle_index: live ? s.cycle_index : alert.cycle_index,
                fired: [],
                updated_at: DateTime.makeUnsafe(at)
              })
              yield* emit(storage, {
                merchant_id: merchantId,
                type: "v2.usage_alert.resolved",
                business_id: alert.usage_alert_id,
                schema: UsageAlert.UsageAlertResolved,
                data: new UsageAlert.UsageAlertResolved({
                  usage_alert: next,
                  ended_cycle_index: alert.cycle_index ?? s.cycle_index,
                  fired: alert.fired,
                  resolved_at: Common.formatInstant(at)
                }),
                at
              })
              resolved++
            }
            const metric = metrics.get(alert.billable_metric_id)?.value
            if (live && window !== undefined && metric !== undefined) {
              const value = yield* metricValue(merchantId, rec, metric, charged, window)
              const amount = charged
                .filter((c) => c.billable_metric_id === alert.billable_metric_id)
                .reduce((a, c) => a + c.amount.amount, 0n)
              const fired = next.cycle_index === s.cycle_index ? next.fired : []
              const crossed = UsageAlert.crossings(next, value, amount, fired)
              if (crossed.length > 0) {
                next = new UsageAlert.UsageAlert({
                  ...next,
                  cycle_index: s.cycle_index,
                  fired: [...fired, ...crossed.map((c) => c.key)],
                  updated_at: DateTime.makeUnsafe(at)
                })
                for (const c of crossed) {
                  yield* emit(storage, {
                    merchant_id: merchantId,
                    type: "v2.usage_alert.triggered",
                    business_id: alert.usage_alert_id,
                    schema: UsageAlert.UsageAlertTriggered,
                    data: new UsageAlert.UsageAlertTriggered({
                      usage_alert: next,
                      threshold: c.threshold,
                      level: c.level,
                      value,
                      amount: Money.format(Money.make(amount, next.currency)),
                      currency: next.currency,
                      cycle_index: s.cycle_index,
                      period_start: Common.formatInstant(window.from),
                      period_end: Common.formatInstant(window.to),
                      triggered_at: Common.formatInstant(at)
                    }),
                    at
                  })
                  triggered++
                }
              }
            }
            if (next !== alert) yield* saveAlert(next, versions.get(alert.usage_alert_id)!.version)
          }
          // progressive billing: the open cycle's usage not yet invoiced, once it reaches the threshold
          const record = recordFound.value.value
          const threshold = record.progressive_billing_threshold
          if (
            !live ||
            window === undefined ||
            threshold === null ||
            at >= window.to ||
            (record.cycle_index === s.cycle_index && record.closed)
          )
            return { ...nothing, triggered, resolved }
          const wanted = ProgressiveBilling.due(
            record,
            s.cycle_index,
            charged,
            Result.getOrThrow(Money.parse(threshold, record.currency)).amount
          )
          if (
            wanted === undefined ||
            (yield* underMinimum(gateway, merchantId, Money.make(wanted.total, rec.currency)))
          )
            return { ...nothing, triggered, resolved }
          const issued = yield* ProgressiveBilling.issue(deps, {
            merchant,
            rec,
            at,
            lines: wanted.lines.map((l) => ({
              kind: "usage" as const,
              description: `${l.charge.line.description}, invoiced early (progressive billing)`,
              quantity: 1n,
              amount: Money.make(l.delta, rec.currency),
              span: { start: window.from, end: at }
            }))
          })
          // at the version read first: a concurrent check or the renewal makes this one fail whole
          yield* records
            .update(
              new UsageAlert.UsageBilling({
                ...record,
                cycle_index: s.cycle_index,
                closed: false,
                billed: [...wanted.billed],
                invoice_ids: [
                  ...(record.cycle_index === s.cycle_index ? record.invoice_ids : []),
                  issued.invoice.invoice_id
                ],
                updated_at: DateTime.makeUnsafe(at)
              }),
              recordFound.value.version
            )
            .pipe(
              Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
              Effect.catchTag("VersionConflict", () =>
                Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: subscriptionId }))
              )
            )
          return { triggered, resolved, invoice_id: issued.invoice.invoice_id, charge: issued.charge }
        })
      )
      if (Option.isSome(done.charge))
        yield* charges.chargeInvoiceTrade(merchantId, done.charge.value.tradeId, done.charge.value.token)
      return { triggered: done.triggered, resolved: done.resolved, invoice_id: done.invoice_id }
    })

    return { check } as const
  })
}) {
  /** @since 0.1.0 */
  static readonly layer = Layer.effect(this, this.make)
}
