/**
 * A customer portal session as the REST API returns it (the portal itself is `Portal`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { NullableString, Timestamp } from "./Common.js"

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
  url: Schema.String,
  created_at: Timestamp,
  expires_at: Timestamp
}) {}
