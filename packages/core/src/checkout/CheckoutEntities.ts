/**
 * The checkout session as stored (re-exported by `Entities`).
 */
import * as CheckoutSession from "./CheckoutSession.js"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/** @since 0.1.0 */
export const checkoutSession: Store.Entity<
  CheckoutSession.CheckoutSession,
  typeof CheckoutSession.CheckoutSession.Encoded
> = Store.entity({
  name: "checkout_session",
  table: "recur_checkout_sessions",
  schema: CheckoutSession.CheckoutSession,
  id: "session_id",
  createdAt: (s) => ms(s.created_at),
  columns: { status: "status", customer_id: "customer_id" }
})
