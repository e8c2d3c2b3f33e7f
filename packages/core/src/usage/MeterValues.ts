/**
 * The values of meter events' properties as the aggregations read them (`usage/Aggregation.ts`):
 * which texts are numeric, their exact value in millionths, the text stored for a number, and
 * the normalized text of an aggregated value. Shared by the ingestion (`MeterEvents`) and the
 * in-memory store; the SQL store says the same in SQL.
 *
 * @since 0.1.0
 */
import * as Decimal from "../money/Decimal.js"
import { MAX_ABS_VALUE, MAX_SCALE } from "./Aggregation.js"

/** The plain decimal notation a numeric property value is written in. */
const PLAIN = /^([+-])?([0-9]+)(?:\.([0-9]+))?$/

/** 10^MAX_SCALE: numeric values are held as integer millionths. */
export const UNIT = 10n ** BigInt(MAX_SCALE)

const LIMIT = MAX_ABS_VALUE * UNIT

/**
 * The numeric value of a stored property value, in millionths (`"1.5"` is `1_500_000n`), or
 * `undefined` when it is not numeric: not plain decimal text, more than `MAX_SCALE` decimals
 * (trailing zeros aside), or beyond ±`MAX_ABS_VALUE`. Booleans are never numeric.
 *
 * @example
 * MeterValues.micros("2.50") // 2_500_000n
 * MeterValues.micros("1e3") // undefined
 * @since 0.1.0
 */
export const micros = (value: string | boolean | undefined): bigint | undefined => {
  if (typeof value !== "string") return undefined
  const m = PLAIN.exec(value)
  if (m === null) return undefined
  const frac = (m[3] ?? "").replace(/0+$/, "")
  if (frac.length > MAX_SCALE) return undefined
  const magnitude = BigInt(m[2]!) * UNIT + BigInt(frac.padEnd(MAX_SCALE, "0") || "0")
  if (magnitude > LIMIT) return undefined
  return m[1] === "-" ? -magnitude : magnitude
}

/**
 * Millionths as normalized decimal text: `1_500_000n` is `"1.5"`, `0n` is `"0"`.
 *
 * @since 0.1.0
 */
export const formatMicros = (value: bigint): string => Decimal.format(Decimal.normalize({ value, scale: MAX_SCALE }))

/**
 * A property value as filters, groups and `unique_count` compare it: its text.
 *
 * @since 0.1.0
 */
export const text = (value: string | boolean | undefined): string | null =>
  value === undefined ? null : typeof value === "string" ? value : String(value)

/**
 * The text stored for a JSON number property: its exact decimal text (`0.1` is `"0.1"`), or why
 * it cannot be one (not finite, more than `MAX_SCALE` decimals, beyond ±`MAX_ABS_VALUE`).
 *
 * @since 0.1.0
 */
export const numberText = (n: number): { readonly text: string } | { readonly refused: string } => {
  const parsed = Decimal.parse(n)
  if (parsed._tag === "Failure") return { refused: "must be a finite number" }
  const d = Decimal.normalize(parsed.success)
  if (d.scale > MAX_SCALE) return { refused: `must have at most ${MAX_SCALE} decimals` }
  if (d.scale < 0 || (d.value < 0n ? -d.value : d.value) > MAX_ABS_VALUE * Decimal.pow10(d.scale))
    return { refused: `must be within ±${MAX_ABS_VALUE}` }
  return { text: Decimal.format(d) }
}
