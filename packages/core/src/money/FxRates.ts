/**
 * The exchange-rate port (re-exported by `Ports`).
 */
import { Context, Effect, Layer, Option, Result, Schema } from "effect"
import type * as Store from "../kernel/Store.js"
import { entity } from "../kernel/Store.js"
import * as Decimal from "./Decimal.js"

/**
 * Exchange rates: how many units of `target` one unit of `source` buys today.
 *
 * @example
 * const rate = yield* (yield* FxRates).rate("USD", "JPY") // Option.some(Decimal 150.5)
 * @since 0.1.0
 */
export class FxRates extends Context.Service<
  FxRates,
  { readonly rate: (source: string, target: string) => Effect.Effect<Option.Option<Decimal.Decimal>> }
>()("@recur/core/FxRates") {}

/**
 * A static FX table (`{ "USD:JPY": "150.5" }`), the default. Only listed pairs (and
 * identity) answer: an inverse is not derived, since 1/x is rarely an exact decimal.
 *
 * @since 0.1.0
 */
export const fxStatic = (table: Readonly<Record<string, string>>): Layer.Layer<FxRates> =>
  Layer.succeed(FxRates, {
    rate: (source, target) =>
      Effect.sync(() => {
        if (source === target) return Option.some(Decimal.make(1n))
        const text = table[`${source}:${target}`]
        return text === undefined ? Option.none() : Result.getSuccess(Decimal.parse(text))
      })
  })

/**
 * The significant digits of a cross rate derived through a reference currency
 * ({@link crossRate}): ten, more than any published reference rate carries (the ECB publishes at
 * most six), so the derived rate is off by at most half a unit in the tenth digit.
 *
 * @since 0.1.0
 */
export const CROSS_RATE_SIGNIFICANT_DIGITS = 10

/**
 * The most decimals a derived rate carries (a rate's bound, `Money.rateInBounds`): a rate below
 * 10^-2 keeps fewer than {@link CROSS_RATE_SIGNIFICANT_DIGITS} significant digits.
 *
 * @since 0.1.0
 */
export const CROSS_RATE_MAX_DECIMALS = 12

const digitsOf = (n: bigint): number => (n < 0n ? -n : n).toString().length

/**
 * The rate from `source` to `target` when both are quoted against one reference currency (the
 * euro): `perReference[target] / perReference[source]`, rounded half to even to
 * {@link CROSS_RATE_SIGNIFICANT_DIGITS} significant digits and at most
 * {@link CROSS_RATE_MAX_DECIMALS} decimals — the one rounding step of a derived
 * rate (a rate already exact in that many digits, such as the reference's own quote, is kept
 * as is). Both quotes must be positive.
 *
 * @example
 * FxRates.crossRate(Decimal.make(10832n, 4), Decimal.make(16245n, 2)) // USD→JPY from EUR→USD 1.0832, EUR→JPY 162.45: 149.9723043
 * @since 0.1.0
 */
export const crossRate = (
  sourcePerReference: Decimal.Decimal,
  targetPerReference: Decimal.Decimal
): Decimal.Decimal => {
  if (sourcePerReference.value <= 0n || targetPerReference.value <= 0n)
    throw new RangeError("reference rates must be positive")
  // target/source = (t.value / 10^t.scale) / (s.value / 10^s.scale) = num / den
  const num = targetPerReference.value * Decimal.pow10(sourcePerReference.scale)
  const den = sourcePerReference.value * Decimal.pow10(targetPerReference.scale)
  const sig = CROSS_RATE_SIGNIFICANT_DIGITS
  // k: the scale at which the quotient has `sig` digits before the point
  let k = sig - (digitsOf(num) - digitsOf(den))
  const scaled = (at: number) => (at >= 0 ? num * Decimal.pow10(at) : num / Decimal.pow10(-at)) / den
  while (scaled(k) >= Decimal.pow10(sig)) k -= 1
  while (scaled(k) < Decimal.pow10(sig - 1) && k < CROSS_RATE_MAX_DECIMALS) k += 1
  k = Math.min(k, CROSS_RATE_MAX_DECIMALS)
  const exact = k >= 0 ? { n: num * Decimal.pow10(k), d: den } : { n: num, d: den * Decimal.pow10(-k) }
  let rounded = Decimal.divideHalfEven(exact.n, exact.d)
  if (rounded === Decimal.pow10(sig)) {
    rounded /= 10n
    k -= 1
  }
  return Decimal.normalize(k >= 0 ? Decimal.make(rounded, k) : Decimal.make(rounded * Decimal.pow10(-k), 0))
}

/**
 * A day's reference rates from a public feed, kept in storage so a restart does not fetch them
 * again (`Entities.fxSnapshot`): one record per feed (`id`, e.g. `ecb`), replaced when a newer
 * day's rates are fetched. `rates` are units of each currency per one unit of `base`, as the feed
 * wrote them; `published_on` is the feed's own date; `fetched_at` (Unix ms) when it was read.
 * Stored under the reserved merchant id {@link FX_SNAPSHOT_OWNER}: rates belong to no merchant.
 *
 * @since 0.1.0
 */
export const FxSnapshot = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  base: Schema.String,
  published_on: Schema.String,
  fetched_at: Schema.Number,
  rates: Schema.Record(Schema.String, Schema.String)
})
/** @since 0.1.0 */
export type FxSnapshot = typeof FxSnapshot.Type

/**
 * The merchant id the stored reference rates are kept under (no merchant's: shared by all).
 *
 * @since 0.1.0
 */
export const FX_SNAPSHOT_OWNER = "recur_fx"

/**
 * How reference-rate snapshots are stored (re-exported by `Entities`).
 *
 * @since 0.1.0
 */
export const fxSnapshot: Store.Entity<FxSnapshot, typeof FxSnapshot.Encoded> = entity({
  name: "fx_snapshot",
  table: "recur_fx_snapshots",
  schema: FxSnapshot,
  id: "id",
  createdAt: "fetched_at",
  columns: {}
})
