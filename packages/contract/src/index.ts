/**
 * The merchant API's contract, between the engine (`@recur/core`) and its two front doors: the
 * REST adapter (`@recur/http`) and the Promise facade (`@recur/embedded`). Request bodies as
 * Schemas (`RequestBodies`), their decoding into the engine's commands (`Requests`), and the
 * answer — code, HTTP status, request field — to each of the engine's errors (`ErrorReplies`).
 * Core knows none of this: its commands take domain types and its errors carry ids, amounts and
 * states.
 *
 * @since 0.1.0
 */
export * as BillingAnchors from "./BillingAnchors.js"
export * as CatalogRequests from "./CatalogRequests.js"
export * as CollectionRequests from "./CollectionRequests.js"
export * as ChangeRequests from "./ChangeRequests.js"
export * as DunningRequests from "./DunningRequests.js"
export * as ErrorReplies from "./ErrorReplies.js"
export * as InvoiceRequests from "./InvoiceRequests.js"
export * as NotificationRequests from "./NotificationRequests.js"
export * as PortalRequests from "./PortalRequests.js"
export * as InvoiceItemRequests from "./InvoiceItemRequests.js"
export * as ItemRequests from "./ItemRequests.js"
export * as RequestBodies from "./RequestBodies.js"
export * as Requests from "./Requests.js"
export * as ScheduleRequests from "./ScheduleRequests.js"
export * as SessionLines from "./SessionLines.js"
export * as BalanceRequests from "./BalanceRequests.js"
export * as MetricRequests from "./MetricRequests.js"
export * as MeterEventRequests from "./MeterEventRequests.js"
export * as UsageAdjustmentRequests from "./UsageAdjustmentRequests.js"
export * as CurrentUsage from "./CurrentUsage.js"
export * as CreditGrantRequests from "./CreditGrantRequests.js"
export * as UsageAlertRequests from "./UsageAlertRequests.js"
