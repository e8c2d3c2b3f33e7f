/**
 * The merchant API's customer-notification bodies (`POST /api/v1/notification_settings`) and
 * the answers of its notification endpoints, decoded into core's commands.
 *
 * @since 0.1.0
 */
import { Notification, type Notifications } from "@recur/core"
import { Schema } from "effect"

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
}).annotate({ identifier: "NotificationSettingsRequest" })

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
 * The answer of `GET /api/v1/notifications`: the merchant's messages, newest first.
 *
 * @since 0.1.0
 */
export const NotificationList = Schema.Struct({ list: Schema.Array(Notification.NotificationRecord) })

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
