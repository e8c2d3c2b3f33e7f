/**
 * The portal session as stored (re-exported by `Entities`).
 */
import * as PortalSession from "./PortalSession.js"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/**
 * A customer portal session (the link a merchant hands its customer).
 *
 * @since 0.1.0
 */
export const portalSession: Store.Entity<PortalSession.PortalSession, typeof PortalSession.PortalSession.Encoded> =
  Store.entity({
    name: "portal_session",
    table: "recur_portal_sessions",
    schema: PortalSession.PortalSession,
    id: "portal_session_id",
    createdAt: (s) => ms(s.created_at),
    columns: { customer_id: "customer_id" }
  })
