/**
 * A subscription's terms as its record holds them: its billing schedule and the periods an
 * invoice covers, the discounts in force at a cycle (and a discount as the term it carries), and
 * the basis proration credits and charges.
 */
import { DateTime, Option, Result } from "effect"
import type * as Price from "../catalog/Price.js"
import * as Discount from "../discounts/Discount.js"
import * as Invoicing from "../invoices/Invoicing.js"
import { convertDraft, type Span } from "../invoices/Invoicing.js"
import type * as Entities from "../kernel/Entities.js"
import { dt } from "../kernel/ServiceSupport.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as BillingAnchor from "./BillingAnchor.js"
import * as Money from "../money/Money.js"
import type { Subscription } from "./Subscription.js"
import { withItemLines } from "./SubscriptionItems.js"
import * as Subscriptions from "./Subscription.js"

/** A subscription's billing schedule under price version `pv`: its anchor, cycle and fixed term. */
export const scheduleOf = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion): BillingPeriod.Schedule => ({
  anchor: rec.anchor ?? 0,
  unit: pv.price_plan?.billing_cycle_unit ?? "customer-initiated",
  count: pv.price_plan?.billing_cycle_count ?? 1,
  totalCycles: rec.subscription.total_cycles ?? undefined
})

/**
 * The periods a renewal invoice covers: the cycle it opens (`next`, ending at `periodEnd`) and,
 * for usage in arrears, the cycle that just ended (`rec`'s current period).
 */
export const renewalPeriods = (
  rec: Entities.SubscriptionRecord,
  next: Entities.SubscriptionRecord,
  periodEnd: number | null
): { readonly period: Span | undefined; readonly usagePeriod: Span | undefined } => {
  const ms = (t: Subscription["current_period_start"]) => (t === null ? null : DateTime.toEpochMillis(t))
  const start = ms(next.subscription.current_period_start)
  const prevStart = ms(rec.subscription.current_period_start)
  const prevEnd = ms(rec.subscription.current_period_end)
  return {
    period: start !== null && periodEnd !== null ? { start, end: periodEnd } : undefined,
    usagePeriod: prevStart !== null && prevEnd !== null ? { start: prevStart, end: prevEnd } : undefined
  }
}

/**
 * The service period of a subscription's first invoice, paid at `at`: its trial, else the short
 * period up to its chosen billing anchor, else its first cycle (none for a customer-initiated price).
 */
export const firstPeriod = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion, at: number): Span | undefined =>
  rec.trial_end !== null
    ? { start: at, end: rec.trial_end }
    : BillingAnchor.inFirstPeriod(rec)
      ? { start: at, end: rec.anchor! }
      : Option.getOrUndefined(BillingPeriod.period(scheduleOf({ ...rec, anchor: at }, pv), 0))

/** Paid cycles before `cycleIndex` (selects intro phases and counts fixed terms). */
export const paidIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) =>
  cycleIndex - (rec.trial_end !== null ? 1 : 0)

/** The period index of a cycle relative to the anchor. */
export const periodIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) => cycleIndex - rec.anchor_cycle

/**
 * What a whole period of `pv` × `quantity` costs this subscription before tax: the cycle price
 * (intro phase of `cycleIndex`, no usage) with the record's other items (each at its own price
 * and quantity) in the settlement currency, less its discounts. The basis proration credits and
 * charges (see docs/proration.md): the sum over the items of a full period.
 */
export const fullCycle = (
  rec: Entities.SubscriptionRecord,
  pv: Price.PriceVersion,
  quantity: bigint,
  cycleIndex: number
): Money.Money => {
  const draft = convertDraft(
    withItemLines(
      Result.getOrThrow(
        Invoicing.cycle({
          invoice_type: "renewal",
          price: pv,
          cycle_index: cycleIndex,
          paidCycles: paidIndex(rec, cycleIndex),
          quantity,
          usage: 0n,
          existing: []
        })
      ),
      rec.extra_items,
      paidIndex(rec, cycleIndex)
    ),
    rec.fx_rate,
    rec.currency
  )
  const t = Invoicing.total({
    invoice_type: "renewal",
    cycle_index: cycleIndex,
    currency: rec.currency,
    lines: draft.lines,
    discounts: discountRules(rec, cycleIndex)
  })
  const net = t.subtotal.amount - Invoicing.sumOfDiscounts(t.discounts)
  return Money.make(net > 0n ? net : 0n, rec.currency)
}

/** The basis of the plan in force (see {@link fullCycle}); records from before it existed use the current price. */
export const planBasis = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion) =>
  rec.plan_basis !== null
    ? Result.getOrThrow(Money.parse(rec.plan_basis, rec.currency))
    : fullCycle(rec, pv, BigInt(rec.subscription.quantity), rec.subscription.cycle_index)

/** A redeemed discount as the term a subscription carries, from its first paid cycle `firstCycle`. */
export const discountTerm = (d: Discount.Discount, firstCycle: number): Entities.DiscountTerm => ({
  discount_id: d.discount_id,
  discount_code: d.code ?? "",
  basis_points: d.discount_type === "percentage" ? String((d.percent_off ?? 0) * 100) : null,
  amount: d.discount_type === "fixed_amount" ? d.amount_off : null,
  first_cycle: firstCycle,
  cycles: Discount.cyclesOf(d),
  duration: d.duration
})

/**
 * A subscription as its answer shows it: the stored subscription with the discounts it carries
 * and their terms ({@link Subscriptions.SubscriptionDiscount}), computed from the record.
 *
 * @example
 * withDiscounts(rec).discounts // [{ discount_id: "dsc_…", percent_off: 20, cycles_remaining: 2, … }]
 * @since 0.1.0
 */
export const withDiscounts = (rec: Entities.SubscriptionRecord): Subscription =>
  new Subscriptions.Subscription(
    {
      ...rec.subscription,
      billing_cycle_anchor: rec.anchor !== null ? dt(rec.anchor) : null,
      collection_method: rec.collection?.collection_method ?? null,
      days_until_due: rec.collection?.days_until_due ?? null,
      discounts: rec.discounts.map((t) => {
        const last = t.first_cycle !== null && t.cycles !== null ? t.first_cycle + t.cycles - 1 : null
        const left = last !== null ? last - Math.max(rec.subscription.cycle_index, t.first_cycle! - 1) : null
        return new Subscriptions.SubscriptionDiscount({
          discount_id: t.discount_id,
          discount_code: t.discount_code === "" ? null : t.discount_code,
          discount_type: t.basis_points !== null ? "percentage" : "fixed_amount",
          percent_off: t.basis_points !== null ? Number(t.basis_points) / 100 : null,
          amount_off: t.basis_points === null ? t.amount : null,
          currency: rec.currency,
          // terms from before the duration was kept: one cycle reads as `once`, a bound as `repeating`
          duration: t.duration ?? (t.cycles === null ? "forever" : t.cycles === 1 ? "once" : "repeating"),
          first_cycle: t.first_cycle,
          cycles: t.cycles,
          last_cycle: last,
          cycles_remaining: left !== null ? Math.max(0, left) : null
        })
      })
    },
    { disableChecks: true }
  )

/** The subscription's discounts whose window covers `cycleIndex`, as rules in its settlement currency. */
export const discountRules = (
  rec: Entities.SubscriptionRecord,
  cycleIndex: number
): ReadonlyArray<Invoicing.DiscountRule> =>
  rec.discounts
    .filter((d) => Discount.inWindow(d, cycleIndex))
    .map((d) =>
      d.basis_points !== null
        ? Invoicing.DiscountRule.Percentage({
            discount_id: d.discount_id,
            discount_code: d.discount_code,
            basisPoints: BigInt(d.basis_points)
          })
        : Invoicing.DiscountRule.Amount({
            discount_id: d.discount_id,
            discount_code: d.discount_code,
            amount: Result.getOrThrow(Money.parse(d.amount ?? "0", rec.currency))
          })
    )
