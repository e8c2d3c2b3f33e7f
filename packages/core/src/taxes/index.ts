/**
 * `taxes/` — Tax rates and the tax computed on an invoice.
 *
 * @since 0.1.0
 */
export * as Tax from "./Tax.js"
export * as TaxRates from "./TaxRates.js"
