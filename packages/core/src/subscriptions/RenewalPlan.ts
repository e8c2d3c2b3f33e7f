/**
 * A renewal as pure functions, the one computation behind renewing a subscription alone and
 * renewing many in a batch: whether it renews now ({@link decide}), what the next cycle bills
 * ({@link bill}: the prepaid items for the new period and the metered item's usage of the ended
 * period in arrears — a one-item usage subscription's invoice is that usage alone) and
 * the record after it ({@link advance}: next period, quantity and price changes applied, the
 * credit consumed, the proration basis reset, the pending proration lines billed and removed).
 *
 * @since 0.1.0
 */
import { Data, Effect, Option, Result } from "effect"
import * as ChangeQuote from "./ChangeQuote.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import type * as Entities from "../kernel/Entities.js"
import { dt, msOf } from "../kernel/ServiceSupport.js"
import { convertDraft } from "../invoices/Invoicing.js"
import { fullCycle, paidIndex, periodIndex, scheduleOf } from "./SubscriptionTerms.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as BalanceCredit from "../invoices/BalanceCredit.js"
import * as Money from "../money/Money.js"
import * as Price from "../catalog/Price.js"
import * as Subscription from "./Subscription.js"
import { discountRules } from "./SubscriptionTerms.js"
import { meteredIndex, nextCycleItems, type UsageToBill, withItemLines, withoutUsage } from "./SubscriptionItems.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import type * as Ports from "../kernel/Ports.js"
import type * as Tax from "../taxes/Tax.js"
import { withTax } from "../taxes/TaxRates.js"
import { keptLines } from "./KeptUsage.js"
import * as Schedule from "../schedules/Schedule.js"
import type { EventType } from "../kernel/Machine.js"

/**
 * What a due renewal does.
 *
 * @since 0.1.0
 */
export type Decision = Data.TaggedEnum<{
  /** Not trial or active (paused, past due, canceled…): nothing. */
  NotLive: {}
  /** The period has not ended (and the renewal is not forced, or the subscription ends then). */
  NotDue: {}
  /** A cancel was requested for the period end: the subscription ends now. */
  CancelAtPeriodEnd: {}
  /** A fixed term reached `total_cycles` and does not continue. */
  TermCompleted: {}
  /** Bill the next cycle; `continuous` when a completed fixed term converts to continuous. */
  Bill: { readonly continuous: boolean }
}>

/**
 * Constructors of {@link Decision}.
 *
 * @since 0.1.0
 */
export const Decision = Data.taggedEnum<Decision>()

/**
 * Decides a renewal at `at`. A forced one (`force`: renew now, a usage threshold reached) bills
 * the next cycle before the period's end, except for a subscription that ends at that end (a
 * cancel at period end, a schedule ending with `cancel`): not due until then.
 *
 * @since 0.1.0
 */
export const decide = (rec: Entities.SubscriptionRecord, at: number, force = false): Decision => {
  const s = rec.subscription
  if (s.status !== "trial" && s.status !== "active") return Decision.NotLive()
  const due = s.next_invoice_date !== null ? msOf(s.next_invoice_date) : null
  if (!force && (due === null || due > at)) return Decision.NotDue()
  // a renewal forced before the period's end never ends a subscription that ends then (its
  // cancel or its schedule's end): the period is paid for until then, and nothing renews
  const early = due !== null && due > at
  if (s.cancel_at_period_end) return early ? Decision.NotDue() : Decision.CancelAtPeriodEnd()
  // a schedule ending with `cancel` ends the subscription at its last phase's end
  const step = Schedule.stepAt(rec.schedule ?? null, s.cycle_index + 1)
  if (step._tag === "End" && step.trigger === "end_cancel")
    return early ? Decision.NotDue() : Decision.CancelAtPeriodEnd()
  if (s.total_cycles !== null && paidIndex(rec, s.cycle_index + 1) >= s.total_cycles) {
    return rec.convert_to_continuous ? Decision.Bill({ continuous: true }) : Decision.TermCompleted()
  }
  return Decision.Bill({ continuous: false })
}

/**
 * The next cycle's bill, before tax, in the settlement currency.
 *
 * @since 0.1.0
 */
export interface Bill {
  readonly nextCycle: number
  /** The invoice's cycle: the new one (prepaid) or the one that ended (usage in arrears). */
  readonly invoiceCycle: number
  readonly arrears: boolean
  /** The ended cycle's usage is on this invoice (the accrued usage starts again from 0). */
  readonly usageBilled: boolean
  /** Seats for the new cycle (a pending quantity change applied). */
  readonly quantity: bigint
  readonly pendingApplied: boolean
  readonly draft: Invoicing.Draft
  /** The customer's credit before this invoice. */
  readonly credit: Money.Money
}

/**
 * Whether `rec`'s renewal bills the ended cycle in arrears, on an invoice of that cycle: a
 * one-item usage subscription (its base item, `base`, metered and no other item). Otherwise the
 * ended period's usage is a line of the next cycle's prepaid invoice.
 *
 * @since 0.1.0
 */
export const inArrears = (rec: Entities.SubscriptionRecord, base: Price.PriceVersion): boolean =>
  base.billing_dimension === "usage" && rec.extra_items.length === 0

/**
 * What the next cycle bills. `inForce` is the price of the cycle that ends (usage is rated at
 * it), `billed` the price of the next one (a scheduled change applied). Beside other items, the
 * metered item (base or extra) has one `usage` line for the ended period (its `usagePeriod`),
 * the others one line each for the new one; the invoice items pending on the subscription
 * (`itemLines`, in the settlement currency) are lines of it after all those, discounted and taxed
 * as they are; the lines of the items billed by a billable metric (`metricLines`,
 * `MetricUsage.ofPeriod` of the ended period, in the settlement currency) after the other items'.
 * Fails when the cycle is already billed (`existing`).
 *
 * @since 0.1.0
 */
export const bill = (
  rec: Entities.SubscriptionRecord,
  inForce: Price.PriceVersion,
  billed: Price.PriceVersion,
  existing: ReadonlyArray<Invoicing.Prior>,
  ended: Entities.SubscriptionRecord = rec,
  itemLines: ReadonlyArray<Invoicing.Line> = [],
  metricLines: ReadonlyArray<Invoicing.Line> = []
): Result.Result<Bill, Invoicing.DuplicateInvoice> => {
  const s = rec.subscription
  const nextCycle = s.cycle_index + 1
  const pending = s.pending_change
  const pendingApplied = pending !== null && pending.cycle_index <= nextCycle
  const quantity = pendingApplied ? BigInt(pending.quantity) : BigInt(s.quantity)
  // a one-item usage subscription bills the ended cycle alone, in arrears (the seed's invoice);
  // beside other items its metered item's usage is one line of the new cycle's prepaid invoice
  const baseMetered = billed.billing_dimension === "usage"
  const arrears = inArrears(rec, billed)
  const invoiceCycle = arrears ? s.cycle_index : nextCycle
  const accrued = BigInt(rec.accrued_usage)
  // the usage of the cycle that ends, rated for it; none after a trial (trial usage is not billed)
  const endedPaid = paidIndex(rec, s.cycle_index)
  const usage: UsageToBill | undefined =
    !arrears && (meteredIndex(ended) !== undefined || baseMetered) && endedPaid >= 0
      ? { units: accrued, paidCycles: endedPaid }
      : undefined
  return Result.map(
    Invoicing.cycle({
      invoice_type: "renewal",
      price: baseMetered ? inForce : billed,
      cycle_index: invoiceCycle,
      paidCycles: baseMetered && !arrears ? endedPaid : paidIndex(rec, invoiceCycle),
      quantity,
      usage: baseMetered ? accrued : 0n,
      existing
    }),
    (draft) => ({
      nextCycle,
      invoiceCycle,
      arrears,
      usageBilled: baseMetered || usage !== undefined,
      quantity,
      pendingApplied,
      draft: withLines(
        withPendingProrations(
          // the items billed by a billable metric: the ended period's values (`MetricUsage`),
          // already in the settlement currency
          withLines(
            convertDraft(
              arrears
                ? draft
                : withItemLines(
                    baseMetered && usage === undefined ? withoutUsage(draft) : draft,
                    usageInForce(nextCycleItems(rec.extra_items, nextCycle), ended),
                    paidIndex(rec, invoiceCycle),
                    { usage }
                  ),
              rec.fx_rate,
              rec.currency
            ),
            arrears ? [] : metricLines
          ),
          rec
        ),
        itemLines.filter((l) => l.amount.currency === rec.currency)
      ),
      credit: Result.getOrThrow(Money.parse(s.credit_balance, rec.currency, { allowNegative: true }))
    })
  )
}

/**
 * The next cycle's other items as a renewal's lines bill them: the metered one rated as it was
 * in force during the period that ended (`ended`, before a phase, an item set or a scheduled
 * version changes it) — its usage is that period's, so it is rated at the item and price version
 * that period had, whatever the next cycle holds: kept in place when the next cycle keeps a
 * metered item, appended when the next cycle drops it, and none when the ended period had none.
 *
 * @since 0.1.0
 */
export const usageInForce = (
  next: ReadonlyArray<Entities.ItemTerm>,
  ended: Entities.SubscriptionRecord
): ReadonlyArray<Entities.ItemTerm> => {
  const isMetered = (x: Entities.ItemTerm) => Price.isCountMetered(x.version)
  const was = ended.extra_items.find(isMetered)
  if (was === undefined) return next.filter((x) => !isMetered(x))
  return next.some(isMetered) ? next.map((x) => (isMetered(x) ? was : x)) : [...next, was]
}

/**
 * The invoice lines of the subscription's pending proration lines (`create_prorations`
 * changes), one each, in the settlement currency.
 *
 * @since 0.1.0
 */
export const pendingLines = (rec: Entities.SubscriptionRecord): ReadonlyArray<Invoicing.Line> => {
  // each covers its change to the end of the cycle it was made in: the period this invoice closes
  const end = rec.subscription.current_period_end !== null ? msOf(rec.subscription.current_period_end) : undefined
  return rec.pending_prorations.map((p) => ({
    kind: p.kind,
    description: p.description,
    quantity: 1n,
    amount: Result.getOrThrow(Money.parse(p.amount, rec.currency, { allowNegative: true })),
    span: end !== undefined && end >= p.at ? { start: p.at, end } : undefined
  }))
}

/** A draft with `lines` added after its own, its subtotal summed again (the tax step totals it). */
const withLines = (draft: Invoicing.Draft, lines: ReadonlyArray<Invoicing.Line>): Invoicing.Draft => {
  if (lines.length === 0) return draft
  const all = [...draft.lines, ...lines]
  return {
    ...draft,
    lines: all,
    subtotal: Money.make(
      all.reduce((a, l) => a + l.amount.amount, 0n),
      draft.currency
    )
  }
}

/** A renewal's draft with the pending proration lines added after its own (each billed once). */
const withPendingProrations = (draft: Invoicing.Draft, rec: Entities.SubscriptionRecord): Invoicing.Draft => {
  // and the usage an item change removed mid-cycle kept for this invoice (KeptUsage)
  if (rec.pending_prorations.length === 0 && (rec.kept_usage ?? []).length === 0) return draft
  const lines = [...draft.lines, ...keptLines(rec), ...pendingLines(rec)]
  return {
    ...draft,
    lines,
    subtotal: Money.make(
      lines.reduce((a, l) => a + l.amount.amount, 0n),
      draft.currency
    )
  }
}

/**
 * The record after billing `b` (taxed as `invoice`) at `at`: the next period, the price and
 * quantity of the new cycle, usage reset, credit consumed, the proration basis of the new plan.
 * The status is the caller's (it moves only through the lifecycle).
 *
 * @since 0.1.0
 */
export const advance = (
  rec: Entities.SubscriptionRecord,
  billed: Price.PriceVersion,
  b: Bill,
  invoice: Invoicing.Draft,
  at: number,
  continuous = false
): { readonly next: Entities.SubscriptionRecord; readonly periodEnd: number | null } => {
  const s = rec.subscription
  const period = BillingPeriod.period(
    { ...scheduleOf(rec, billed), totalCycles: undefined },
    periodIndex(rec, b.nextCycle)
  )
  const periodEnd = Option.match(period, { onNone: () => null, onSome: (p) => p.end })
  // the items' own pending quantities and scheduled versions, as the base item's below
  const items: Entities.SubscriptionRecord = { ...rec, extra_items: nextCycleItems(rec.extra_items, b.nextCycle) }
  const next: Entities.SubscriptionRecord = {
    ...items,
    accrued_usage: b.usageBilled ? "0" : rec.accrued_usage,
    scheduled_price_version_id: null,
    plan_basis: Money.format(fullCycle(items, billed, b.quantity, b.nextCycle)),
    // billed once, by this invoice
    pending_prorations: [],
    ...((rec.kept_usage ?? []).length > 0 ? { kept_usage: [] } : {}),
    subscription: new Subscription.Subscription(
      {
        ...s,
        ...(continuous ? { total_cycles: null } : {}),
        cycle_index: b.nextCycle,
        quantity: b.quantity.toString(),
        pending_change: b.pendingApplied ? null : s.pending_change,
        price_id: billed.id,
        price_version_id: billed.price_version_id,
        price_type: billed.price_type,
        current_period_start: dt(Option.match(period, { onNone: () => at, onSome: (p) => p.start })),
        current_period_end: periodEnd === null ? null : dt(periodEnd),
        next_invoice_date: periodEnd === null ? null : dt(periodEnd),
        // a proration credit larger than the invoice: the rest goes to the balance
        credit_balance: Money.format(
          Money.make(
            b.credit.amount -
              invoice.creditApplied.amount +
              (invoice.credited ?? Invoicing.unappliedCredit(invoice)).amount,
            b.credit.currency
          )
        ),
        updated_at: dt(at)
      },
      { disableChecks: true }
    )
  }
  return { next, periodEnd }
}

// ------------------------------------------------------------------ the schedule's step

/**
 * What the subscription's schedule does at the renewal at `at` that opens the next cycle: a
 * phase starting there becomes the next cycle's items — its first item the base price and
 * quantity through the record's own end-of-period fields (`scheduled_price_version_id`,
 * `pending_change`), which {@link bill} and {@link advance} apply, the others the record's
 * `extra_items` (`extras`, resolved by `PhaseItems.resolve`; a phase of one item needs none);
 * the last phase's end releases the schedule or completes it (the
 * subscription's cancellation is {@link decide}'s); a schedule that no longer governs a
 * subscription ending for another reason is canceled. Runs in the renewal's transaction with the
 * subscription's version, so a rerun (the cycle already billed) writes nothing twice.
 *
 * @since 0.1.0
 */
export const scheduleStep = (
  rec: Entities.SubscriptionRecord,
  at: number,
  ending = false,
  extras?: ReadonlyArray<Entities.ItemTerm>
): {
  readonly rec: Entities.SubscriptionRecord
  readonly schedule: Schedule.SubscriptionSchedule | null
  readonly events: ReadonlyArray<EventType>
} => {
  const sc = rec.schedule ?? null
  const s = rec.subscription
  const nextCycle = s.cycle_index + 1
  const step = Schedule.stepAt(sc, nextCycle)
  if (sc === null || step._tag === "None" || (ending && step._tag === "Start")) {
    if (!ending || !Schedule.governs(sc)) return { rec, schedule: sc, events: [] }
    // the subscription ends before the schedule does (a cancellation requested at the period's end)
    const moved = Result.getOrThrow(Schedule.move(sc, "cancel", at, { canceled_at: dt(at) }))
    return { rec: { ...rec, schedule: moved.value }, schedule: moved.value, events: moved.events }
  }
  if (step._tag === "End") {
    const moved = Result.getOrThrow(
      Schedule.move(
        sc,
        step.trigger,
        at,
        step.trigger === "end_cancel" ? { completed_at: dt(at) } : { released_at: dt(at) }
      )
    )
    return { rec: { ...rec, schedule: moved.value }, schedule: moved.value, events: moved.events }
  }
  const phase = sc.phases[step.phase]!
  const item = phase.items[0]!
  if (phase.items.length > 1 && extras === undefined)
    throw new Error("a phase's items after the first were not resolved")
  const moved = Result.getOrThrow(Schedule.move(sc, step.trigger, at, { current_phase: step.phase }))
  const pending = s.pending_change
  const next: Entities.SubscriptionRecord = {
    ...rec,
    schedule: moved.value,
    extra_items: phase.items.length > 1 ? extras! : [],
    scheduled_price_version_id: item.price_version_id === s.price_version_id ? null : item.price_version_id,
    subscription: new Subscription.Subscription(
      {
        ...s,
        pending_change:
          item.quantity === s.quantity
            ? null
            : new Subscription.PendingChange({
                quantity: item.quantity,
                cycle_index: nextCycle,
                version: (pending?.version ?? 0) + 1,
                effective_at: dt(at)
              })
      },
      { disableChecks: true }
    )
  }
  return { rec: next, schedule: moved.value, events: moved.events }
}

// ------------------------------------------------------------------ the renewal's tax step

/**
 * A renewal's invoice: the cycle's bill with the subscription's running discounts, the tax at
 * the customer's address and the customer's credit — the one tax step of `Renewals.renew`,
 * `Renewals.upcoming` and `RenewalBatches` (which gives the address it read for the batch).
 */
export const taxRenewal =
  (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  (
    merchantId: string,
    rec: Entities.SubscriptionRecord,
    b: { readonly draft: Invoicing.Draft; readonly credit: Money.Money },
    address?: Tax.TaxAddress | null
  ) =>
    Effect.map(
      withTax(taxes, storage)(
        b.draft,
        merchantId,
        rec.subscription.customer_id,
        b.credit,
        discountRules(rec, b.draft.cycle_index),
        address !== undefined ? { address } : {}
      ),
      // pending credits larger than the invoice: the rest to the balance, with the tax it was paid with
      (taxed) => {
        const paid = ChangeQuote.pendingPaid(rec)
        return BalanceCredit.creditToBalance(taxed, paid.tax_lines, paid.paid, CREDITED).draft
      }
    )

/** The line of an invoice crediting the customer's balance with what it could not absorb. */
const CREDITED = "Credited to your balance"
