/**
 * Stripe's currency rules, one table: for every presentment currency Stripe lists (and Recur
 * knows), the decimals Stripe counts its `amount` in, the step an amount must be a multiple of,
 * and Stripe's minimum charge where Stripe publishes one. Recur keeps money at the ISO 4217
 * exponent ({@link Money.exponentOf}); Stripe does not always:
 *
 * - zero-decimal in Stripe: BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF
 *   (MGA is 1 in ISO 4217 as Recur has it: Recur's 10 is Stripe's 1);
 * - three-decimal: BHD JOD KWD OMR TND, whose last digit must be 0 (a multiple of 10);
 * - ISK: zero-decimal in practice, sent with two decimals that are always 00 (Recur's 4990 ISK is
 *   Stripe's 499000);
 * - HUF and TWD: charged with two decimals (payouts are integers, not Recur's concern).
 *
 * The one rounding rule ({@link toStripe}): an amount Stripe cannot take is rounded DOWN to the
 * nearest amount it can (a charge never takes more than the invoice says, a refund never gives
 * back more than was charged); what was rounded off is less than one step of Stripe's (0.009 KWD,
 * 0.9 MGA). Stripe's amounts come back exactly ({@link fromStripe}).
 *
 * The table lives in core (pure data, no SDK) so that both the Stripe adapter and the hosted
 * pages' Payment Element use it; `@recur/payment-stripe` re-exports it.
 *
 * @since 0.1.0
 */
import * as Money from "../money/Money.js"

/**
 * One currency's rules at Stripe.
 *
 * @since 0.1.0
 */
export interface Rule {
  /** ISO 4217 code, upper case. */
  readonly code: string
  /** The decimals of Stripe's `amount` (0, 2 or 3). */
  readonly decimals: number
  /** An amount in Stripe's units must be a multiple of this (10 for three-decimal, 100 for ISK). */
  readonly step: bigint
  /**
   * Stripe's minimum charge in Stripe's units, when Stripe publishes one for this currency as a
   * settlement currency (USD 0.50 → 50); a charge under it is refused `amount_too_small`.
   */
  readonly minimum?: bigint | undefined
}

/** Zero-decimal at Stripe. */
const ZERO = "BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split(" ")
/** Three-decimal at Stripe, last digit 0. */
const THREE = "BHD JOD KWD OMR TND".split(" ")
/** Two-decimal at Stripe (the rest of Stripe's presentment currencies Recur knows). */
const TWO = (
  "USD AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BWP BYN BZD CAD CDF " +
  "CHF CNY COP CRC CVE CZK DKK DOP DZD EGP ETB EUR FJD FKP GBP GEL GIP GMD GTQ GYD HKD HNL HTG HUF " +
  "IDR ILS INR JMD KES KGS KHR KYD KZT LAK LBP LKR LRD LSL MAD MDL MKD MMK MNT MOP MUR MVR MWK MXN " +
  "MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SEK SGD SHP " +
  "SLE SOS SRD SZL THB TJS TOP TRY TTD TWD TZS UAH UYU UZS WST XCD YER ZAR ZMW"
).split(" ")
/** ISK: two decimals, always 00. */
const HUNDREDS = "ISK".split(" ")

/**
 * Stripe's minimum charge amounts (docs.stripe.com/currencies, "Minimum and maximum charge
 * amounts"), in Stripe's units, per settlement currency. Recur takes them for the presentment
 * currency of the same code (a merchant charging EUR settles EUR, or near enough: 0.50 EUR is
 * over 0.50 USD); other currencies have no minimum Recur can know (Stripe converts to the
 * account's settlement currency at the day's rate) and are sent as they are.
 */
const MINIMUMS: Readonly<Record<string, bigint>> = {
  USD: 50n,
  AED: 200n,
  AUD: 50n,
  BGN: 100n,
  BRL: 50n,
  CAD: 50n,
  CHF: 50n,
  CZK: 1500n,
  DKK: 250n,
  EUR: 50n,
  GBP: 30n,
  HKD: 400n,
  HUF: 17500n,
  INR: 50n,
  JPY: 50n,
  MXN: 1000n,
  MYR: 200n,
  NOK: 300n,
  NZD: 50n,
  PLN: 200n,
  RON: 200n,
  SEK: 300n,
  SGD: 50n,
  THB: 1000n
}

const rule = (code: string, decimals: number, step: bigint): [string, Rule] => [
  code,
  { code, decimals, step, ...(MINIMUMS[code] !== undefined ? { minimum: MINIMUMS[code] } : {}) }
]

const table: ReadonlyMap<string, Rule> = new Map([
  ...ZERO.map((c) => rule(c, 0, 1n)),
  ...THREE.map((c) => rule(c, 3, 10n)),
  ...TWO.map((c) => rule(c, 2, 1n)),
  ...HUNDREDS.map((c) => rule(c, 2, 100n))
])

/**
 * Every currency in the table.
 *
 * @since 0.1.0
 */
export const codes = (): ReadonlyArray<string> => [...table.keys()]

/**
 * The rules of a currency (upper or lower case), or undefined when Stripe does not list it (or
 * Recur does not know it): such a currency is sent at Recur's exponent, and Stripe judges it.
 *
 * @example
 * StripeCurrency.ruleOf("ISK") // { code: "ISK", decimals: 2, step: 100n }
 * @since 0.1.0
 */
export const ruleOf = (code: string): Rule | undefined => table.get(code.toUpperCase())

const pow10 = (n: number) => 10n ** BigInt(n)

/** Stripe's decimals less Recur's exponent: +2 for ISK, −1 for MGA, 0 for most. */
const shiftOf = (code: string): number => {
  const r = ruleOf(code)
  return r === undefined ? 0 : r.decimals - Money.exponentOf(code.toUpperCase())
}

/**
 * A Recur amount in Stripe's units, rounded DOWN to the nearest amount Stripe takes (a multiple
 * of the currency's step; never negative), and that amount back in Recur's units — what is
 * actually charged or refunded. `rounded` is what was dropped (zero for most currencies; under
 * one step of Stripe's otherwise).
 *
 * @example
 * StripeCurrency.toStripe(Money.make(4990n, "ISK")) // { amount: 499000n, sent: 4990 ISK, rounded: 0 ISK }
 * StripeCurrency.toStripe(Money.make(12345n, "KWD")) // { amount: 12340n, sent: 12.340 KWD, rounded: 0.005 KWD }
 * @since 0.1.0
 */
export const toStripe = (
  money: Money.Money
): { readonly amount: bigint; readonly sent: Money.Money; readonly rounded: Money.Money } => {
  const r = ruleOf(money.currency)
  const minor = money.amount < 0n ? 0n : money.amount
  const shift = shiftOf(money.currency)
  const scaled = shift >= 0 ? minor * pow10(shift) : minor / pow10(-shift)
  const step = r?.step ?? 1n
  const amount = scaled - (scaled % step)
  const sent = fromStripe(amount, money.currency)
  return { amount, sent, rounded: Money.make(minor - sent.amount, money.currency) }
}

/**
 * An amount Stripe states (a charge, a refund, a dispute) in Recur's units: exact for any amount
 * Stripe takes; an ISK amount that is not whole krónur (Stripe never sends one) is rounded down.
 *
 * @example
 * StripeCurrency.fromStripe(499000, "isk") // 4990 ISK
 * StripeCurrency.fromStripe(5, "mga") // 50 in Recur's MGA (exponent 1)
 * @since 0.1.0
 */
export const fromStripe = (amount: bigint | number, currency: string): Money.Money => {
  const code = currency.toUpperCase()
  const value = typeof amount === "bigint" ? amount : BigInt(Math.trunc(amount))
  const shift = shiftOf(code)
  return Money.make(shift >= 0 ? value / pow10(shift) : value * pow10(-shift), code)
}

/**
 * Whether Stripe takes an amount in its own units for a currency: a positive multiple of the
 * currency's step (the minimum charge is {@link minimumCharge}'s, and applies to charges only).
 *
 * @since 0.1.0
 */
export const precisionOk = (amount: bigint, currency: string): boolean =>
  amount >= 1n && amount % (ruleOf(currency)?.step ?? 1n) === 0n

/**
 * Stripe's minimum charge for a currency in Recur's units (USD → 0.50 USD, JPY → 50 JPY), or
 * undefined when Stripe publishes none for it.
 *
 * @since 0.1.0
 */
export const minimumCharge = (currency: string): Money.Money | undefined => {
  const r = ruleOf(currency)
  return r?.minimum === undefined ? undefined : fromStripe(r.minimum, r.code)
}
