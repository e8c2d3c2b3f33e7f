/**
 * @recur/embedded — Recur for plain async code.
 *
 * @since 0.1.0
 */
export {
  type BillingClient,
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
  type PaymentJson,
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
export type {
  CustomerEntitlementsJson,
  EntitlementCheckJson,
  EntitlementSettingsJson,
  EntitlementsClient
} from "./entitlements.js"
export {
  ConflictError,
  InvalidParameterError,
  InvalidRequestError,
  NotFoundError,
  RecurError,
  SystemError,
  UnauthorizedError,
  UnavailableError
} from "./Errors.js"
