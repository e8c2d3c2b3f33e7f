/**
 * @recur/embedded — Recur for plain async code.
 *
 * @since 0.1.0
 */
export {
  type Answer,
  type BillingClient,
  type CancelInput,
  type CategoryJson,
  type ChangeInput,
  type ClockJson,
  type CreateDiscountInput,
  type CreateMerchantInput,
  type CreatePriceInput,
  type CreateProductInput,
  type CreateTaxRateInput,
  type PageInput,
  type PageJson,
  type PaymentMethodResultJson,
  type PaymentSettingsInput,
  type PaymentSettingsJson,
  type PortalSessionInput,
  type PortalSessionJson,
  type PortalSettingsJson,
  type PriceCreatedJson,
  type PricePlanInput,
  type RefundInput,
  type RevokePriceChangeResult,
  type Services,
  type TaxRateJson,
  type UpcomingInvoiceJson,
  type UsageEventInput,
  type WebhookEndpointInput,
  type WebhookEndpointJson,
  type WebhookEndpointUpdate,
  type WebhookEventJson,
  type BillingOptions,
  type ChangePreview,
  type ChangeResult,
  type CheckoutSessionJson,
  createBilling,
  type CustomerJson,
  type DiscountJson,
  engineOn,
  type InvoiceJson,
  layer,
  type PaymentErrorJson,
  type PaymentJson,
  type PaymentOutcome,
  type PriceJson,
  type ProductJson,
  type RefundJson,
  type StorageOption,
  type SubscriptionDiscountsJson,
  type SubscriptionJson,
  type TradeJson,
  type UsageBatchRecorded,
  type UsageRecorded,
  type UsageSummaryJson,
  type WebhookEndpointCreated
} from "./createBilling.js"
export type { EntitlementsClient } from "./facade/Client.js"
export type {
  BillingSettingsInput,
  BillingSettingsJson,
  CustomerEntitlementsJson,
  DeclineRulesInput,
  DunningPreviewInput,
  DunningPreviewJson,
  EntitlementCheckJson,
  EntitlementSettingsJson
} from "./facade/Types.js"
export {
  ConflictError,
  DataDirLockedError,
  InvalidParameterError,
  InvalidRequestError,
  NotFoundError,
  RecurError,
  SystemError,
  UnauthorizedError,
  UnavailableError
} from "./Errors.js"
/**
 * The FX adapter on the ECB's daily euro reference rates (`createBilling({ fx: "ecb" })`, or its
 * `layer` for an engine composed by hand).
 *
 * @since 0.1.0
 */
export * as EcbRates from "./fx/EcbRates.js"
/**
 * The SMTP adapter of the `Notifier` port (nodemailer): the `notifications: { smtp }` option.
 *
 * @since 0.1.0
 */
export * as SmtpNotifier from "./notify/SmtpNotifier.js"
export type {
  NotificationJson,
  NotificationSettingsInput,
  NotificationSettingsJson,
  NotificationsClient
} from "./facade/Notifications.js"
export type {
  AdjustBalanceInput,
  BalanceTransactionJson,
  BalancesClient,
  CreditNoteInput,
  CreditNoteJson,
  CustomerBalanceJson
} from "./facade/Balances.js"
export type {
  BillableMetricJson,
  BillableMetricsClient,
  CreateBillableMetricInput,
  ListBillableMetricsInput,
  UpdateBillableMetricInput
} from "./facade/BillableMetrics.js"
export type {
  AutoTopUpJson,
  CreateCreditGrantInput,
  CreateTopUpInput,
  CreditGrantJson,
  CreditGrantsClient,
  SetAutoTopUpInput
} from "./facade/CreditGrants.js"
export type {
  CreateUsageAlertInput,
  ListUsageAlertsInput,
  ProgressiveBillingJson,
  UsageAlertJson,
  UsageAlertsClient
} from "./facade/UsageAlerts.js"
