/**
 * A customer portal session as the REST API returns it (the portal itself is `Portal`).
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { Locale } from "../checkout/CheckoutSession.js"
import { NullableString, Timestamp } from "../kernel/Common.js"

/**
 * Where the portal opens: its overview, or straight at replacing the payment method.
 *
 * @since 0.1.0
 */
export const Flow = Schema.Literals(["payment_method_update"])

/**
 * A portal session: who it is for, where it sends the customer back, until when it works.
 *
 * @since 0.1.0
 */
export class PortalSession extends Schema.Class<PortalSession>("PortalSession")({
  portal_session_id: Schema.String,
  merchant_id: Schema.String,
  customer_id: Schema.String,
  return_url: NullableString,
  flow: Schema.NullOr(Flow),
  /** The portal's language (as a checkout session's `locale`); null follows the browser's. */
  locale: Schema.NullOr(Locale).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  url: Schema.String,
  created_at: Timestamp,
  expires_at: Timestamp,
  /** When the merchant revoked the link (it stopped working then); null while it works. */
  revoked_at: Schema.NullOr(Timestamp).pipe(Schema.withDecodingDefault(Effect.succeed(null)))
}) {}

/**
 * A price whose quantity customers may change in the portal, between `min` and `max` (whole
 * numbers, 1 to 999,999,999): the new quantity applies from the item's next cycle.
 *
 * @since 0.1.0
 */
export const QuantityRule = Schema.Struct({
  price_id: Schema.String,
  min: Schema.Int,
  max: Schema.Int
})
/** @since 0.1.0 */
export type QuantityRule = typeof QuantityRule.Type

/**
 * What a merchant's customers may do in the portal: replace their card, cancel at the period's
 * end (and take it back), see their invoices, switch between the prices listed in
 * `switch_prices` (a subscription on one of them may move to another of them, prorated at once
 * with the merchant's proration policy; an empty list turns switching off), and change the
 * quantity of an item at one of the prices in `adjust_quantities` within its bounds, from the
 * next cycle (empty, the default: no quantity changes).
 *
 * @since 0.1.0
 */
export class PortalSettings extends Schema.Class<PortalSettings>("PortalSettings")({
  payment_method_update: Schema.Boolean,
  cancel: Schema.Boolean,
  invoice_history: Schema.Boolean,
  switch_prices: Schema.Array(Schema.String),
  adjust_quantities: Schema.Array(QuantityRule).pipe(Schema.withDecodingDefault(Effect.succeed([])))
}) {}

/**
 * The portal settings of a merchant that has set none and a server that configured none: card,
 * cancellation and invoices on, no switching, no quantity changes.
 *
 * @since 0.1.0
 */
export const defaultPortalSettings = new PortalSettings({
  payment_method_update: true,
  cancel: true,
  invoice_history: true,
  switch_prices: [],
  adjust_quantities: []
})
