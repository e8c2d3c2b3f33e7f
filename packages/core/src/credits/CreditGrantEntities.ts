/**
 * Credit grants and automatic top-ups as stored (re-exported by `Entities`).
 */
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"
import { AutoTopUp, CreditGrant } from "./CreditGrant.js"

/**
 * A credit grant, stored as the API shows it; a top-up's payment key is unique per merchant, so
 * a payment is granted once.
 *
 * @since 0.1.0
 */
export const creditGrant: Store.Entity<CreditGrant, typeof CreditGrant.Encoded> = Store.entity({
  name: "credit_grant",
  table: "recur_credit_grants",
  schema: CreditGrant,
  id: "credit_grant_id",
  createdAt: (g) => ms(g.created_at),
  columns: { customer_id: "customer_id", currency: "currency", status: "status", payment_key: "payment_key" },
  unique: [{ name: "credit_grant_payment_key", columns: ["payment_key"] }]
})

/**
 * A customer's automatic top-up setting, one per customer (its id is the customer's).
 *
 * @since 0.1.0
 */
export const autoTopUp: Store.Entity<AutoTopUp, typeof AutoTopUp.Encoded> = Store.entity({
  name: "auto_top_up",
  table: "recur_auto_top_ups",
  schema: AutoTopUp,
  id: "customer_id",
  createdAt: (a) => ms(a.created_at)
})
