/**
 * Rating: what a quantity or a usage count costs under a price. A closed tagged union of
 * models, one pure function each, dispatched exhaustively. Unit prices keep their full
 * precision (`0.0004` per call) and every model rounds once, half-even, at the end.
 *
 * @since 0.1.0
 */
import { Data, Option } from "effect"
import * as Decimal from "./Decimal.js"
import * as Money from "./Money.js"

/**
 * One tier. Bounds are inclusive whole numbers; `max` `None` means no upper bound.
 * A first tier starting at 0 counts units from 1 (0 units cost nothing).
 *
 * @since 0.1.0
 */
export interface Tier {
  readonly min: bigint
  readonly max: Option.Option<bigint>
  /** Price per unit in major units, any precision. */
  readonly unitPrice: Decimal.Decimal
  /** Fixed amount in major units added when the tier is reached. */
  readonly flatAmount: Decimal.Decimal
}

/**
 * `graduated` prices each unit in its own tier; `volume` prices every unit at the tier the
 * total falls in.
 *
 * @since 0.1.0
 */
export type TierMode = "graduated" | "volume"

/**
 * The rating models.
 *
 * @since 0.1.0
 */
export type Model = Data.TaggedEnum<{
  /** `price` per unit of quantity (seats); one seat is a plain flat price. */
  Flat: { readonly price: Decimal.Decimal }
  /** `price` buys `size` units; partial packages round up. */
  Package: { readonly price: Decimal.Decimal; readonly size: bigint }
  /** `unitPrice` per block of `blockSize` units (`billing_threshold`); partial blocks round up. */
  PerUnit: { readonly unitPrice: Decimal.Decimal; readonly blockSize: bigint }
  /** Quantity or usage tiers. */
  Tiered: { readonly mode: TierMode; readonly tiers: ReadonlyArray<Tier> }
}>

/**
 * Constructors of {@link Model}.
 *
 * @since 0.1.0
 */
export const Model = Data.taggedEnum<Model>()

/**
 * The contribution of one tier or one block to a rated amount (exact, before rounding).
 *
 * @since 0.1.0
 */
export interface RatedLine {
  readonly description: string
  readonly units: bigint
  readonly unitPrice: Decimal.Decimal
  readonly flatAmount: Decimal.Decimal
  /** Exact amount of the line in major units. */
  readonly amount: Decimal.Decimal
}

/**
 * The result of rating: the rounded amount, its exact value and how it was made.
 *
 * @since 0.1.0
 */
export interface Rated {
  readonly amount: Money.Money
  readonly exact: Decimal.Decimal
  readonly lines: ReadonlyArray<RatedLine>
}

const ZERO = Decimal.make(0n)

const line = (description: string, units: bigint, unitPrice: Decimal.Decimal, flatAmount = ZERO): RatedLine => ({
  description,
  units,
  unitPrice,
  flatAmount,
  amount: Decimal.add(Decimal.multiply(unitPrice, Decimal.make(units)), flatAmount)
})

// tiers are immutable values: their labels are built once, not on every rating
const labels = new WeakMap<Tier, string>()
const tierLabel = (t: Tier): string => {
  let label = labels.get(t)
  if (label === undefined) {
    label = `tier ${t.min}–${Option.isSome(t.max) ? String(t.max.value) : "∞"}`
    labels.set(t, label)
  }
  return label
}

/** Units of `quantity` (counted 1..quantity) that fall in the tier. */
const unitsIn = (t: Tier, quantity: bigint): bigint => {
  const lo = t.min < 1n ? 1n : t.min
  const hi = Option.isSome(t.max) && t.max.value < quantity ? t.max.value : quantity
  return hi >= lo ? hi - lo + 1n : 0n
}

const graduated = (tiers: ReadonlyArray<Tier>, quantity: bigint): ReadonlyArray<RatedLine> => {
  const out: Array<RatedLine> = []
  for (const t of tiers) {
    const units = unitsIn(t, quantity)
    if (units > 0n) out.push(line(tierLabel(t), units, t.unitPrice, t.flatAmount))
  }
  return out
}

const volume = (tiers: ReadonlyArray<Tier>, quantity: bigint): ReadonlyArray<RatedLine> => {
  if (quantity <= 0n) return []
  const tier = tiers.find((t) => Option.isNone(t.max) || quantity <= t.max.value)
  return tier ? [line(tierLabel(tier), quantity, tier.unitPrice, tier.flatAmount)] : []
}

/**
 * The exact lines a model produces for a quantity (seats) or a usage count.
 *
 * @since 0.1.0
 */
export const lines = (model: Model, quantity: bigint): ReadonlyArray<RatedLine> => {
  // a plain switch: rating is the hot path of every invoice (Match builds a matcher per call)
  switch (model._tag) {
    case "Flat":
      return quantity > 0n ? [line("flat", quantity, model.price)] : []
    case "Package": {
      const packages = Decimal.divideCeil(quantity, model.size)
      return packages > 0n ? [line(`package of ${model.size}`, packages, model.price)] : []
    }
    case "PerUnit": {
      const blocks = Decimal.divideCeil(quantity, model.blockSize)
      return blocks > 0n ? [line(`block of ${model.blockSize}`, blocks, model.unitPrice)] : []
    }
    case "Tiered":
      return model.mode === "graduated" ? graduated(model.tiers, quantity) : volume(model.tiers, quantity)
  }
}

/**
 * Rates a quantity or usage count under a model: exact lines, summed, rounded once.
 *
 * @example
 * const tiers = [tier(0n, 100n, "0.20"), tier(101n, 500n, "0.15"), tier(501n, null, "0.10")]
 * Pricing.rate(Pricing.Model.Tiered({ mode: "volume", tiers }), 450n, "USD").amount // 67.50
 * @since 0.1.0
 */
export const rate = (model: Model, quantity: bigint, currency: string): Rated => {
  if (quantity < 0n) throw new RangeError("quantity must not be negative")
  const ls = lines(model, quantity)
  const exact = ls.reduce((acc, l) => Decimal.add(acc, l.amount), ZERO)
  return { amount: Money.round(Money.precise(exact, currency)), exact, lines: ls }
}

/**
 * An introductory phase of a price plan (`price_plan_tiers`).
 *
 * @since 0.1.0
 */
export interface Phase {
  /** How many billing periods the phase lasts. */
  readonly periodCount: number
  /** The price charged during the phase (major units). */
  readonly duePrice: Decimal.Decimal
}

/**
 * Builds a phase's due price from `original_price` and a discount when `due_price` is not
 * given: `percentage` (0..100) rounds once, half-even, to the currency; `amount` subtracts.
 *
 * @since 0.1.0
 */
export const discountedPrice = (
  original: Decimal.Decimal,
  discountType: "percentage" | "amount",
  discountValue: Decimal.Decimal,
  currency: string
): Decimal.Decimal => {
  const exponent = Money.exponentOf(currency)
  if (discountType === "amount") {
    const d = Decimal.add(original, { value: -discountValue.value, scale: discountValue.scale })
    return d.value < 0n ? ZERO : d
  }
  // original × (100 - pct) / 100, rounded half-even to the currency exponent
  const remaining = Decimal.add(Decimal.make(100n), { value: -discountValue.value, scale: discountValue.scale })
  const product = Decimal.multiply(original, remaining.value < 0n ? ZERO : remaining)
  const targetScale = exponent
  const denominatorScale = product.scale + 2 - targetScale
  const value =
    denominatorScale >= 0
      ? Decimal.divideHalfEven(product.value, Decimal.pow10(denominatorScale))
      : product.value * Decimal.pow10(-denominatorScale)
  return { value, scale: targetScale }
}

/**
 * The price due in cycle `cycleIndex` (0-based, counting paid cycles): the phase that covers
 * it, or the base price after every phase has run.
 *
 * @example
 * Pricing.phasePrice([{ periodCount: 3, duePrice: Decimal.make(5n) }], Decimal.make(10n), 2) // 5
 * @since 0.1.0
 */
export const phasePrice = (
  phases: ReadonlyArray<Phase>,
  basePrice: Decimal.Decimal,
  cycleIndex: number
): { readonly price: Decimal.Decimal; readonly phase: Option.Option<number> } => {
  let start = 0
  for (let i = 0; i < phases.length; i++) {
    const p = phases[i]!
    if (cycleIndex < start + p.periodCount) return { price: p.duePrice, phase: Option.some(i) }
    start += p.periodCount
  }
  return { price: basePrice, phase: Option.none() }
}

/**
 * The trial terms of a price: free (`trial_type` 0) or paid (`trial_type` 1, `trial_amount`).
 *
 * @since 0.1.0
 */
export type Trial = Data.TaggedEnum<{
  Free: {}
  Paid: { readonly amount: Decimal.Decimal }
}>

/**
 * Constructors of {@link Trial}.
 *
 * @since 0.1.0
 */
export const Trial = Data.taggedEnum<Trial>()

/**
 * What the trial invoice charges.
 *
 * @since 0.1.0
 */
export const trialCharge = (trial: Trial, currency: string): Money.Money =>
  Trial.$match(trial, {
    Free: () => Money.zero(currency),
    Paid: ({ amount }) => Money.round(Money.precise(amount, currency))
  })

/**
 * `over_threshold` billing: whether accrued usage has reached the threshold and an invoice is
 * due now.
 *
 * @since 0.1.0
 */
export const thresholdReached = (accruedUsage: bigint, usageThreshold: bigint): boolean =>
  usageThreshold > 0n && accruedUsage >= usageThreshold
