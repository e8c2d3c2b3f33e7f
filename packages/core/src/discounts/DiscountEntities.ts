/**
 * Discounts and their redemptions as stored (re-exported by `Entities`).
 */
import * as Discount from "./Discount.js"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/**
 * A discount, stored as the API shows it; `code` is unique per merchant (a discount without a
 * code never conflicts).
 *
 * @since 0.1.0
 */
export const discount: Store.Entity<Discount.Discount, typeof Discount.Discount.Encoded> = Store.entity({
  name: "discount",
  table: "recur_discounts",
  schema: Discount.Discount,
  id: "discount_id",
  createdAt: (d) => ms(d.created_at),
  columns: { status: "status", code: "code" },
  unique: [{ name: "discount_code", columns: ["code"] }]
})

/**
 * A discount's redemption (who, on which subscription, when): written in the transaction that
 * counts it, never updated or removed; limits count them by `discount_id` and `customer_id`.
 *
 * @since 0.1.0
 */
export const discountRedemption: Store.Entity<Discount.Redemption, typeof Discount.Redemption.Encoded> = Store.entity({
  name: "discount_redemption",
  table: "recur_discount_redemptions",
  schema: Discount.Redemption,
  id: "redemption_id",
  createdAt: (r) => ms(r.redeemed_at),
  columns: {
    discount_id: "discount_id",
    customer_id: "customer_id",
    subscription_id: "subscription_id"
  }
})
