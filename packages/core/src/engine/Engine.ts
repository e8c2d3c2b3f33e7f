/**
 * The whole engine as one Layer: every service of `core`, wired once. The embedded facade,
 * the REST server, the test kit and the tests all build on it; they only choose the ports.
 *
 * Needs: `Store.Storage`, `Secrets.Secrets`, `Ports.PaymentGateway`, `Ports.FxRates`,
 * `Ports.TaxCalculator`, `Ports.WebhookTransport` and `Settings.Settings` (and optionally a
 * `DunningPolicy.DefaultPolicy`, and a `Ports.Notifier` to send customer notifications).
 *
 * @example
 * const live = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(key), gateway, Ports.fxStatic({}), Ports.taxNone, transport, Settings.layer())))
 * @since 0.1.0
 */
import { Layer } from "effect"
import * as Billing from "./Billing.js"
import * as Catalog from "../catalog/Catalog.js"
import * as Checkout from "../checkout/Checkout.js"
import * as Customers from "../customers/Customers.js"
import * as DisputeHolds from "../payments/DisputeHolds.js"
import * as Discounts from "../discounts/Discounts.js"
import * as Schedules from "../schedules/Schedules.js"
import * as Dunning from "../payments/Dunning.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import * as InvoicePayments from "../payments/InvoicePayments.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Metering from "../usage/Metering.js"
import * as Charges from "../payments/Charges.js"
import * as Declines from "../payments/Declines.js"
import * as Payments from "../payments/Payments.js"
import * as PaymentMethods from "../payments/PaymentMethods.js"
import * as PaymentSettings from "../payments/PaymentSettings.js"
import * as Portal from "../portal/Portal.js"
import * as ProcessorEvents from "../payments/ProcessorEvents.js"
import * as Reconciliation from "../payments/Reconciliation.js"
import * as PriceChanges from "../subscriptions/PriceChanges.js"
import * as ItemChanges from "../subscriptions/ItemChanges.js"
import * as PriceMigrations from "../subscriptions/PriceMigrations.js"
import * as OwedRefunds from "../refunds/OwedRefunds.js"
import * as Refunds from "../refunds/Refunds.js"
import * as RenewalBatches from "../subscriptions/RenewalBatches.js"
import * as Renewals from "../subscriptions/Renewals.js"
import * as InvoiceActions from "../invoices/InvoiceActions.js"
import * as DraftEdits from "../invoices/DraftEdits.js"
import * as SandboxClock from "../tenants/SandboxClock.js"
import * as SessionPayments from "../checkout/SessionPayments.js"
import * as Subscriptions from "../subscriptions/Subscriptions.js"
import * as TaxRates from "../taxes/TaxRates.js"
import * as BillableMetrics from "../usage/BillableMetrics.js"
import * as WebhookDispatch from "../webhooks/WebhookDispatch.js"
import * as Webhooks from "../webhooks/Webhooks.js"
import * as Worker from "./Worker.js"
import * as Entitlements from "../entitlements/Entitlements.js"
import * as Notifications from "../notifications/Notifications.js"
import * as InvoiceItems from "../invoices/InvoiceItems.js"
import * as OneOffInvoices from "../invoices/OneOffInvoices.js"
import * as MeterEvents from "../usage/MeterEvents.js"
import * as MeterCorrections from "../usage/MeterCorrections.js"
import * as UsageAdjustments from "../usage/UsageAdjustments.js"
import * as UsageAlerts from "../usage/UsageAlerts.js"
import * as UsageChecks from "../usage/UsageChecks.js"
import * as CustomerBalances from "../customers/CustomerBalances.js"
import * as InvoiceCredits from "../refunds/InvoiceCredits.js"
import * as CreditGrants from "../credits/CreditGrants.js"

const tenants = Layer.mergeAll(
  Merchants.Merchants.layer,
  Customers.Customers.layer,
  CustomerBalances.CustomerBalances.layer,
  Catalog.Catalog.layer
)
const offers = Layer.mergeAll(
  Discounts.Discounts.layer,
  Schedules.Schedules.layer,
  TaxRates.TaxRates.layer,
  BillableMetrics.BillableMetrics.layer,
  PaymentSettings.PaymentSettings.layer,
  Entitlements.Entitlements.layer
)
// the answer of a charge (Payments) and what a decline does (Declines) under the off-session
// charges and the reconciliation of open trades
const money = Layer.mergeAll(Charges.Charges.layer, Reconciliation.Reconciliation.layer).pipe(
  Layer.provideMerge(Payments.Payments.layer),
  Layer.provideMerge(Declines.Declines.layer)
)
const flows = Layer.mergeAll(
  MeterEvents.MeterEvents.layer,
  // usage alerts and progressive billing (issue 35)
  UsageAlerts.UsageAlerts.layer,
  UsageChecks.UsageChecks.layer,
  InvoiceItems.InvoiceItems.layer,
  OneOffInvoices.OneOffInvoices.layer,
  CreditGrants.CreditGrants.layer,
  SessionPayments.SessionPayments.layer.pipe(Layer.provideMerge(Checkout.Checkout.layer)),
  Renewals.Renewals.layer,
  // a sent invoice's collection setting and its days past due
  SentInvoices.SentInvoices.layer,
  InvoiceActions.InvoiceActions.layer,
  DraftEdits.DraftEdits.layer,
  // paying an invoice from its page may replace the card; a new card retries or recovers (Dunning)
  InvoicePayments.InvoicePayments.layer.pipe(
    Layer.provideMerge(PaymentMethods.PaymentMethods.layer),
    Layer.provideMerge(Dunning.Dunning.layer)
  ),
  OwedRefunds.OwedRefunds.layer.pipe(Layer.provideMerge(Refunds.Refunds.layer))
)

/**
 * Every service of the engine, given its ports.
 *
 * @since 0.1.0
 */
export const layer = Layer.mergeAll(
  Subscriptions.Subscriptions.layer,
  Billing.Billing.layer,
  ProcessorEvents.ProcessorEvents.layer
).pipe(
  Layer.provideMerge(SandboxClock.SandboxClock.layer),
  Layer.provideMerge(Worker.Worker.layer),
  // late meter events and corrections re-rate closed periods (run by the worker)
  Layer.provideMerge(Layer.mergeAll(UsageAdjustments.UsageAdjustments.layer, MeterCorrections.MeterCorrections.layer)),
  // customer notifications (sent by the worker) link into the portal's card-update flow
  Layer.provideMerge(Notifications.Notifications.layer),
  Layer.provideMerge(Portal.Portal.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      Metering.Metering.layer,
      PriceChanges.PriceChanges.layer,
      ItemChanges.ItemChanges.layer,
      RenewalBatches.RenewalBatches.layer,
      PriceMigrations.PriceMigrations.layer,
      InvoiceCredits.InvoiceCredits.layer
    )
  ),
  Layer.provideMerge(flows),
  Layer.provideMerge(money),
  Layer.provideMerge(Webhooks.Webhooks.layer),
  Layer.provideMerge(WebhookDispatch.WebhookDispatch.layer),
  Layer.provideMerge(offers),
  Layer.provideMerge(tenants),
  // every off-session charge passes the hold of an open fraud dispute
  Layer.provideMerge(DisputeHolds.layer)
)
