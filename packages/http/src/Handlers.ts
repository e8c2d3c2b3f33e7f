/**
 * The handlers of {@link BillingApi}: each decodes, calls one engine service, and answers in
 * the envelope; core errors become the contract's error bodies.
 *
 * @since 0.1.0
 */
import { Layer } from "effect"
import * as ErrorBindings from "./ErrorBindings.js"
import { catalogLive } from "./handlers/Catalog.js"
import { checkoutLive } from "./handlers/Checkout.js"
import { customersLive } from "./handlers/Customers.js"
import { customerBalancesLive } from "./handlers/CustomerBalances.js"
import { discountsLive } from "./handlers/Discounts.js"
import { schedulesLive } from "./handlers/Schedules.js"
import { itemsLive } from "./handlers/Items.js"
import { paymentsLive } from "./handlers/Payments.js"
import { portalLive } from "./handlers/Portal.js"
import { notificationsLive } from "./handlers/Notifications.js"
import { sandboxLive } from "./handlers/Sandbox.js"
import { subscriptionsLive } from "./handlers/Subscriptions.js"
import { taxRatesLive } from "./handlers/TaxRates.js"
import { billableMetricsLive } from "./handlers/BillableMetrics.js"
import { creditGrantsLive } from "./handlers/CreditGrants.js"
import { usageAlertsLive } from "./handlers/UsageAlerts.js"
import { invoiceItemsLive } from "./handlers/InvoiceItems.js"
import { meterEventsLive } from "./handlers/MeterEvents.js"
import { usageAdjustmentsLive } from "./handlers/UsageAdjustments.js"
import { entitlementsLive } from "./handlers/Entitlements.js"
import { webhooksLive } from "./handlers/Webhooks.js"

export { authenticationLive } from "./handlers/Authentication.js"

/**
 * A core error as the contract's error body (see {@link ErrorBindings.bindings}).
 *
 * @since 0.1.0
 */
export const toApiError = ErrorBindings.toApiError

/**
 * Every handler of the API (requires the engine services).
 *
 * @since 0.1.0
 */
export const handlers = Layer.mergeAll(
  customersLive,
  catalogLive,
  checkoutLive,
  subscriptionsLive,
  paymentsLive,
  sandboxLive,
  webhooksLive,
  discountsLive,
  schedulesLive,
  itemsLive,
  taxRatesLive,
  billableMetricsLive,
  creditGrantsLive,
  invoiceItemsLive,
  meterEventsLive,
  usageAdjustmentsLive,
  usageAlertsLive,
  portalLive,
  entitlementsLive,
  notificationsLive,
  customerBalancesLive
)
