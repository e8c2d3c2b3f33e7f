/**
 * Proration: what a mid-cycle price change credits and charges.
 *
 * credit = amount paid for the current cycle × unused / period (never more than is still held of
 * it after refunds and credits),
 * charge = new price × unused / period, each rounded half-even to minor units once
 * ({@link Money.proportion}), all in `bigint`. The net decides the document: a positive net is
 * an `upgrade` invoice charged now; a negative net is refunded (a `refund` invoice) or kept as
 * customer credit, by merchant setting.
 *
 * @since 0.1.0
 */
import { Data, Result, Schema } from "effect"
import type * as BillingPeriod from "./BillingPeriod.js"
import * as Money from "./Money.js"

/**
 * How "unused time" is measured.
 *
 * - `PerSecond` (default, Stripe's rule): seconds left over seconds in the actual period.
 * - `PerDay` (Kill Bill's rule): whole UTC days left over whole days in the actual period.
 * - `FixedDays(n)`: whole days left over a fixed `n`-day month (capped at `n`).
 *
 * @since 0.1.0
 */
export type Policy = Data.TaggedEnum<{
  PerSecond: {}
  PerDay: {}
  FixedDays: { readonly days: number }
}>

/**
 * Constructors of {@link Policy}.
 *
 * @since 0.1.0
 */
export const Policy = Data.taggedEnum<Policy>()

/**
 * The default policy: per second.
 *
 * @since 0.1.0
 */
export const defaultPolicy: Policy = Policy.PerSecond()

/**
 * Parses the merchant setting: `per_second`, `per_day` or `fixed_days(n)`.
 *
 * @since 0.1.0
 */
export const parsePolicy = (text: string): Result.Result<Policy, string> => {
  if (text === "per_second") return Result.succeed(Policy.PerSecond())
  if (text === "per_day") return Result.succeed(Policy.PerDay())
  const m = /^fixed_days\((\d{1,3})\)$/.exec(text)
  if (m && Number(m[1]) > 0) return Result.succeed(Policy.FixedDays({ days: Number(m[1]) }))
  return Result.fail(`unknown proration policy "${text}" (per_second, per_day or fixed_days(n))`)
}

/**
 * The setting's text form.
 *
 * @since 0.1.0
 */
export const formatPolicy = (policy: Policy): string =>
  Policy.$match(policy, {
    PerSecond: () => "per_second",
    PerDay: () => "per_day",
    FixedDays: ({ days }) => `fixed_days(${days})`
  })

/**
 * The unused fraction of a period as an exact ratio.
 *
 * @since 0.1.0
 */
export interface Fraction {
  readonly unused: bigint
  readonly total: bigint
}

const DAY_MS = 86_400_000
const dayIndex = (ms: number): number => Math.floor(ms / DAY_MS)

/**
 * The unused part of `period` when a change happens at `at` (clamped to the period).
 *
 * @example
 * Proration.unusedFraction(Proration.Policy.PerDay(), { start, end }, at) // { unused: 23n, total: 31n }
 * @since 0.1.0
 */
export const unusedFraction = (
  policy: Policy,
  period: Pick<BillingPeriod.Period, "start" | "end">,
  at: number
): Fraction => {
  const clamped = Math.min(Math.max(at, period.start), period.end)
  // a plain switch: this runs for every proration (Data's $match builds a matcher per call)
  switch (policy._tag) {
    case "PerSecond":
      return {
        unused: BigInt(Math.floor((period.end - clamped) / 1000)),
        total: BigInt(Math.max(1, Math.floor((period.end - period.start) / 1000)))
      }
    case "PerDay":
      return {
        unused: BigInt(dayIndex(period.end) - dayIndex(clamped)),
        total: BigInt(Math.max(1, dayIndex(period.end) - dayIndex(period.start)))
      }
    case "FixedDays":
      return {
        unused: BigInt(Math.min(policy.days, dayIndex(period.end) - dayIndex(clamped))),
        total: BigInt(policy.days)
      }
  }
}

/**
 * What the customer gets back or pays for a proration.
 *
 * @since 0.1.0
 */
export type Outcome = Data.TaggedEnum<{
  /** Positive net: an `upgrade` invoice charged now. */
  Upgrade: { readonly amount: Money.Money }
  /** Negative net refunded to the payment method: a `refund` invoice on the cycle's invoice. */
  Refund: { readonly amount: Money.Money }
  /** Negative net kept as customer credit, applied to the next invoices. */
  CreditBalance: { readonly amount: Money.Money }
  /** Zero net: nothing is issued. */
  Nothing: {}
}>

/**
 * Constructors of {@link Outcome}.
 *
 * @since 0.1.0
 */
export const Outcome = Data.taggedEnum<Outcome>()

/**
 * The merchant setting for a negative net: refund it, or keep it as credit.
 *
 * @since 0.1.0
 */
export const CreditMode = Schema.Literals(["refund", "credit_balance"])

/**
 * @since 0.1.0
 */
export type CreditMode = typeof CreditMode.Type

/**
 * The numbers of an immediate, prorated change.
 *
 * @since 0.1.0
 */
export interface Proration {
  readonly fraction: Fraction
  /** Credit for the unused part of what was paid (positive). */
  readonly credit: Money.Money
  /** Charge for the new price over the unused part (positive). */
  readonly charge: Money.Money
  /** `charge - credit`. */
  readonly net: Money.Money
  readonly outcome: Outcome
}

/**
 * Prorates a change from `paid` (what the current cycle was paid) to `newAmount` (the new
 * price for a full cycle) at instant `at`.
 *
 * @example
 * // $10 → $20 half-way through a 30-day month: credit 5.00, charge 10.00, net +5.00
 * Proration.prorate({ policy, period, at, paid: usd(1000n), newAmount: usd(2000n), creditMode: "refund" })
 * @since 0.1.0
 */
export const prorate = (input: {
  readonly policy: Policy
  readonly period: Pick<BillingPeriod.Period, "start" | "end">
  readonly at: number
  readonly paid: Money.Money
  readonly newAmount: Money.Money
  readonly creditMode: CreditMode
  /**
   * What is still held of what was paid for the period (after refunds and credits already
   * given back, `GiveBack.heldBasis`): the credit never exceeds it. None: all of it.
   */
  readonly held?: Money.Money | undefined
}): Result.Result<Proration, Money.CurrencyMismatch> => {
  if (input.paid.currency !== input.newAmount.currency) {
    return Result.fail(new Money.CurrencyMismatch({ left: input.paid.currency, right: input.newAmount.currency }))
  }
  const fraction = unusedFraction(input.policy, input.period, input.at)
  const prorated = Money.proportion(input.paid, fraction.unused, fraction.total)
  const credit =
    input.held !== undefined && input.held.amount < prorated.amount
      ? Money.make(input.held.amount > 0n ? input.held.amount : 0n, prorated.currency)
      : prorated
  const charge = Money.proportion(input.newAmount, fraction.unused, fraction.total)
  const net = Money.make(charge.amount - credit.amount, charge.currency)
  const outcome =
    net.amount > 0n
      ? Outcome.Upgrade({ amount: net })
      : net.amount < 0n
        ? input.creditMode === "refund"
          ? Outcome.Refund({ amount: Money.negate(net) })
          : Outcome.CreditBalance({ amount: Money.negate(net) })
        : Outcome.Nothing()
  return Result.succeed({ fraction, credit, charge, net, outcome })
}

/**
 * The seed's `effective_type` × `proration` of a price change.
 *
 * @since 0.1.0
 */
export interface ChangeRequest {
  readonly effectiveType: "immediate" | "end_of_period"
  readonly proration: "immediate" | "none"
}

/**
 * What a price change does, decided before anything is written.
 *
 * @since 0.1.0
 */
export type ChangePlan = Data.TaggedEnum<{
  /** Switch now and settle the difference now. */
  ProrateNow: { readonly proration: Proration }
  /** Switch now, charge nothing now; the next renewal bills the new price in full. */
  SwitchWithoutProration: {}
  /** Scheduled for `effectiveAt` (the period end); revocable until then. */
  Scheduled: { readonly effectiveAt: number }
}>

/**
 * Constructors of {@link ChangePlan}.
 *
 * @since 0.1.0
 */
export const ChangePlan = Data.taggedEnum<ChangePlan>()

/**
 * Plans a price change per the seed's rules.
 *
 * @since 0.1.0
 */
export const planChange = (input: {
  readonly request: ChangeRequest
  readonly policy: Policy
  readonly period: Pick<BillingPeriod.Period, "start" | "end">
  readonly at: number
  readonly paid: Money.Money
  readonly newAmount: Money.Money
  readonly creditMode: CreditMode
}): Result.Result<ChangePlan, Money.CurrencyMismatch> => {
  if (input.request.effectiveType === "end_of_period") {
    return Result.succeed(ChangePlan.Scheduled({ effectiveAt: input.period.end }))
  }
  if (input.request.proration === "none") return Result.succeed(ChangePlan.SwitchWithoutProration())
  return Result.map(prorate(input), (proration) => ChangePlan.ProrateNow({ proration }))
}

/**
 * A quantity change never prorates: it becomes the subscription's `pending_change` for the
 * next cycle.
 *
 * @since 0.1.0
 */
export interface PendingQuantity {
  readonly quantity: bigint
  readonly cycle_index: number
  readonly effective_at: number
}

/**
 * Plans a quantity change: applies at the start of the next cycle.
 *
 * @since 0.1.0
 */
export const planQuantityChange = (quantity: bigint, current: BillingPeriod.Period): PendingQuantity => ({
  quantity,
  cycle_index: current.index + 1,
  effective_at: current.end
})
