/**
 * The stored records of Recur and how each is stored (its {@link Store.Entity}): indexed
 * columns for filters, and the unique constraints that make duplicates impossible.
 *
 * @since 0.1.0
 */
import type * as Store from "./Store.js"
import { apiKey, merchant } from "../tenants/TenantEntities.js"
import { customer } from "../customers/CustomerEntities.js"
import { category, price, priceVersion, product } from "../catalog/CatalogEntities.js"
import { checkoutSession } from "../checkout/CheckoutEntities.js"
import { subscription } from "../subscriptions/SubscriptionEntities.js"
import { trade } from "../payments/PaymentEntities.js"
import { invoice } from "../invoices/InvoiceEntities.js"
import { refund } from "../refunds/RefundEntities.js"
import { usageRecord } from "../usage/UsageEntities.js"
import { webhookDelivery, webhookEndpoint, webhookEvent } from "../webhooks/WebhookEntities.js"

export * from "../tenants/TenantEntities.js"
export * from "../customers/CustomerEntities.js"
export * from "../customers/BalanceEntities.js"
export * from "../credits/CreditGrantEntities.js"
export * from "../catalog/CatalogEntities.js"
export * from "../checkout/CheckoutEntities.js"
export * from "../subscriptions/SubscriptionEntities.js"
export * from "../payments/PaymentEntities.js"
export * from "../invoices/InvoiceEntities.js"
export * from "../refunds/RefundEntities.js"
export * from "../usage/UsageEntities.js"
export * from "../usage/MetricEntities.js"
export * from "../usage/UsageAdjustmentEntities.js"
export * from "../usage/UsageAlertEntities.js"
export * from "../discounts/DiscountEntities.js"
export * from "../taxes/TaxEntities.js"
export * from "../portal/PortalEntities.js"
export { FX_SNAPSHOT_OWNER, FxSnapshot, fxSnapshot } from "../money/FxRates.js"
export * from "../subscriptions/MigrationEntities.js"
export {
  /** @since 0.1.0 */
  DeliveryRecord,
  /** @since 0.1.0 */
  EventRecord,
  /** @since 0.1.0 */
  webhookDelivery,
  /** @since 0.1.0 */
  WebhookEndpointRecord,
  /** @since 0.1.0 */
  webhookEndpoint,
  /** @since 0.1.0 */
  webhookEvent
} from "../webhooks/WebhookEntities.js"

/**
 * Every entity, for adapters that set up storage and for the contract suites.
 *
 * @since 0.1.0
 */
export const all: ReadonlyArray<Store.Entity<any, any>> = [
  merchant,
  apiKey,
  customer,
  category,
  product,
  price,
  priceVersion,
  checkoutSession,
  subscription,
  trade,
  invoice,
  refund,
  usageRecord,
  webhookEndpoint,
  webhookEvent,
  webhookDelivery
]
