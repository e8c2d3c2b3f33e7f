/**
 * Money: integer minor units of an ISO 4217 currency. Parsing and formatting follow the
 * currency's exponent (USD "30.00", JPY "3000", KWD "1.500"); arithmetic checks currencies and
 * fails with a typed {@link CurrencyMismatch} instead of a thrown dinero error; the single
 * rounding step is {@link round} (half-even to the currency exponent).
 *
 * dinero.js (bigint) supplies the currency table, `allocate` and conversion metadata.
 *
 * @since 0.1.0
 */
import { allocate as dineroAllocate, dinero, toSnapshot, type Dinero } from "dinero.js/bigint"
import * as Currencies from "dinero.js/bigint/currencies"
import { Result, Schema } from "effect"
import * as Decimal from "./Decimal.js"

/**
 * An amount in a currency's minor units (cents for USD, yen for JPY, fils/1000 for KWD).
 *
 * @since 0.1.0
 */
export interface Money {
  readonly amount: bigint
  readonly currency: string
}

/**
 * The currency code is not an ISO 4217 currency Recur knows.
 *
 * @since 0.1.0
 */
export class UnknownCurrency extends Schema.TaggedError<UnknownCurrency>()("UnknownCurrency", {
  currency: Schema.String
}) {
  override get message() {
    return `Unknown currency "${this.currency}"`
  }
}

/**
 * An amount string that is not valid for its currency.
 *
 * @since 0.1.0
 */
export class InvalidAmount extends Schema.TaggedError<InvalidAmount>()("InvalidAmount", {
  input: Schema.String,
  currency: Schema.String,
  reason: Schema.Literals(["not_a_number", "too_many_decimals", "negative", "out_of_range"])
}) {
  override get message() {
    return `Invalid amount "${this.input}" for ${this.currency}: ${this.reason.replace(/_/g, " ")}`
  }
}

/**
 * Two amounts of different currencies were combined.
 *
 * @since 0.1.0
 */
export class CurrencyMismatch extends Schema.TaggedError<CurrencyMismatch>()("CurrencyMismatch", {
  left: Schema.String,
  right: Schema.String
}) {
  override get message() {
    return `Currency mismatch: ${this.left} and ${this.right}`
  }
}

/**
 * ISO 4217 metadata of one currency.
 *
 * @since 0.1.0
 */
export interface Currency {
  readonly code: string
  readonly exponent: number
}

const table: ReadonlyMap<string, Currency> = new Map(
  Object.values(Currencies as unknown as Record<string, { code: string; exponent: bigint }>)
    .filter((c) => typeof c === "object" && c !== null && typeof c.code === "string")
    .map((c) => [c.code, { code: c.code, exponent: Number(c.exponent) }])
)

/**
 * Looks a currency up by its code (upper case, as ISO 4217 writes it).
 *
 * @example
 * Money.currency("KWD") // Result.succeed({ code: "KWD", exponent: 3 })
 * @since 0.1.0
 */
export const currency = (code: string): Result.Result<Currency, UnknownCurrency> => {
  const found = table.get(code)
  return found ? Result.succeed(found) : Result.fail(new UnknownCurrency({ currency: code }))
}

/**
 * Every currency code known.
 *
 * @since 0.1.0
 */
export const currencyCodes = (): ReadonlyArray<string> => [...table.keys()]

/**
 * The number of minor-unit digits of a currency (2 for USD, 0 for JPY, 3 for KWD).
 * Throws for an unknown code: validate with {@link currency} first at the edges.
 *
 * @since 0.1.0
 */
export const exponentOf = (code: string): number => {
  const found = table.get(code)
  if (!found) throw new Error(`Unknown currency ${code}`)
  return found.exponent
}

/**
 * Builds money from minor units.
 *
 * @since 0.1.0
 */
export const make = (amount: bigint, currencyCode: string): Money => ({ amount, currency: currencyCode })

/**
 * Zero of a currency.
 *
 * @since 0.1.0
 */
export const zero = (currencyCode: string): Money => make(0n, currencyCode)

const AMOUNT = /^(-)?(\d+)(?:\.(\d+))?$/
const MAX_MINOR = 10n ** 18n

/**
 * Parses a decimal amount string for a currency. Fewer digits than the exponent are accepted
 * (`"30"`, `"30.5"`); more are rejected, as are negatives (unless allowed), non-numeric text
 * and unknown currencies.
 *
 * @example
 * Money.parse("30.00", "USD") // Result.succeed({ amount: 3000n, currency: "USD" })
 * Money.parse("1.5000", "KWD") // Result.fail(InvalidAmount too_many_decimals)
 * @since 0.1.0
 */
export const parse = (
  input: string,
  currencyCode: string,
  options?: { readonly allowNegative?: boolean }
): Result.Result<Money, InvalidAmount | UnknownCurrency> =>
  Result.flatMap(currency(currencyCode), (c) => {
    const m = AMOUNT.exec(input)
    if (!m) return Result.fail(new InvalidAmount({ input, currency: c.code, reason: "not_a_number" }))
    const frac = m[3] ?? ""
    if (frac.length > c.exponent) {
      return Result.fail(new InvalidAmount({ input, currency: c.code, reason: "too_many_decimals" }))
    }
    const negative = m[1] === "-"
    const minor = BigInt((m[2] ?? "0") + frac.padEnd(c.exponent, "0"))
    if (negative && minor !== 0n && options?.allowNegative !== true) {
      return Result.fail(new InvalidAmount({ input, currency: c.code, reason: "negative" }))
    }
    if (minor >= MAX_MINOR) return Result.fail(new InvalidAmount({ input, currency: c.code, reason: "out_of_range" }))
    return Result.succeed(make(negative ? -minor : minor, c.code))
  })

/**
 * Formats as a decimal string with exactly the currency's minor-unit digits.
 *
 * @example
 * Money.format(Money.make(150n, "KWD")) // "0.150"
 * @since 0.1.0
 */
export const format = (money: Money): string =>
  Decimal.format({ value: money.amount, scale: exponentOf(money.currency) })

const sameCurrency = (a: Money, b: Money): Result.Result<string, CurrencyMismatch> =>
  a.currency === b.currency
    ? Result.succeed(a.currency)
    : Result.fail(new CurrencyMismatch({ left: a.currency, right: b.currency }))

/**
 * `a + b`, or a `CurrencyMismatch`.
 *
 * @since 0.1.0
 */
export const add = (a: Money, b: Money): Result.Result<Money, CurrencyMismatch> =>
  Result.map(sameCurrency(a, b), (c) => make(a.amount + b.amount, c))

/**
 * `a - b`, or a `CurrencyMismatch`.
 *
 * @since 0.1.0
 */
export const subtract = (a: Money, b: Money): Result.Result<Money, CurrencyMismatch> =>
  Result.map(sameCurrency(a, b), (c) => make(a.amount - b.amount, c))

/**
 * `-1`, `0` or `1`, or a `CurrencyMismatch`.
 *
 * @since 0.1.0
 */
export const compare = (a: Money, b: Money): Result.Result<-1 | 0 | 1, CurrencyMismatch> =>
  Result.map(sameCurrency(a, b), () => (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0))

/**
 * Sum of amounts that all share `currencyCode`.
 *
 * @since 0.1.0
 */
export const sum = (currencyCode: string, items: Iterable<Money>): Result.Result<Money, CurrencyMismatch> => {
  let total = zero(currencyCode)
  for (const item of items) {
    if (item.currency !== currencyCode) {
      return Result.fail(new CurrencyMismatch({ left: currencyCode, right: item.currency }))
    }
    total = make(total.amount + item.amount, currencyCode)
  }
  return Result.succeed(total)
}

/**
 * Multiplies by an integer (seats, units).
 *
 * @since 0.1.0
 */
export const times = (money: Money, factor: bigint): Money => make(money.amount * factor, money.currency)

/**
 * Negates.
 *
 * @since 0.1.0
 */
export const negate = (money: Money): Money => make(-money.amount, money.currency)

/**
 * An exact amount in minor units with extra scale, before the rounding step:
 * `{ value: 45n, scale: 1 }` in USD is 4.5 cents.
 *
 * @since 0.1.0
 */
export interface Precise {
  readonly minor: Decimal.Decimal
  readonly currency: string
}

/**
 * The exact minor-unit amount of a major-unit decimal: 0.0004 USD per call is 0.04 cents.
 *
 * @since 0.1.0
 */
export const precise = (major: Decimal.Decimal, currencyCode: string): Precise => {
  const exponent = exponentOf(currencyCode)
  return exponent >= major.scale
    ? { minor: { value: major.value * Decimal.pow10(exponent - major.scale), scale: 0 }, currency: currencyCode }
    : { minor: { value: major.value, scale: major.scale - exponent }, currency: currencyCode }
}

/**
 * THE rounding step: an exact amount to whole minor units, half to even.
 *
 * @example
 * Money.round({ minor: { value: 25n, scale: 1 }, currency: "USD" }) // 2 cents
 * Money.round({ minor: { value: 35n, scale: 1 }, currency: "USD" }) // 4 cents
 * @since 0.1.0
 */
export const round = (p: Precise): Money =>
  make(Decimal.divideHalfEven(p.minor.value, Decimal.pow10(p.minor.scale)), p.currency)

/**
 * Rounds `amount × numerator / denominator` once, half-even. The shape of every proportional
 * amount (proration, discounts by percentage).
 *
 * @since 0.1.0
 */
export const proportion = (money: Money, numerator: bigint, denominator: bigint): Money =>
  make(Decimal.divideHalfEven(money.amount * numerator, denominator), money.currency)

/**
 * Rounds `amount × numerator / denominator` once, half away from zero: the rounding of a tax
 * amount, as tax authorities prescribe it (EU member states' VAT rules, US states' sales tax: a
 * half cent or more rounds up). Every other proportional amount uses {@link proportion}.
 *
 * @example
 * Money.taxProportion(Money.make(1000n, "USD"), 725n, 10_000n) // 0.73 USD (0.725)
 * @since 0.1.0
 */
export const taxProportion = (money: Money, numerator: bigint, denominator: bigint): Money =>
  make(Decimal.divideHalfUp(money.amount * numerator, denominator), money.currency)

/**
 * The equivalent dinero.js object (for formatting with locales and other dinero tooling).
 *
 * @since 0.1.0
 */
export const toDinero = (money: Money): Dinero<bigint> => {
  const c = (Currencies as Record<string, Parameters<typeof dinero<string>>[0]["currency"]>)[money.currency]
  if (!c) throw new Error(`Unknown currency ${money.currency}`)
  return dinero({ amount: money.amount, currency: c })
}

/**
 * Splits an amount by ratios so the parts always sum to the whole (dinero's allocate: the
 * leftover minor units go to the largest shares first).
 *
 * @example
 * Money.allocate(Money.make(1000n, "USD"), [1n, 1n, 1n]) // 334, 333, 333
 * @since 0.1.0
 */
export const allocate = (money: Money, ratios: ReadonlyArray<bigint>): ReadonlyArray<Money> => {
  if (ratios.length === 0 || ratios.some((r) => r < 0n) || ratios.every((r) => r === 0n)) {
    throw new RangeError("allocate needs non-negative ratios with a positive sum")
  }
  return dineroAllocate(toDinero(money), [...ratios]).map((d) => make(toSnapshot(d).amount, money.currency))
}

/**
 * The largest amount any document of the engine carries, in minor units: 999,999,999,999
 * (9,999,999,999.99 USD, 999,999,999,999 JPY). Inside PostgreSQL `bigint`, JavaScript's safe
 * integers and the 12-digit amount fields of card gateways. Every input that multiplies into
 * an amount (price, quantity, usage, rate) is checked so that no invoice can exceed it.
 *
 * @since 0.1.0
 */
export const MAX_AMOUNT_MINOR = 999_999_999_999n

/**
 * Whether `money` is within ±{@link MAX_AMOUNT_MINOR}.
 *
 * @since 0.1.0
 */
export const isWithinBounds = (money: Money): boolean =>
  money.amount <= MAX_AMOUNT_MINOR && money.amount >= -MAX_AMOUNT_MINOR

/**
 * Converts with a `merchant_rate`: 1 unit of the source (primary) currency = `rate` units of
 * the target currency. Exact product, then the one half-even rounding to the target exponent.
 *
 * @example
 * Money.convert(Money.make(3000n, "USD"), Decimal.make(1505n, 1), "JPY") // 4515 JPY
 * @since 0.1.0
 */
export const convert = (money: Money, rate: Decimal.Decimal, target: string): Result.Result<Money, UnknownCurrency> =>
  Result.map(currency(target), (t) => {
    const source = exponentOf(money.currency)
    // minor_t = minor_s × rate × 10^(exp_t - exp_s)
    const shift = t.exponent - source - rate.scale
    const numerator = money.amount * rate.value * (shift > 0 ? Decimal.pow10(shift) : 1n)
    const denominator = shift < 0 ? Decimal.pow10(-shift) : 1n
    return make(Decimal.divideHalfEven(numerator, denominator), t.code)
  })

/**
 * Schema of an ISO 4217 currency code known to Recur.
 *
 * @since 0.1.0
 */
export const CurrencyCode = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => table.has(s) || `unknown currency "${s}"`)),
  Schema.annotate({ identifier: "CurrencyCode", description: "ISO 4217 currency code" })
)

/**
 * Schema of an amount on the wire: a non-negative decimal string.
 *
 * @since 0.1.0
 */
export const AmountString = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^-?\d+(\.\d+)?$/)),
  Schema.annotate({ identifier: "AmountString", description: 'decimal amount string, e.g. "30.00"' })
)

// ------------------------------------------------------------------ formatting and exchange-rate bounds

/** `amount` minor units of `currency`, formatted as a decimal string. */
export const fmtMinor = (amount: bigint, currency: string) => format(make(amount, currency))

/** Exchange rates accepted (captured at checkout or from the FX port): 1 primary = rate target. */
export const MAX_RATE = Decimal.make(1_000_000n)
/** The rule an exchange rate must satisfy, as the error states it. */
export const RATE_RULE = "must be a number greater than 0 and at most 1000000, with at most 12 decimals"
/** Whether `r` is an accepted exchange rate (positive, at most {@link MAX_RATE}, at most 12 decimals). */
export const rateInBounds = (r: Decimal.Decimal) =>
  Decimal.isPositive(r) && Decimal.compare(r, MAX_RATE) <= 0 && r.scale <= 12
