/**
 * The customer-notifications group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { NotificationRequests } from "@recur/contract"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope } from "./Shared.js"

/**
 * Customer notifications: the merchant's settings (sender, reply-to, which messages, language,
 * on/off) and its outbox of messages.
 *
 * @since 0.1.0
 */
export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("settings", "/api/v1/notification_settings", {
      success: Envelope(NotificationRequests.NotificationSettingsAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateSettings", "/api/v1/notification_settings", {
      payload: NotificationRequests.NotificationSettingsBody,
      success: Envelope(NotificationRequests.NotificationSettingsAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/notifications", {
      success: Envelope(NotificationRequests.NotificationList),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customer notifications") {}
