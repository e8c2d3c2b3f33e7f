/**
 * The merchant API's customer-notification bodies (`POST /api/v1/notification_settings`) and
 * the answers of its notification endpoints, decoded into core's commands.
 *
 * @since 0.1.0
 */
import { Common, Notification, type Notifications } from "@recur/core"
import { DateTime, Schema } from "effect"

/**
 * The body of `POST /api/v1/notification_settings`: the fields to change (the others keep their
 * value; the first change needs `sender`); `reset: true` turns notifications off and forgets
 * them.
 *
 * @since 0.1.0
 */
export const NotificationSettingsBody = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  sender: Schema.optional(Schema.String),
  reply_to: Schema.optional(Schema.NullOr(Schema.String)),
  messages: Schema.optional(Schema.Array(Schema.String)),
  language: Schema.optional(Schema.String),
  reset: Schema.optional(Schema.Boolean)
})

/** @since 0.1.0 */
export type NotificationSettingsRequest = typeof NotificationSettingsBody.Type

/**
 * The answer of the settings endpoints: the settings in force, `null` when none are set (no
 * notification is sent).
 *
 * @since 0.1.0
 */
export const NotificationSettingsAnswer = Schema.Struct({
  notification_settings: Schema.NullOr(Notification.NotificationSettings)
})

/**
 * One message of the outbox as the API shows it: its cause, state and attempts.
 *
 * @since 0.1.0
 */
export const NotificationAnswer = Schema.Struct({
  id: Schema.String,
  kind: Notification.NotificationKind,
  cause_key: Schema.String,
  customer_id: Schema.String,
  subscription_id: Schema.NullOr(Schema.String),
  invoice_id: Schema.NullOr(Schema.String),
  trade_id: Schema.NullOr(Schema.String),
  status: Notification.NotificationStatus,
  recipient: Schema.NullOr(Schema.String),
  attempts: Schema.Int,
  last_error: Schema.NullOr(Schema.String),
  created_at: Common.Timestamp,
  sent_at: Common.NullableTimestamp
}).annotate({ identifier: "Notification" })

/**
 * A stored message as {@link NotificationAnswer} shows it.
 *
 * @since 0.1.0
 */
export const answerOf = (r: Notification.NotificationRecord): typeof NotificationAnswer.Type => ({
  id: r.id,
  kind: r.kind,
  cause_key: r.cause_key,
  customer_id: r.customer_id,
  subscription_id: r.subscription_id,
  invoice_id: r.invoice_id,
  trade_id: r.trade_id,
  status: r.status,
  recipient: r.recipient,
  attempts: r.attempts,
  last_error: r.last_error,
  created_at: DateTime.makeUnsafe(r.created_at),
  sent_at: r.sent_at === null ? null : DateTime.makeUnsafe(r.sent_at)
})

/**
 * The answer of `GET /api/v1/notifications`: the merchant's messages, newest first.
 *
 * @since 0.1.0
 */
export const NotificationList = Schema.Struct({ list: Schema.Array(NotificationAnswer) })

/**
 * The command a body asks for (core checks every field).
 *
 * @since 0.1.0
 */
export const settingsCommand = (body: NotificationSettingsRequest): Notifications.SettingsCommand =>
  body.reset === true
    ? { reset: true }
    : {
        enabled: body.enabled,
        sender: body.sender,
        reply_to: body.reply_to,
        messages: body.messages,
        language: body.language
      }
