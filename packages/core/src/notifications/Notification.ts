/**
 * Customer notifications as data: the kinds of message, a merchant's notification settings, and
 * the notification outbox record (one per cause, written in the cause's transaction).
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Store from "../kernel/Store.js"
import { NotificationStatus } from "./NotificationMachine.js"

export {
  /** @since 0.1.0 */
  NotificationStatus
} from "./NotificationMachine.js"

/**
 * The messages Recur sends to customers.
 *
 * @since 0.1.0
 */
export const NotificationKind = Schema.Literals([
  "invoice_issued",
  "invoice_past_due",
  "payment_receipt",
  "payment_failed",
  "trial_ending",
  "card_expiring",
  "subscription_canceled"
])
/** @since 0.1.0 */
export type NotificationKind = typeof NotificationKind.Type

/**
 * The languages of the templates.
 *
 * @since 0.1.0
 */
export const NotificationLanguage = Schema.Literals(["en", "de", "fr"])
/** @since 0.1.0 */
export type NotificationLanguage = typeof NotificationLanguage.Type

/**
 * A merchant's notification settings: on or off, who the messages come from, where replies go,
 * which messages are sent and in which language.
 *
 * @since 0.1.0
 */
export class NotificationSettings extends Schema.Class<NotificationSettings>("NotificationSettings")({
  enabled: Schema.Boolean,
  /** The `From` address (`billing@example.com` or `Acme Billing <billing@example.com>`). */
  sender: Schema.String,
  reply_to: Schema.NullOr(Schema.String),
  /** The messages sent; the others are not written to the outbox. */
  messages: Schema.Array(NotificationKind),
  language: NotificationLanguage
}) {}

/**
 * Every message, the default of `messages`.
 *
 * @since 0.1.0
 */
export const allKinds: ReadonlyArray<NotificationKind> = NotificationKind.literals

/**
 * One message in the notification outbox. `cause_key` names its cause (`payment_receipt:inv_…`):
 * unique per merchant, so a cause replayed after a crash writes no second message.
 *
 * @since 0.1.0
 */
export const NotificationRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  kind: NotificationKind,
  cause_key: Schema.String,
  customer_id: Schema.String,
  subscription_id: Schema.NullOr(Schema.String),
  invoice_id: Schema.NullOr(Schema.String),
  /** The declined charge of a `payment_failed` message (its invoice is found by it). */
  trade_id: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  status: NotificationStatus,
  /** The address it went to (set when sent). */
  recipient: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  /** The cause's instant on the merchant's clock. */
  created_at: Schema.Number,
  sent_at: Schema.NullOr(Schema.Number).pipe(Schema.withDecodingDefault(Effect.succeed(null)))
})
/** @since 0.1.0 */
export type NotificationRecord = typeof NotificationRecord.Type

/**
 * How notifications are stored (`recur_notifications`).
 *
 * @since 0.1.0
 */
export const notification: Store.Entity<NotificationRecord, typeof NotificationRecord.Encoded> = Store.entity({
  name: "notification",
  table: "recur_notifications",
  schema: NotificationRecord,
  id: "id",
  createdAt: "created_at",
  columns: { cause_key: "cause_key", status: "status", kind: "kind" },
  unique: [{ name: "notification_cause", columns: ["cause_key"] }]
})

/** The work queue's kind for sending a notification. */
export const WORK_KIND = "notification"

/** What an event's payload tells about its cause (the fields read, when present). */
export interface CauseData {
  readonly invoice_id?: unknown
  readonly subscription_id?: unknown
  readonly customer_id?: unknown
  readonly trade_id?: unknown
  readonly id?: unknown
  readonly current_period_end?: unknown
  readonly invoice_type?: unknown
  readonly amount?: unknown
  readonly order_type?: unknown
  readonly txn_time?: unknown
  readonly lines?: unknown
  readonly cancel_reason?: unknown
  readonly due_date?: unknown
}

/**
 * The end of the period an invoice pays for (its lines' latest `period_end`, Unix ms): when the
 * subscription renews next.
 *
 * @since 0.1.0
 */
export const paidUntil = (data: CauseData): number | null => {
  if (!Array.isArray(data.lines)) return null
  let end: number | null = null
  for (const line of data.lines as ReadonlyArray<{ readonly period_end?: unknown }>) {
    const ms = typeof line?.period_end === "string" ? Date.parse(line.period_end) : Number.NaN
    if (!Number.isNaN(ms) && (end === null || ms > end)) end = ms
  }
  return end
}

/**
 * Whether a card (`exp_month` / `exp_year`, valid through the end of that month, UTC) no longer
 * works at `at` (Unix ms).
 *
 * @since 0.1.0
 */
export const cardExpiredAt = (card: { readonly exp_month: number; readonly exp_year: number }, at: number): boolean =>
  at >= Date.UTC(card.exp_year, card.exp_month, 1)

const str = (u: unknown): string | null => (typeof u === "string" && u !== "" ? u : null)

/**
 * The message an outbox event causes, if any, with its cause key: a paid invoice (a receipt), a
 * declined off-session charge (one per failed attempt), a cancellation, a trial's notice, a sent
 * invoice (`invoice_issued`), a sent invoice past due and each of its reminders (`at`, the
 * instant of the cause, tells them apart).
 *
 * @since 0.1.0
 */
export const causeOf = (
  type: string,
  data: CauseData,
  at = 0
): {
  readonly kind: NotificationKind
  readonly key: string
  readonly customer_id: string
  readonly subscription_id: string | null
  readonly invoice_id: string | null
  readonly trade_id?: string
} | null => {
  const customer = str(data.customer_id)
  if (customer === null) return null
  switch (type) {
    case "v2.invoice.paid": {
      const invoice = str(data.invoice_id)
      // no receipt for a refund's invoice, nor for nothing paid (a free trial's zero invoice)
      if (invoice === null || data.invoice_type === "refund" || /^[0.]*$/.test(String(data.amount ?? "0"))) return null
      return {
        kind: "payment_receipt",
        key: `payment_receipt:${invoice}`,
        customer_id: customer,
        subscription_id: str(data.subscription_id),
        invoice_id: invoice
      }
    }
    case "v2.invoice.sent": {
      const invoice = str(data.invoice_id)
      if (invoice === null) return null
      return {
        kind: "invoice_issued",
        key: `invoice_issued:${invoice}`,
        customer_id: customer,
        subscription_id: str(data.subscription_id),
        invoice_id: invoice
      }
    }
    case "v2.invoice.overdue": {
      const invoice = str(data.invoice_id)
      if (invoice === null) return null
      return {
        kind: "invoice_past_due",
        key: `invoice_past_due:${invoice}:${at}`,
        customer_id: customer,
        subscription_id: str(data.subscription_id),
        invoice_id: invoice
      }
    }
    case "v2.trades.payment_failed": {
      // an off-session charge declined (a renewal, a dunning retry, an upgrade): the customer is
      // not there to see it; a checkout's decline is shown on its page
      const trade = str(data.trade_id)
      if (trade === null || (data.order_type !== "renewal" && data.order_type !== "upgrade")) return null
      return {
        kind: "payment_failed",
        key: `payment_failed:${trade}:${str(data.txn_time) ?? "-"}`,
        customer_id: customer,
        subscription_id: null,
        invoice_id: null,
        trade_id: trade
      }
    }
    case "v2.subscription.canceled": {
      const sub = str(data.id)
      // a first payment that never went through ends its subscription too: nothing to tell
      if (sub === null || data.cancel_reason === "incomplete_expired") return null
      return {
        kind: "subscription_canceled",
        key: `subscription_canceled:${sub}`,
        customer_id: customer,
        subscription_id: sub,
        invoice_id: null
      }
    }
    case "v2.subscription.trial_period_expiring": {
      const sub = str(data.id)
      if (sub === null) return null
      return {
        kind: "trial_ending",
        key: `trial_ending:${sub}:${str(data.current_period_end) ?? "-"}`,
        customer_id: customer,
        subscription_id: sub,
        invoice_id: null
      }
    }
    default:
      return null
  }
}

/**
 * Moves a message's `status` (the {@link Lifecycle.notification} machine). The only way it
 * changes.
 *
 * @since 0.1.0
 */
export const moveNotification = (
  record: NotificationRecord,
  trigger: "sent" | "skip",
  patch: Partial<Omit<NotificationRecord, "status">> = {}
): NotificationRecord =>
  Lifecycle.must(
    Lifecycle.moveBy(Lifecycle.notification, record.status, trigger, (to) => ({ ...record, ...patch, status: to }))
  )
