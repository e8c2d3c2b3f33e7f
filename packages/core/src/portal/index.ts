/**
 * `portal/` — The customer portal: its session entity and the service behind the hosted portal.
 *
 * @since 0.1.0
 */
export * as Portal from "./Portal.js"
export * as PortalSession from "./PortalSession.js"
export * as PortalQuantities from "./PortalQuantities.js"
export * as PortalInvoices from "./PortalInvoices.js"
export * as PortalUsage from "./PortalUsage.js"
