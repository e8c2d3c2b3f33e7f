/**
 * `invoices/` — Invoices: the entity and its machine, invoicing (issue, number, pay) and the invoice documents.
 *
 * @since 0.1.0
 */
export * as Invoice from "./Invoice.js"
export * as Invoicing from "./Invoicing.js"
export * as Collection from "./Collection.js"
export * as BalanceCredit from "./BalanceCredit.js"
export * as CycleLedger from "./CycleLedger.js"
export * as GiveBack from "./GiveBack.js"
export * as LineShares from "./LineShares.js"
export * as InvoiceItem from "./InvoiceItem.js"
export * as InvoiceItems from "./InvoiceItems.js"
export * as OneOffInvoices from "./OneOffInvoices.js"
export * as PendingItems from "./PendingItems.js"
export * as InvoiceActions from "./InvoiceActions.js"
export * as DraftEdits from "./DraftEdits.js"
export * as ExtraInvoices from "./ExtraInvoices.js"
