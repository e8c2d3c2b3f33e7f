/**
 * Late meter events (issue 35): which period of its subscription an event falls in, and whether
 * it may still change it. An event of the open period counts as always; an event of a closed
 * period — one an invoice billed usage for — is accepted while within its metric's
 * `late_window_days` after that period's end, and schedules the period's re-rating (a
 * `usage_adjustment` work item keyed by subscription and period, `UsageAdjustments.adjust`);
 * older is refused. Voids and amendments are bound by the same window (`MeterCorrections`).
 *
 * @since 0.1.0
 */
import { DateTime, Effect } from "effect"
import * as Entities from "../kernel/Entities.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import { laneOf } from "../kernel/ServiceSupport.js"
import type * as Invoice from "../invoices/Invoice.js"
import type * as Merchant from "../tenants/Merchant.js"

/** A day in ms. */
const DAY_MS = 86_400_000

/**
 * The work kind of a period's re-rating (subject: {@link subjectOf}).
 *
 * @since 0.1.0
 */
export const WORK_KIND = "usage_adjustment"

/**
 * The work subject of a (subscription, period): `sub_…@<period start, Unix ms>`.
 *
 * @example
 * subjectOf("sub_1", 1767225600000) // "sub_1@1767225600000"
 * @since 0.1.0
 */
export const subjectOf = (subscriptionId: string, periodStart: number): string => `${subscriptionId}@${periodStart}`

/**
 * The (subscription, period start) of a work subject; undefined when it is not one.
 *
 * @since 0.1.0
 */
export const parseSubject = (
  subject: string
): { readonly subscription_id: string; readonly period_start: number } | undefined => {
  const at = subject.lastIndexOf("@")
  const start = Number(subject.slice(at + 1))
  return at < 1 || !Number.isSafeInteger(start)
    ? undefined
    : { subscription_id: subject.slice(0, at), period_start: start }
}

/**
 * A closed period an invoice billed usage for: the span of its `usage` lines, and that invoice
 * (the latest not voided, when several carry the span).
 *
 * @since 0.1.0
 */
export interface BilledPeriod {
  readonly start: number
  readonly end: number
  readonly invoice: Invoice.Invoice
}

/**
 * The billed periods of `subscriptionIds`, by subscription: every span of a `usage` line on one
 * of its invoices (renewals, final invoices; voided invoices and the extra invoices of adjustments
 * left out), oldest first.
 *
 * @example
 * const periods = yield* LateEvents.billedPeriods(storage, merchantId, ["sub_…"])
 * @since 0.1.0
 */
export const billedPeriods = (storage: StorageService, merchantId: string, subscriptionIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const out = new Map<string, Array<BilledPeriod>>()
    if (subscriptionIds.length === 0) return out
    const invoices = storage.repository(Entities.invoice)
    let cursor: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        invoices.list(merchantId, {
          limit: 100,
          starting_after: cursor,
          filters: [{ column: "subscription_id", op: "in", values: [...subscriptionIds] }]
        })
      )
      // newest first: the first invoice seen for a span is the latest
      for (const inv of page.list) {
        // an extra invoice of an adjustment (one-off) bills a period too, but is not its invoice
        if (inv.biz_status === "void" || inv.subscription_id === null || inv.invoice_type === "one_off") continue
        const mine = out.get(inv.subscription_id) ?? []
        for (const l of inv.lines) {
          if (l.kind !== "usage" || l.period_start === null || l.period_end === null) continue
          const start = DateTime.toEpochMillis(l.period_start)
          const end = DateTime.toEpochMillis(l.period_end)
          if (!mine.some((p) => p.start === start)) mine.push({ start, end, invoice: inv })
        }
        out.set(inv.subscription_id, mine)
      }
      if (!page.has_more || page.list.length === 0) break
      cursor = page.list[page.list.length - 1]!.invoice_id
    }
    for (const periods of out.values()) periods.sort((a, b) => a.start - b.start)
    return out
  })

/**
 * An event (or a correction of one) to place: its subscription, timestamp and metric's window.
 *
 * @since 0.1.0
 */
export interface Placed {
  readonly subscription_id: string | null
  readonly timestamp: number
  readonly late_window_days: number
}

/**
 * Where each event falls: `open` (the open period, or no subscription), a closed `period` (billed
 * by an invoice: re-rated), or `unbilled` (before the open period, which no invoice billed — a
 * trial); and `refused` with why, when that period ended more than the metric's
 * `late_window_days` before `now`. A period nobody billed is bounded by the open period's start
 * (it ended then at the latest); an event without a subscription by its own timestamp.
 *
 * @example
 * const placed = yield* LateEvents.place(storage, merchantId, now, [{ subscription_id, timestamp, late_window_days: 35 }])
 * @since 0.1.0
 */
export const place = (storage: StorageService, merchantId: string, now: number, events: ReadonlyArray<Placed>) =>
  Effect.gen(function* () {
    const ids = [...new Set(events.flatMap((e) => (e.subscription_id === null ? [] : [e.subscription_id])))]
    const subs =
      ids.length === 0 ? new Map() : yield* storage.repository(Entities.subscription).getMany(merchantId, ids)
    const startOf = (id: string): number | null => {
      const s = subs.get(id)?.value.subscription
      return s?.current_period_start ? DateTime.toEpochMillis(s.current_period_start) : null
    }
    const before = events.filter((e) => e.subscription_id !== null && e.timestamp < (startOf(e.subscription_id) ?? 0))
    const periods = yield* billedPeriods(storage, merchantId, [...new Set(before.map((e) => e.subscription_id!))])
    return events.map((e) => {
      const window = e.late_window_days * DAY_MS
      if (e.subscription_id === null)
        return e.timestamp + window < now ? refused(e.timestamp, e.late_window_days) : ({ at: "open" } as const)
      const open = startOf(e.subscription_id)
      if (open === null || e.timestamp >= open) return { at: "open" } as const
      const period = periods.get(e.subscription_id)?.find((p) => p.start <= e.timestamp && e.timestamp < p.end)
      const end = period?.end ?? open
      if (end + window < now) return refused(end, e.late_window_days)
      return period === undefined
        ? ({ at: "unbilled" } as const)
        : ({ at: "period", subscription_id: e.subscription_id, period } as const)
    })
  })

const refused = (end: number, days: number) =>
  ({
    at: "refused",
    detail: `is too late: its period ended ${new Date(end).toISOString()}, more than the metric's late window of ${days} days ago`
  }) as const

/**
 * Schedules the re-rating of each (subscription, period), due now: one work item per period (a
 * later event of the same period reschedules the same item, so a burst is re-rated once).
 *
 * @since 0.1.0
 */
export const schedule = (
  storage: StorageService,
  merchant: Merchant.Merchant,
  periods: ReadonlyArray<{ readonly subscription_id: string; readonly period_start: number }>,
  at: number
) => {
  const subjects = [...new Set(periods.map((p) => subjectOf(p.subscription_id, p.period_start)))]
  return subjects.length === 0
    ? Effect.void
    : storage.workQueue.scheduleMany(
        subjects.map((subject_id) => ({
          lane: laneOf(merchant),
          merchant_id: merchant.merchant_id,
          kind: WORK_KIND,
          subject_id,
          due_at: at
        }))
      )
}
