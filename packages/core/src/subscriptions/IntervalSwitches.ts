/**
 * The effects of an interval switch (`IntervalSwitch` has its rules), for `PriceChanges`: its
 * plan — the credit of the unused time from what the cycle collected, the new period's invoice
 * taxed with the credit applied, the quote — and its commit in the change's transaction.
 *
 * @since 0.1.0
 */
import { Effect, Option, Result } from "effect"
import type { PriceVersion } from "../catalog/Price.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as GiveBack from "../invoices/GiveBack.js"
import type { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import * as Invoicing from "../invoices/Invoicing.js"
import { convertDraft } from "../invoices/Invoicing.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import type * as Ports from "../kernel/Ports.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { renewalTrade, submitTrade } from "../payments/TradeStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as ChangeCommit from "./ChangeCommit.js"
import type * as ChangeQuote from "./ChangeQuote.js"
import * as IntervalSwitch from "./IntervalSwitch.js"
import type { ChangeCommand } from "./PriceChanges.js"
import { taxRenewal } from "./RenewalPlan.js"
import { renewalInvoice } from "./Renewals.js"
import { fullCycle, paidIndex } from "./SubscriptionTerms.js"
import { withItemLines, withUsageSoFar } from "./SubscriptionItems.js"
import type { writes } from "./SubscriptionStore.js"

/**
 * What an interval switch's commit writes, as its plan computed it.
 *
 * @since 0.1.0
 */
export interface Switched {
  readonly given: ReturnType<typeof GiveBack.giveBack> | undefined
  readonly cycleIndex: number
  readonly period: { readonly start: number; readonly end: number }
  readonly quantity: bigint
  readonly balance: Money.Money
  readonly invoice: Invoicing.Draft
  readonly basis: string
  /** What is refunded to the card (`proration_credit` `refund`), and its shares of the cycle's payments. */
  readonly refund: Money.Money
  readonly refunded: ReadonlyArray<GiveBack.Share>
  /** The credit's shares kept on the balance. */
  readonly kept: ReadonlyArray<GiveBack.Share>
  /** The owed refund's key: one switch per cycle of a subscription. */
  readonly key: string
  /** Whether the commit owes a refund to pay right after it. */
  readonly owesRefund: boolean
}

/**
 * Plans a switch of `rec` (from `current`, `after` with the discounts kept) to `target` at `at`:
 * a new period from the change, the unused time credited to the balance, the new period's
 * invoice charged now with it applied.
 *
 * @since 0.1.0
 */
export const planSwitch =
  (storage: StorageService, taxes: Ports.TaxCalculator["Service"]) =>
  (input: {
    readonly merchantId: string
    readonly merchant: Merchant.Merchant
    readonly rec: Entities.SubscriptionRecord
    readonly after: Entities.SubscriptionRecord
    readonly current: PriceVersion
    readonly target: PriceVersion
    readonly at: number
    readonly period: { readonly start: number; readonly end: number }
    readonly proration: ChangeCommand["proration"] | "next_cycle"
    readonly quantity: ChangeCommand["quantity"]
    readonly head: ChangeQuote.Head
    /** What the quote's lines name (an item change names the items). */
    readonly labels?: { readonly before: string; readonly after: string }
  }) =>
    Effect.gen(function* () {
      const { merchantId, merchant, rec, after, current, target, at, quantity, head } = input
      const currency = rec.currency
      const qty = BigInt(rec.subscription.quantity)
      const prorationMode = input.proration
      const periodStart = input.period.start
      const periodEnd = input.period.end
      // a new period from the change: the unused time credited to the balance, the new
      // period's invoice charged now with it applied
      const collected = yield* CycleLedger.collectedBy(storage, merchantId, rec, rec.subscription.cycle_index)
      const credit = IntervalSwitch.unusedCredit({
        merchant,
        rec,
        current,
        collected,
        period: { start: periodStart, end: periodEnd },
        at,
        proration: prorationMode
      })
      const given = credit.amount > 0n ? GiveBack.giveBack(collected, credit) : undefined
      const cycleIndex = rec.subscription.cycle_index + 1
      const pending = rec.subscription.pending_change
      const seats = Option.getOrElse(quantity, () =>
        pending !== null && pending.cycle_index <= cycleIndex ? BigInt(pending.quantity) : qty
      )
      const opening: Entities.SubscriptionRecord = { ...after, anchor: at, anchor_cycle: cycleIndex }
      const balance = Money.make(
        Result.getOrThrow(Money.parse(rec.subscription.credit_balance, currency, { allowNegative: true })).amount +
          (given?.total.amount ?? 0n),
        currency
      )
      // the new period bills every item (an item change moves them all to the new interval); the
      // metered item's usage so far is billed in arrears for the part of the period that ended,
      // at the version in force then (the new period's usage starts from 0)
      const draft = convertDraft(
        withUsageSoFar(
          withItemLines(
            Result.getOrThrow(
              Invoicing.cycle({
                invoice_type: "renewal",
                price: target,
                cycle_index: cycleIndex,
                paidCycles: paidIndex(opening, cycleIndex),
                quantity: seats,
                usage: 0n,
                existing: []
              })
            ),
            after.extra_items,
            paidIndex(opening, cycleIndex)
          ),
          rec,
          paidIndex(rec, rec.subscription.cycle_index),
          { start: periodStart, end: at }
        ),
        rec.fx_rate,
        currency
      )
      const invoice = yield* taxRenewal(taxes, storage)(merchantId, opening, { draft, credit: balance })
      // the credit the invoice does not take: refunded under `refund` (as a downgrade), else kept
      const refund = IntervalSwitch.refundOf(
        merchant.proration_credit,
        given?.total ?? Money.zero(currency),
        invoice,
        Money.make(balance.amount - (given?.total.amount ?? 0n), currency)
      )
      const parts = GiveBack.split(given?.shares ?? [], refund)
      const period = IntervalSwitch.newPeriod(target, at)
      const charge = fullCycle(after, target, seats, cycleIndex)
      const quote: ChangeQuote.Priced = IntervalSwitch.quoted(head, {
        current,
        target,
        labels: input.labels,
        credit,
        charge,
        invoice,
        period,
        refund
      })
      const switched: Switched = {
        given,
        cycleIndex,
        period,
        quantity: seats,
        balance: Money.make(balance.amount - refund.amount, currency),
        invoice,
        basis: Money.format(charge),
        refund,
        refunded: parts.taken,
        kept: parts.rest,
        key: `switch_${rec.subscription.id}_${cycleIndex}`,
        owesRefund: refund.amount > 0n
      }
      return { collected, quote, switched }
    })

/**
 * Commits an interval switch (in the change's transaction): the record on the new price and
 * period, the credit given back from the cycle's payments to the balance, the new period's
 * invoice issued (and its trade, to charge after the commit), the renewal moved to the new
 * period's end.
 *
 * @since 0.1.0
 */
export const openSwitched =
  (
    storage: StorageService,
    documents: ReturnType<typeof invoiceDocuments>,
    schedule: ReturnType<typeof writes>["schedule"],
    /** How long after the commit the `refund_owed` work item pays a refund the commit did not. */
    reconcileAfterMs = 0
  ) =>
  (
    merchant: Merchant.Merchant,
    rec: Entities.SubscriptionRecord,
    from: Entities.SubscriptionRecord,
    target: PriceVersion,
    kept: ReadonlyArray<Entities.DiscountTerm>,
    basis: Option.Option<string>,
    input: { readonly switched: Switched; readonly now: number }
  ) =>
    Effect.gen(function* () {
      const { switched: sw, now } = input
      const subscriptionId = rec.subscription.id
      let next = ChangeCommit.movedTo(from, target, kept, basis)
      const cycle = rec.subscription.cycle_index
      if (sw.given) {
        // the part refunded is owed from the cycle's payments (paid right after the commit, or by
        // the work item), the rest credited to the balance — each against the invoices it came from
        const kept = Money.make(sw.given.total.amount - sw.refund.amount, sw.given.total.currency)
        next = ChangeCommit.creditedBack(next, cycle, sw.kept, kept)
        if (sw.refund.amount > 0n) {
          next = ChangeCommit.withOwedRefund(next, sw.key, cycle, sw.refund, sw.refunded)
          yield* schedule(merchant, "refund_owed", subscriptionId, now + reconcileAfterMs)
        }
      }
      // the usage so far is on the switch's invoice (SubscriptionItems.withUsageSoFar): the new
      // period's starts from 0
      if (sw.invoice.lines.some((l) => l.kind === "usage")) next = { ...next, accrued_usage: "0" }
      next = IntervalSwitch.opened(next, {
        target,
        cycleIndex: sw.cycleIndex,
        period: sw.period,
        quantity: sw.quantity,
        balance: sw.balance,
        invoice: sw.invoice
      })
      const trade =
        sw.invoice.total.amount > 0n ? yield* renewalTrade(merchant, next.subscription, sw.invoice, now) : null
      const inv = yield* renewalInvoice({
        merchantId: merchant.merchant_id,
        subscription: next.subscription,
        rec,
        next,
        periodEnd: sw.period.end,
        pv: target,
        draft: sw.invoice,
        trade,
        at: now
      })
      yield* storage
        .repository(Entities.invoice)
        .insert(yield* documents.issueOne(merchant, inv))
        .pipe(
          Effect.catchTag("UniqueViolation", () =>
            Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: subscriptionId }))
          )
        )
      let tradeToCharge: Option.Option<string> = Option.none()
      if (trade !== null) {
        yield* submitTrade(storage, { trade, invoice_id: inv.invoice_id, subscription_id: subscriptionId, at: now })
        if (rec.payment_token !== null) {
          tradeToCharge = Option.some(trade.trade_id)
          yield* schedule(merchant, "charge", trade.trade_id, now)
        }
      }
      yield* schedule(merchant, "renewal", subscriptionId, sw.period.end)
      return { next, tradeToCharge }
    })
