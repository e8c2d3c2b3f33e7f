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
 * What a merchant's customers may do in the portal: replace their card, cancel at the period's
 * end (and take it back), see their invoices, and switch between the prices listed in
 * `switch_prices` (a subscription on one of them may move to another of them, prorated at once
 * with the merchant's proration policy; an empty list turns switching off).
 *
 * @since 0.1.0
 */
export class PortalSettings extends Schema.Class<PortalSettings>("PortalSettings")({
  payment_method_update: Schema.Boolean,
  cancel: Schema.Boolean,
  invoice_history: Schema.Boolean,
  switch_prices: Schema.Array(Schema.String)
}) {}

/**
 * The portal settings of a merchant that has set none and a server that configured none: card,
 * cancellation and invoices on, no switching.
 *
 * @since 0.1.0
 */
export const defaultPortalSettings = new PortalSettings({
  payment_method_update: true,
  cancel: true,
  invoice_history: true,
  switch_prices: []
})
