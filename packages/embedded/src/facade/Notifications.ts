/**
 * The facade's `notifications` group: a merchant's customer-notification settings and the
 * messages of its outbox.
 *
 * @since 0.1.0
 */
import { NotificationRequests } from "@recur/contract"
import { Notification, Notifications } from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import type { Kit } from "./Kit.js"
import { json } from "./Kit.js"
import type { Answer } from "./Types.js"

/** @since 0.1.0 */
export type NotificationSettingsJson = Answer<typeof Notification.NotificationSettings>
/** @since 0.1.0 */
export type NotificationJson = typeof NotificationRequests.NotificationAnswer.Encoded

/**
 * A change of the notification settings: the fields given change, the others keep their value
 * (the first change needs `sender`); `reset: true` turns notifications off and forgets them.
 *
 * @since 0.1.0
 */
export type NotificationSettingsInput =
  | { readonly reset: true }
  | {
      readonly enabled?: boolean
      readonly sender?: string
      readonly reply_to?: string | null
      readonly messages?: ReadonlyArray<Notification.NotificationKind>
      readonly language?: Notification.NotificationLanguage
    }

/**
 * The `notifications` group of the facade.
 *
 * @since 0.1.0
 */
export type NotificationsClient = BillingClient["notifications"]

const settingsJson = (s: Notification.NotificationSettings | null) =>
  s === null ? null : json(Notification.NotificationSettings)(s)

/** `notifications`. @since 0.1.0 */
export const notifications = ({ run }: Kit<Services>): NotificationsClient => ({
  settings: (merchantId) =>
    run(Notifications.Notifications.use((n) => n.settingsOf(merchantId)).pipe(Effect.map(settingsJson))),
  updateSettings: (merchantId, input) =>
    run(Notifications.Notifications.use((n) => n.setSettings(merchantId, input)).pipe(Effect.map(settingsJson))),
  list: (merchantId) =>
    run(
      Notifications.Notifications.use((n) => n.list(merchantId)).pipe(
        Effect.map((list) =>
          list.map((r) => Schema.encodeSync(NotificationRequests.NotificationAnswer)(NotificationRequests.answerOf(r)))
        )
      )
    )
})
