/**
 * Discounts as the REST API returns them: a percentage (whole number 1–100) or a fixed amount in
 * the merchant's currency, applied once, for a number of paid cycles, or forever; optionally
 * limited to products, to a number of redemptions in total and per customer, to a minimum
 * purchase, and to a period; optionally with a customer-facing code, unique per merchant.
 *
 * @since 0.1.0
 */
import { DateTime, Result, Schema } from "effect"
import { Metadata, NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Money from "../money/Money.js"
import { DiscountStatus } from "../kernel/Lifecycle.js"
import * as Invoicing from "../invoices/Invoicing.js"

/**
 * `percentage` (`percent_off`) or `fixed_amount` (`amount_off`, in the merchant's currency).
 *
 * @since 0.1.0
 */
export const DiscountType = Schema.Literals(["percentage", "fixed_amount"])
/** @since 0.1.0 */
export type DiscountType = typeof DiscountType.Type

/**
 * How long a redemption lasts: the first paid cycle (`once`), `duration_cycles` paid cycles
 * (`repeating`), or every cycle (`forever`). Trial cycles never count.
 *
 * @since 0.1.0
 */
export const DiscountDuration = Schema.Literals(["once", "repeating", "forever"])
/** @since 0.1.0 */
export type DiscountDuration = typeof DiscountDuration.Type

/**
 * A customer-facing code: 2 to 20 uppercase letters and digits.
 *
 * @since 0.1.0
 */
export const CODE_PATTERN = /^[A-Z0-9]{2,20}$/

/**
 * A discount.
 *
 * @since 0.1.0
 */
export class Discount extends Schema.Class<Discount>("Discount")({
  discount_id: Schema.String,
  merchant_id: Schema.String,
  name: Schema.String,
  code: NullableString,
  discount_type: DiscountType,
  percent_off: Schema.NullOr(Schema.Int),
  amount_off: NullableString,
  currency: Schema.String,
  duration: DiscountDuration,
  duration_cycles: Schema.NullOr(Schema.Int),
  product_ids: Schema.Array(Schema.String),
  max_redemptions: Schema.NullOr(Schema.Int),
  max_redemptions_per_customer: Schema.NullOr(Schema.Int),
  min_amount: NullableString,
  starts_at: Timestamp,
  expires_at: NullableTimestamp,
  status: DiscountStatus,
  times_redeemed: Schema.Int,
  metadata: Metadata,
  created_at: Timestamp,
  ended_at: NullableTimestamp
}) {}

/**
 * One redemption of a discount: by which customer, on which subscription (null when it was not
 * redeemed on one), when. A durable record: removing the discount from the subscription, or
 * ending the discount, does not erase it, and every limit (`max_redemptions`,
 * `max_redemptions_per_customer`, `times_redeemed`) counts these records.
 *
 * @since 0.1.0
 */
export class Redemption extends Schema.Class<Redemption>("DiscountRedemption")({
  redemption_id: Schema.String,
  merchant_id: Schema.String,
  discount_id: Schema.String,
  customer_id: Schema.String,
  subscription_id: NullableString,
  redeemed_at: Timestamp
}) {}

/**
 * Whether a discount's scope covers a product: a discount without `product_ids` covers every
 * product. Checked wherever a price is chosen — at checkout, when a discount is applied to a
 * subscription, and wherever a subscription's price changes (outside its scope a discount stops
 * applying from the change on).
 *
 * @since 0.1.0
 */
export const covers = (discount: Pick<Discount, "product_ids">, productId: string): boolean =>
  discount.product_ids.length === 0 || discount.product_ids.includes(productId)

/**
 * Moves a discount's `status` by `trigger` (the {@link Lifecycle.discount} machine), with the
 * fields that change with it. The only way a discount's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  discount: Discount,
  trigger: "end" | "redeem",
  patch: Partial<Omit<Discount, "status">> = {}
): Result.Result<Lifecycle.Moved<Discount>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.discount,
    discount.status,
    trigger,
    (to) => new Discount({ ...discount, ...patch, status: to }, { disableChecks: true })
  )

/**
 * How many paid cycles a redemption lasts: 1 (`once`), `duration_cycles` (`repeating`), or
 * `null` for every cycle (`forever`).
 *
 * @since 0.1.0
 */
export const cyclesOf = (discount: Pick<Discount, "duration" | "duration_cycles">): number | null =>
  discount.duration === "once" ? 1 : discount.duration === "repeating" ? (discount.duration_cycles ?? 1) : null

/**
 * Whether a redemption's window — `cycles` paid cycles from `first_cycle` (null: no bound) —
 * covers the cycle `cycleIndex`.
 *
 * @example
 * inWindow({ first_cycle: 1, cycles: 3 }, 0) // false: the trial cycle
 * inWindow({ first_cycle: 1, cycles: 3 }, 3) // true: the third paid cycle
 * inWindow({ first_cycle: 1, cycles: 3 }, 4) // false
 * @since 0.1.0
 */
export const inWindow = (
  window: { readonly first_cycle: number | null; readonly cycles: number | null },
  cycleIndex: number
): boolean =>
  (window.first_cycle === null || cycleIndex >= window.first_cycle) &&
  (window.cycles === null || window.first_cycle === null || cycleIndex < window.first_cycle + window.cycles)

/**
 * Whether a redemption's window covers `cycleIndex` or a later cycle (false once it is used up).
 *
 * @since 0.1.0
 */
export const stillApplies = (
  window: { readonly first_cycle: number | null; readonly cycles: number | null },
  cycleIndex: number
): boolean => window.cycles === null || window.first_cycle === null || cycleIndex < window.first_cycle + window.cycles

/**
 * Why a discount cannot be redeemed now on a purchase, or undefined when it can: it has ended,
 * not started or expired; its redemptions are used up (in total, or by this customer); the
 * product is outside its scope; the purchase is in another currency than its amounts; or the
 * purchase is below its minimum.
 *
 * @since 0.1.0
 */
export const refusal = (
  discount: Discount,
  purchase: {
    readonly at: number
    readonly productId: string
    /** What one paid cycle of the purchase costs, before discounts (minor units, in `currency`). */
    readonly amount: { readonly minor: bigint; readonly currency: string }
    /** How many redemption records this customer already has of it (0 for a new customer). */
    readonly byCustomer: number
  }
): string | undefined => {
  const minMinor =
    discount.min_amount !== null
      ? Result.match(Money.parse(discount.min_amount, discount.currency), {
          onFailure: () => null,
          onSuccess: (m) => m.amount
        })
      : null
  const ms = (t: typeof discount.starts_at) => DateTime.toEpochMillis(t)
  if (discount.status !== "active") return "this discount has ended"
  if (purchase.at < ms(discount.starts_at)) return "this discount has not started yet"
  if (discount.expires_at !== null && purchase.at >= ms(discount.expires_at)) return "this discount has expired"
  if (discount.max_redemptions !== null && discount.times_redeemed >= discount.max_redemptions)
    return "this discount has been fully redeemed"
  if (discount.max_redemptions_per_customer !== null && purchase.byCustomer >= discount.max_redemptions_per_customer)
    return "this customer has already redeemed this discount"
  if (!covers(discount, purchase.productId)) return "this discount does not apply to this product"
  const needsCurrency = discount.discount_type === "fixed_amount" || minMinor !== null
  if (needsCurrency && purchase.amount.currency !== discount.currency)
    return `this discount is in ${discount.currency}; this purchase is in ${purchase.amount.currency}`
  if (minMinor !== null && purchase.amount.minor < minMinor)
    return `this discount needs a purchase of at least ${discount.min_amount} ${discount.currency}`
  return undefined
}

// ------------------------------------------------------------------ discounts as invoice rules

/** A discount as the rule an invoice applies: a percentage in basis points, or its fixed amount. */
export const discountRule = (d: Discount): Invoicing.DiscountRule =>
  d.discount_type === "percentage"
    ? Invoicing.DiscountRule.Percentage({
        discount_id: d.discount_id,
        discount_code: d.code ?? "",
        basisPoints: BigInt(d.percent_off ?? 0) * 100n
      })
    : Invoicing.DiscountRule.Amount({
        discount_id: d.discount_id,
        discount_code: d.code ?? "",
        amount: Result.getOrThrow(Money.parse(d.amount_off ?? "0", d.currency))
      })

/** What `amount` costs after `rule`, rounded as an invoice rounds it (never below zero). */
export const afterDiscount = (amount: Money.Money, rule: Invoicing.DiscountRule): Money.Money => {
  const t = Invoicing.total({
    invoice_type: "initial",
    cycle_index: 0,
    currency: amount.currency,
    lines: [{ kind: "subscription", description: "", quantity: 1n, amount }],
    discounts: [rule]
  })
  return Money.make(t.subtotal.amount - Invoicing.sumOfDiscounts(t.discounts), amount.currency)
}
