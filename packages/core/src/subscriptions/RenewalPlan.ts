/**
 * A renewal as pure functions, the one computation behind renewing a subscription alone and
 * renewing many in a batch: whether it renews now ({@link decide}), what the next cycle bills
 * ({@link bill}: prepaid price for the new period, or the ended period's usage in arrears) and
 * the record after it ({@link advance}: next period, quantity and price changes applied, the
 * credit consumed, the proration basis reset, the pending proration lines billed and removed).
 *
 * @since 0.1.0
 */
import { Data, Option, Result } from "effect"
import * as BillingPeriod from "../money/BillingPeriod.js"
import type * as Entities from "../kernel/Entities.js"
import { dt, msOf } from "../kernel/ServiceSupport.js"
import { convertDraft } from "../invoices/Invoicing.js"
import { fullCycle, paidIndex, periodIndex, scheduleOf } from "./SubscriptionTerms.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as Money from "../money/Money.js"
import type * as Price from "../catalog/Price.js"
import * as Subscription from "./Subscription.js"
import { discountRules } from "./SubscriptionTerms.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import type * as Ports from "../kernel/Ports.js"
import type * as Tax from "../taxes/Tax.js"
import { withTax } from "../taxes/TaxRates.js"

/**
 * What a due renewal does.
 *
 * @since 0.1.0
 */
export type Decision = Data.TaggedEnum<{
  /** Not trial or active (paused, past due, canceled…): nothing. */
  NotLive: {}
  /** The period has not ended (and the renewal is not forced). */
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
 * Decides a renewal at `at`.
 *
 * @since 0.1.0
 */
export const decide = (rec: Entities.SubscriptionRecord, at: number, force = false): Decision => {
  const s = rec.subscription
  if (s.status !== "trial" && s.status !== "active") return Decision.NotLive()
  const due = s.next_invoice_date !== null ? msOf(s.next_invoice_date) : null
  if (!force && (due === null || due > at)) return Decision.NotDue()
  if (s.cancel_at_period_end) return Decision.CancelAtPeriodEnd()
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
  /** Seats for the new cycle (a pending quantity change applied). */
  readonly quantity: bigint
  readonly pendingApplied: boolean
  readonly draft: Invoicing.Draft
  /** The customer's credit before this invoice. */
  readonly credit: Money.Money
}

/**
 * What the next cycle bills. `inForce` is the price of the cycle that ends (usage is rated at
 * it), `billed` the price of the next one (a scheduled change applied). Fails when the cycle is
 * already billed (`existing`).
 *
 * @since 0.1.0
 */
export const bill = (
  rec: Entities.SubscriptionRecord,
  inForce: Price.PriceVersion,
  billed: Price.PriceVersion,
  existing: ReadonlyArray<Invoicing.Prior>
): Result.Result<Bill, Invoicing.DuplicateInvoice> => {
  const s = rec.subscription
  const nextCycle = s.cycle_index + 1
  const pending = s.pending_change
  const pendingApplied = pending !== null && pending.cycle_index <= nextCycle
  const quantity = pendingApplied ? BigInt(pending.quantity) : BigInt(s.quantity)
  const arrears = billed.billing_dimension === "usage"
  const invoiceCycle = arrears ? s.cycle_index : nextCycle
  return Result.map(
    Invoicing.cycle({
      invoice_type: "renewal",
      price: arrears ? inForce : billed,
      cycle_index: invoiceCycle,
      paidCycles: paidIndex(rec, invoiceCycle),
      quantity,
      usage: arrears ? BigInt(rec.accrued_usage) : 0n,
      existing
    }),
    (draft) => ({
      nextCycle,
      invoiceCycle,
      arrears,
      quantity,
      pendingApplied,
      draft: withPendingProrations(convertDraft(draft, rec.fx_rate, rec.currency), rec),
      credit: Result.getOrThrow(Money.parse(s.credit_balance, rec.currency, { allowNegative: true }))
    })
  )
}

/**
 * The invoice lines of the subscription's pending proration lines (`create_prorations`
 * changes), one each, in the settlement currency.
 *
 * @since 0.1.0
 */
export const pendingLines = (rec: Entities.SubscriptionRecord): ReadonlyArray<Invoicing.Line> =>
  rec.pending_prorations.map((p) => ({
    kind: p.kind,
    description: p.description,
    quantity: 1n,
    amount: Result.getOrThrow(Money.parse(p.amount, rec.currency, { allowNegative: true }))
  }))

/** A renewal's draft with the pending proration lines added after its own (each billed once). */
const withPendingProrations = (draft: Invoicing.Draft, rec: Entities.SubscriptionRecord): Invoicing.Draft => {
  if (rec.pending_prorations.length === 0) return draft
  const lines = [...draft.lines, ...pendingLines(rec)]
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
  const next: Entities.SubscriptionRecord = {
    ...rec,
    accrued_usage: b.arrears ? "0" : rec.accrued_usage,
    scheduled_price_version_id: null,
    plan_basis: Money.format(fullCycle(rec, billed, b.quantity, b.nextCycle)),
    // billed once, by this invoice
    pending_prorations: [],
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
            b.credit.amount - invoice.creditApplied.amount + Invoicing.unappliedCredit(invoice).amount,
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
    withTax(taxes, storage)(
      b.draft,
      merchantId,
      rec.subscription.customer_id,
      b.credit,
      discountRules(rec, b.draft.cycle_index),
      address !== undefined ? { address } : {}
    )
