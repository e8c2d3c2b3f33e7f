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
 * One line of a decimal rating ({@link rateValue}): as a {@link RatedLine}, its units an exact
 * decimal (a metric's aggregated value, `12.5` GB-hours) or whole blocks and packages.
 *
 * @since 0.1.0
 */
export interface RatedValueLine {
  readonly description: string
  readonly units: Decimal.Decimal
  readonly unitPrice: Decimal.Decimal
  readonly flatAmount: Decimal.Decimal
  /** Exact amount of the line in major units. */
  readonly amount: Decimal.Decimal
}

/**
 * The result of a decimal rating: the amount rounded once, its exact value, and how it was made.
 *
 * @since 0.1.0
 */
export interface RatedValue {
  readonly amount: Money.Money
  readonly exact: Decimal.Decimal
  readonly lines: ReadonlyArray<RatedValueLine>
}

const valueLine = (
  description: string,
  units: Decimal.Decimal,
  unitPrice: Decimal.Decimal,
  flatAmount = ZERO
): RatedValueLine => ({
  description,
  units,
  unitPrice,
  flatAmount,
  amount: Decimal.add(Decimal.multiply(unitPrice, units), flatAmount)
})

const minus = (a: Decimal.Decimal, b: Decimal.Decimal): Decimal.Decimal =>
  Decimal.add(a, Decimal.make(-b.value, b.scale))

/** Whole `size`-unit blocks that hold `value`, the last one partial (a ceiling: not a money rounding). */
const blocksOf = (value: Decimal.Decimal, size: bigint): bigint => {
  const v = Decimal.rescale(value, 0)
  return Decimal.divideCeil(v.value, size * Decimal.pow10(v.scale))
}

/**
 * The part of a decimal `value` in a tier: the tier `min–max` holds the values above `min − 1`
 * up to `max` (a first tier from 0 or 1 holds `(0, max]`), so whole values count units 1..N as
 * {@link lines} does and a fraction between two tiers falls in the upper one.
 */
const valueIn = (t: Tier, value: Decimal.Decimal): Decimal.Decimal => {
  const from = Decimal.make((t.min < 1n ? 1n : t.min) - 1n)
  const hi =
    Option.isSome(t.max) && Decimal.compare(Decimal.make(t.max.value), value) < 0 ? Decimal.make(t.max.value) : value
  const units = minus(hi, from)
  return units.value > 0n ? units : ZERO
}

/**
 * The exact lines a model produces for a decimal usage value (a metric's aggregated value, at
 * most 6 decimals): `PerUnit` of block size 1 is the unit price × the value; larger blocks and
 * packages round the value up to whole blocks (a count, not a money rounding); tiers, graduated
 * or volume, read the decimal value (tier `101–500` holds the values above 100 up to 500). On
 * whole values these are the lines of {@link lines}.
 *
 * @since 0.1.0
 */
export const valueLines = (model: Model, value: Decimal.Decimal): ReadonlyArray<RatedValueLine> => {
  if (value.value <= 0n) return []
  switch (model._tag) {
    case "Flat":
      return [valueLine("flat", value, model.price)]
    case "Package":
      return [valueLine(`package of ${model.size}`, Decimal.make(blocksOf(value, model.size)), model.price)]
    case "PerUnit":
      return model.blockSize === 1n
        ? [valueLine("block of 1", value, model.unitPrice)]
        : [valueLine(`block of ${model.blockSize}`, Decimal.make(blocksOf(value, model.blockSize)), model.unitPrice)]
    case "Tiered": {
      if (model.mode === "volume") {
        const tier = model.tiers.find(
          (t) => Option.isNone(t.max) || Decimal.compare(value, Decimal.make(t.max.value)) <= 0
        )
        return tier ? [valueLine(tierLabel(tier), value, tier.unitPrice, tier.flatAmount)] : []
      }
      const out: Array<RatedValueLine> = []
      for (const t of model.tiers) {
        const units = valueIn(t, value)
        if (units.value > 0n) out.push(valueLine(tierLabel(t), units, t.unitPrice, t.flatAmount))
      }
      return out
    }
  }
}

/**
 * Rates a decimal usage value (a billable metric's aggregated value) under a model: exact
 * lines, summed, then rounded ONCE by `Money.round` — half-even to the currency's minor units.
 * On a whole value the amount is {@link rate}'s.
 *
 * @example
 * Pricing.rateValue(Pricing.Model.PerUnit({ unitPrice: dec("0.002"), blockSize: 1n }), dec("1250.5"), "USD").amount // 2.50 (2.501)
 * @since 0.1.0
 */
export const rateValue = (model: Model, value: Decimal.Decimal, currency: string): RatedValue => {
  if (value.value < 0n) throw new RangeError("value must not be negative")
  const ls = valueLines(model, value)
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
