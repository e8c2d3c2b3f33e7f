/**
 * The notification outbox's writer: called by `emit` / `emitMany` with the events a change
 * writes, in that change's transaction, it writes the message each event causes (when the
 * merchant's settings send it) and the work item that sends it. A cause key unique per merchant
 * makes a replayed cause write nothing more.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Store from "../kernel/Store.js"
import { type SubscriptionRecord, subscription as subscriptionEntity } from "../subscriptions/SubscriptionEntities.js"
import { merchant as merchantEntity } from "../tenants/TenantEntities.js"
import {
  type CauseData,
  cardExpiredAt,
  causeOf,
  notification,
  type NotificationRecord,
  paidUntil,
  WORK_KIND
} from "./Notification.js"

type StorageLike = {
  readonly repository: <A, I>(entity: Store.Entity<A, I>) => Store.Repository<A>
  readonly workQueue: Store.WorkQueue
}

/**
 * Writes the messages caused by one merchant's events (inside the caller's transaction); a
 * merchant without notification settings, or with them off, costs one read and writes nothing.
 *
 * @since 0.1.0
 */
export const record = (
  storage: StorageLike,
  merchantId: string,
  events: ReadonlyArray<{ readonly type: string; readonly data: unknown; readonly at: number }>
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const causes = events.flatMap((e) => {
      const cause = typeof e.data === "object" && e.data !== null ? causeOf(e.type, e.data as CauseData, e.at) : null
      return cause !== null ? [{ ...cause, at: e.at, until: paidUntil(e.data as CauseData) }] : []
    })
    if (causes.length === 0) return
    const found = yield* storage.repository(merchantEntity).get(merchantId, merchantId)
    if (Option.isNone(found)) return
    const merchant = found.value.value
    const settings = merchant.notification_settings
    if (settings === null || !settings.enabled) return
    const wanted: Array<Omit<(typeof causes)[number], "until">> = causes.filter((c) =>
      settings.messages.includes(c.kind)
    )
    // a paid renewal whose card will not last until the next one: the customer is told now,
    // once per card and subscription
    if (settings.messages.includes("card_expiring")) {
      const paid = causes.filter((c) => c.kind === "payment_receipt" && c.subscription_id !== null && c.until !== null)
      const subs =
        paid.length > 0
          ? yield* storage.repository(subscriptionEntity).getMany(
              merchantId,
              paid.map((c) => c.subscription_id!)
            )
          : new Map<string, Store.Versioned<SubscriptionRecord>>()
      for (const c of paid) {
        const card = subs.get(c.subscription_id!)?.value.payment_method
        if (card === null || card === undefined || !cardExpiredAt(card, c.until!)) continue
        wanted.push({
          kind: "card_expiring",
          key: `card_expiring:${c.subscription_id}:${card.exp_year}-${card.exp_month}`,
          customer_id: c.customer_id,
          subscription_id: c.subscription_id,
          invoice_id: null,
          at: c.at
        })
      }
    }
    if (wanted.length === 0) return
    const records: Array<NotificationRecord> = []
    for (const c of wanted)
      records.push({
        id: yield* Ids.make(Ids.prefixes.notification),
        merchant_id: merchantId,
        kind: c.kind,
        cause_key: c.key,
        customer_id: c.customer_id,
        subscription_id: c.subscription_id,
        invoice_id: c.invoice_id,
        trade_id: c.trade_id ?? null,
        status: Lifecycle.notification.initial,
        recipient: null,
        attempts: 0,
        last_error: null,
        created_at: c.at,
        sent_at: null
      })
    // a cause already written (a replay) is skipped by its unique key, not by an error
    const inserted = yield* storage.repository(notification).insertMany(records)
    if (inserted.length === 0) return
    yield* storage.workQueue.scheduleMany(
      inserted.map((r) => ({
        lane: merchant.frozen_time !== null ? ("frozen" as const) : ("live" as const),
        merchant_id: merchantId,
        kind: WORK_KIND,
        subject_id: r.id,
        due_at: r.created_at
      }))
    )
  })
