/**
 * Exact decimals: a `bigint` coefficient and a base-10 scale. Used for unit prices that carry
 * more digits than their currency ($0.0004 per call) and for exchange rates, until the single
 * rounding step in {@link Money.round}. Never a binary float.
 *
 * @since 0.1.0
 */
import { Data, Result } from "effect"

/**
 * `value × 10^-scale`. `{ value: 15n, scale: 2 }` is 0.15.
 *
 * @since 0.1.0
 */
export interface Decimal {
  readonly value: bigint
  readonly scale: number
}

/**
 * A string or number that is not a plain decimal.
 *
 * @since 0.1.0
 */
export class InvalidDecimal extends Data.TaggedError("InvalidDecimal")<{
  readonly input: string
  readonly reason: string
}> {}

const DECIMAL = /^([+-])?(\d+)(?:\.(\d+))?$/
const SCIENTIFIC = /^([+-])?(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/

const POWERS: Array<bigint> = Array.from({ length: 64 }, (_, i) => 10n ** BigInt(i))

/**
 * `10^n` as a bigint (cached for the small exponents every amount uses).
 *
 * @since 0.1.0
 */
export const pow10 = (n: number): bigint => (n < POWERS.length ? POWERS[n]! : 10n ** BigInt(n))

/**
 * Builds a decimal from its parts.
 *
 * @since 0.1.0
 */
export const make = (value: bigint, scale = 0): Decimal => ({ value, scale })

/**
 * Parses `"0.0004"`, `"-12.5"`, `"7"`, or a JSON number. A number is read in its shortest
 * decimal form (`0.1` is exactly one tenth), never as the binary float it is stored as.
 *
 * @example
 * Decimal.parse("0.15") // Result.succeed({ value: 15n, scale: 2 })
 * @since 0.1.0
 */
export const parse = (input: string | number): Result.Result<Decimal, InvalidDecimal> => {
  if (typeof input === "number") {
    if (!Number.isFinite(input)) {
      return Result.fail(new InvalidDecimal({ input: String(input), reason: "not a finite number" }))
    }
    return parseText(String(input), String(input))
  }
  return parseText(input.trim(), input)
}

const parseText = (text: string, input: string): Result.Result<Decimal, InvalidDecimal> => {
  const m = DECIMAL.exec(text)
  if (m) {
    const sign = m[1] === "-" ? -1n : 1n
    const frac = m[3] ?? ""
    return Result.succeed(normalize({ value: sign * BigInt((m[2] ?? "0") + frac), scale: frac.length }))
  }
  const s = SCIENTIFIC.exec(text)
  if (s) {
    const sign = s[1] === "-" ? -1n : 1n
    const frac = s[3] ?? ""
    const exp = Number(s[4])
    if (Math.abs(exp) > 400) return Result.fail(new InvalidDecimal({ input, reason: "exponent out of range" }))
    const coefficient = sign * BigInt((s[2] ?? "0") + frac)
    const scale = frac.length - exp
    return Result.succeed(
      normalize(scale >= 0 ? { value: coefficient, scale } : { value: coefficient * pow10(-scale), scale: 0 })
    )
  }
  return Result.fail(new InvalidDecimal({ input, reason: "not a decimal number" }))
}

/**
 * Removes trailing zeros of the fraction: `1.500` becomes `1.5`.
 *
 * @since 0.1.0
 */
export const normalize = (d: Decimal): Decimal => {
  let { scale, value } = d
  while (scale > 0 && value % 10n === 0n) {
    value /= 10n
    scale -= 1
  }
  return { value, scale }
}

/**
 * The same number with at least `scale` fraction digits (exact: only ever adds zeros).
 *
 * @since 0.1.0
 */
export const rescale = (d: Decimal, scale: number): Decimal =>
  scale <= d.scale ? d : { value: d.value * pow10(scale - d.scale), scale }

/**
 * Exact product.
 *
 * @since 0.1.0
 */
export const multiply = (a: Decimal, b: Decimal): Decimal => ({ value: a.value * b.value, scale: a.scale + b.scale })

/**
 * Exact sum.
 *
 * @since 0.1.0
 */
export const add = (a: Decimal, b: Decimal): Decimal =>
  a.scale === b.scale
    ? { value: a.value + b.value, scale: a.scale }
    : a.scale > b.scale
      ? { value: a.value + b.value * pow10(a.scale - b.scale), scale: a.scale }
      : { value: a.value * pow10(b.scale - a.scale) + b.value, scale: b.scale }

/**
 * `-1`, `0` or `1`.
 *
 * @since 0.1.0
 */
export const compare = (a: Decimal, b: Decimal): -1 | 0 | 1 => {
  const scale = Math.max(a.scale, b.scale)
  const x = rescale(a, scale).value
  const y = rescale(b, scale).value
  return x < y ? -1 : x > y ? 1 : 0
}

/**
 * Whether the number is strictly greater than zero.
 *
 * @since 0.1.0
 */
export const isPositive = (d: Decimal): boolean => d.value > 0n

/**
 * Plain decimal text with exactly the digits of its scale: `{15n, 2}` is `"0.15"`.
 *
 * @since 0.1.0
 */
export const format = (d: Decimal): string => {
  const negative = d.value < 0n
  const digits = (negative ? -d.value : d.value).toString()
  if (d.scale === 0) return (negative ? "-" : "") + digits
  const padded = digits.padStart(d.scale + 1, "0")
  const whole = padded.slice(0, padded.length - d.scale)
  const frac = padded.slice(padded.length - d.scale)
  return `${negative ? "-" : ""}${whole}.${frac}`
}

/**
 * Integer division of `numerator / denominator` rounded half to even (banker's rounding).
 * This is the one rounding step of Recur; every other operation is exact.
 *
 * @example
 * Decimal.divideHalfEven(5n, 2n) // 2n
 * Decimal.divideHalfEven(7n, 2n) // 4n
 * @since 0.1.0
 */
export const divideHalfEven = (numerator: bigint, denominator: bigint): bigint =>
  divideRounded(numerator, denominator, (q) => q % 2n === 1n)

/**
 * Integer division rounded half away from zero ("commercial" rounding: 0.5 → 1, −0.5 → −1).
 *
 * @example
 * Decimal.divideHalfUp(725n, 10n) // 73n
 * @since 0.1.0
 */
export const divideHalfUp = (numerator: bigint, denominator: bigint): bigint =>
  divideRounded(numerator, denominator, () => true)

/** Integer division, rounded to nearest; an exact half rounds away from zero when `upAtHalf(quotient)`. */
const divideRounded = (numerator: bigint, denominator: bigint, upAtHalf: (q: bigint) => boolean): bigint => {
  if (denominator === 0n) throw new RangeError("division by zero")
  if (denominator < 0n) {
    numerator = -numerator
    denominator = -denominator
  }
  const negative = numerator < 0n
  const n = negative ? -numerator : numerator
  let q = n / denominator
  const twice = (n % denominator) * 2n
  if (twice > denominator || (twice === denominator && upAtHalf(q))) q += 1n
  return negative ? -q : q
}

/**
 * Integer division rounded up (towards positive infinity), for counts such as partial
 * packages and usage blocks. Not a money rounding.
 *
 * @since 0.1.0
 */
export const divideCeil = (numerator: bigint, denominator: bigint): bigint => {
  if (denominator <= 0n) throw new RangeError("denominator must be positive")
  const q = numerator / denominator
  return numerator % denominator > 0n ? q + 1n : q
}
