/**
 * Taxes as pure data and arithmetic: a tax rate (a percentage with up to 4 decimals, a country and
 * an optional region, inclusive or exclusive), how a rate is chosen from a billing address, and
 * the one rounding step of a tax amount.
 *
 * Tax is computed once per invoice, on its taxable amount (the lines after discounts), and
 * rounded once with {@link Money.taxProportion} (half away from zero, as tax authorities round). Exclusive: `taxable × p`, added to
 * the total. Inclusive: `taxable × p / (1 + p)`, carved out of a total that does not change.
 *
 * @example
 * Tax.amountOn(Money.make(11900n, "EUR"), Tax.parsePercentage("19")!, true)  // 19.00 EUR
 * Tax.amountOn(Money.make(10000n, "EUR"), Tax.parsePercentage("19")!, false) // 19.00 EUR
 * @since 0.1.0
 */
import { type Result, Schema } from "effect"
import { Metadata, NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { TaxRateStatus } from "../kernel/Lifecycle.js"
import * as Money from "../money/Money.js"

/**
 * A tax rate.
 *
 * @since 0.1.0
 */
export class TaxRate extends Schema.Class<TaxRate>("TaxRate")({
  tax_rate_id: Schema.String,
  merchant_id: Schema.String,
  /** What invoices call it ("VAT", "Sales tax"). */
  name: Schema.String,
  /** A percentage, up to 4 decimals, as text ("19", "8.875"). */
  percentage: Schema.String,
  /** ISO 3166-1 alpha-2 country code, uppercase. */
  country: Schema.String,
  /** The subdivision (ISO 3166-2 code without the country: "CA", "BY"), or null for the whole country. */
  region: NullableString,
  /** Whether prices already include it. */
  inclusive: Schema.Boolean,
  status: TaxRateStatus,
  metadata: Metadata,
  created_at: Timestamp,
  archived_at: NullableTimestamp
}) {}

/**
 * Moves a tax rate's `status` by `trigger` (the {@link Lifecycle.taxRate} machine). The only way
 * a tax rate's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  rate: TaxRate,
  trigger: "archive",
  patch: Partial<Omit<TaxRate, "status">> = {}
): Result.Result<Lifecycle.Moved<TaxRate>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.taxRate,
    rate.status,
    trigger,
    (to) => new TaxRate({ ...rate, ...patch, status: to }, { disableChecks: true })
  )

/** A percentage's scale: units are millionths of the whole (19 % = 190 000 units). */
const WHOLE = 1_000_000n

const PERCENTAGE = /^(\d{1,3})(?:\.(\d{1,4}))?$/

/**
 * A percentage as units of 1/10 000 of a percent (19 → 190 000; 8.875 → 88 750), or undefined
 * when it is not 0 to 100 with at most 4 decimals.
 *
 * @since 0.1.0
 */
export const parsePercentage = (text: string): bigint | undefined => {
  const m = PERCENTAGE.exec(text)
  if (!m) return undefined
  const units = BigInt(m[1]!) * 10_000n + BigInt((m[2] ?? "").padEnd(4, "0"))
  return units <= 100n * 10_000n ? units : undefined
}

/**
 * Units as the shortest percentage text (190 000 → "19"; 88 750 → "8.875").
 *
 * @since 0.1.0
 */
export const formatPercentage = (units: bigint): string => {
  const whole = units / 10_000n
  const frac = (units % 10_000n).toString().padStart(4, "0").replace(/0+$/, "")
  return frac === "" ? whole.toString() : `${whole}.${frac}`
}

/**
 * The tax on `taxable` at `units` (see {@link parsePercentage}), rounded once half up: exclusive
 * `taxable × p`; inclusive (the amount already holds the tax) `taxable × p / (1 + p)`.
 * Nothing is due on a zero or negative amount.
 *
 * @example
 * amountOn(Money.make(11900n, "EUR"), 190_000n, true) // 19.00 EUR
 * @since 0.1.0
 */
export const amountOn = (taxable: Money.Money, units: bigint, inclusive: boolean): Money.Money =>
  taxable.amount <= 0n
    ? Money.zero(taxable.currency)
    : inclusive
      ? Money.taxProportion(taxable, units, WHOLE + units)
      : Money.taxProportion(taxable, units, WHOLE)

/**
 * One tax on `amount` (the lines after discounts, as billed) at `units`: the amount taxed — always
 * the net, before this tax: `amount` for an exclusive tax, `amount − tax` for an inclusive one
 * (119.00 at 19 % inclusive is 19.00 of tax on 100.00) — and the tax. What every tax line and
 * credit note line states as `taxable_amount` (see docs/taxes.md).
 *
 * @example
 * lineOn(Money.make(11900n, "EUR"), 190_000n, true) // { taxable: 100.00 EUR, amount: 19.00 EUR }
 * @since 0.1.0
 */
export const lineOn = (
  amount: Money.Money,
  units: bigint,
  inclusive: boolean
): { readonly taxable: Money.Money; readonly amount: Money.Money } => {
  const tax = amountOn(amount, units, inclusive)
  return { taxable: inclusive ? Money.make(amount.amount - tax.amount, amount.currency) : amount, amount: tax }
}

/**
 * Where a customer is taxed: an ISO 3166-1 alpha-2 country and an optional subdivision.
 *
 * @since 0.1.0
 */
export interface TaxAddress {
  readonly country: string
  readonly region: string | null
}

const COUNTRY = /^[A-Z]{2}$/
const REGION = /^[A-Z0-9]{1,3}$/

/**
 * A country code as stored (two uppercase letters), or undefined.
 *
 * @since 0.1.0
 */
export const normalCountry = (text: string | null | undefined): string | undefined => {
  const t = text?.trim().toUpperCase()
  return t !== undefined && COUNTRY.test(t) ? t : undefined
}

/**
 * A region code as stored (1 to 3 uppercase letters or digits; a leading `CC-` of the country is
 * dropped: "US-CA" → "CA"), or undefined.
 *
 * @since 0.1.0
 */
export const normalRegion = (text: string | null | undefined, country?: string): string | undefined => {
  let t = text?.trim().toUpperCase()
  if (t !== undefined && country !== undefined && t.startsWith(`${country}-`)) t = t.slice(country.length + 1)
  return t !== undefined && REGION.test(t) ? t : undefined
}

/**
 * The tax address of a postal address (country and province/region fields as entered), or null
 * when its country is not a two-letter code.
 *
 * @since 0.1.0
 */
export const addressOf = (country: string | null | undefined, region: string | null | undefined): TaxAddress | null => {
  const c = normalCountry(country)
  return c === undefined ? null : { country: c, region: normalRegion(region, c) ?? null }
}

/**
 * The rate of these that applies at an address: an active rate of the address's country and
 * region before one of the whole country; the oldest first among equals.
 *
 * @since 0.1.0
 */
export const choose = <R extends { readonly country: string; readonly region: string | null; readonly status: string }>(
  rates: ReadonlyArray<R>,
  address: TaxAddress | null
): R | undefined => {
  if (address === null) return undefined
  const live = rates.filter((r) => r.status === "active" && r.country === address.country)
  return live.find((r) => r.region !== null && r.region === address.region) ?? live.find((r) => r.region === null)
}

/**
 * A rate's jurisdiction key (`DE`, `US-CA`): at most one active rate per key and merchant.
 *
 * @since 0.1.0
 */
export const jurisdiction = (rate: Pick<TaxRate, "country" | "region">): string =>
  rate.region === null ? rate.country : `${rate.country}-${rate.region}`
