/**
 * `payments/` — Trades (payment attempts) and their machines, the payment gateway port, processor events, dunning and its policy, dispute holds, and the processor's currency rules.
 *
 * @since 0.1.0
 */
export * as StripeCurrency from "./StripeCurrency.js"
export * as Trade from "./Trade.js"
export * as DisputeHolds from "./DisputeHolds.js"
export * as PaymentSettings from "./PaymentSettings.js"
export * as ProcessorEvents from "./ProcessorEvents.js"
export * as Dunning from "./Dunning.js"
export * as SentInvoices from "./SentInvoices.js"
export * as DunningPolicy from "./DunningPolicy.js"
export * as Payments from "./Payments.js"
export * as InvoicePayments from "./InvoicePayments.js"
export * as PaymentMethods from "./PaymentMethods.js"
export * as Charges from "./Charges.js"
export * as Declines from "./Declines.js"
export * as Reconciliation from "./Reconciliation.js"
export * as CardOnFile from "./CardOnFile.js"
