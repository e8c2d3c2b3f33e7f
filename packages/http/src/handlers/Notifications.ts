/**
 * The handlers of the customer-notifications group.
 *
 * @since 0.1.0
 */
import { NotificationRequests } from "@recur/contract"
import { Notifications } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, ok } from "./Shared.js"

/**
 * The handlers of the customer-notifications group.
 *
 * @since 0.1.0
 */
export const notificationsLive = HttpApiBuilder.group(BillingApi, "notifications", (handlers) =>
  Effect.gen(function* () {
    const notifications = yield* Notifications.Notifications
    return handlers
      .handle("settings", () =>
        call((m) => Effect.map(notifications.settingsOf(m), (notification_settings) => ok({ notification_settings })))
      )
      .handle("updateSettings", ({ payload }) =>
        call((m) =>
          Effect.map(
            notifications.setSettings(m, NotificationRequests.settingsCommand(payload)),
            (notification_settings) => ok({ notification_settings })
          )
        )
      )
      .handle("list", () =>
        call((m) => Effect.map(notifications.list(m), (list) => ok({ list: list.map(NotificationRequests.answerOf) })))
      )
  })
)
