/**
 * Usage alerts and usage billing records as stored (re-exported by `Entities`).
 */
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"
import * as UsageAlert from "./UsageAlert.js"

/**
 * A usage alert, stored as the API shows it; listed by subscription.
 *
 * @since 0.1.0
 */
export const usageAlert: Store.Entity<UsageAlert.UsageAlert, typeof UsageAlert.UsageAlert.Encoded> = Store.entity({
  name: "usage_alert",
  table: "recur_usage_alerts",
  schema: UsageAlert.UsageAlert,
  id: "usage_alert_id",
  createdAt: (a) => ms(a.created_at),
  columns: { subscription_id: "subscription_id", customer_id: "customer_id" }
})

/**
 * A subscription's usage billing record, keyed by the subscription's id.
 *
 * @since 0.1.0
 */
export const usageBilling: Store.Entity<UsageAlert.UsageBilling, typeof UsageAlert.UsageBilling.Encoded> = Store.entity(
  {
    name: "usage_billing",
    table: "recur_usage_billing",
    schema: UsageAlert.UsageBilling,
    id: "subscription_id",
    createdAt: (a) => ms(a.created_at)
  }
)
