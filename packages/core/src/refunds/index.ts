/**
 * `refunds/` — Refunds and credit notes: the entity, its machine and the service.
 *
 * @since 0.1.0
 */
export * as Refund from "./Refund.js"
export * as Refunds from "./Refunds.js"
export * as OwedRefunds from "./OwedRefunds.js"
export * as CreditNotes from "./CreditNotes.js"
export * as InvoiceCredits from "./InvoiceCredits.js"
