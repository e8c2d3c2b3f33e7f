/**
 * `notifications/`: customer notifications — the `Notifier` port, the notification outbox
 * written with each cause, the merchant's settings, the templates (English, German, French) and
 * the sending run by the worker. The `Notifier` port is in `Ports`.
 *
 * @since 0.1.0
 */
export * as Notification from "./Notification.js"
export * as NotificationOutbox from "./NotificationOutbox.js"
export * as Notifications from "./Notifications.js"
export * as Templates from "./Templates.js"
