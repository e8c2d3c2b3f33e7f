/**
 * Renewals: billing each cycle exactly once (the invoice table's unique cycle key) with the
 * computation of {@link RenewalPlan} (shared with {@link RenewalBatches}); the trial's end notice;
 * incomplete subscriptions expiring.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Discounts from "../discounts/Discounts.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Collection from "../invoices/Collection.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import { dt, emit, emitAll, msOf, nowOf } from "../kernel/ServiceSupport.js"
import { documentOf, invoiceDocuments, newInvoice } from "../invoices/InvoiceDocuments.js"
import { CARRIED } from "../invoices/Invoicing.js"
import { underMinimum } from "../payments/Charges.js"
import { renewalTrade, submitTrade } from "../payments/TradeStore.js"
import { taxRenewal } from "./RenewalPlan.js"
import * as ChangeCommit from "./ChangeCommit.js"
import * as FinalInvoice from "./FinalInvoice.js"
import * as MetricUsage from "../usage/MetricUsage.js"
import * as ProgressiveBilling from "../usage/ProgressiveBilling.js"
import * as KeptUsage from "./KeptUsage.js"
import { renewalPeriods } from "./SubscriptionTerms.js"
import { endTrialAfterPayment, writes } from "./SubscriptionStore.js"
import { must } from "../kernel/ServiceSupport.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as InvoiceItem from "../invoices/InvoiceItem.js"
import * as PendingItems from "../invoices/PendingItems.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Charges from "../payments/Charges.js"
import type * as Payments from "../payments/Payments.js"
import * as Reconciliation from "../payments/Reconciliation.js"
import * as Ports from "../kernel/Ports.js"
import * as ItemRules from "./ItemRules.js"
import * as RenewalPlan from "./RenewalPlan.js"
import * as PhaseItems from "../schedules/PhaseItems.js"
import * as Schedule from "../schedules/Schedule.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "./Subscription.js"
import * as SharedCredit from "../customers/SharedCredit.js"

/** The subscription holding `creditBalance` as its share (a share another holder gave it: SharedCredit). */
const withCredit = (s: Subscription.Subscription, creditBalance: string): Subscription.Subscription =>
  new Subscription.Subscription({ ...s, credit_balance: creditBalance }, { disableChecks: true })

/** The record with `amount` more owed on the customer's balance (a debit: a lower credit balance). */
export const withDebit = (rec: Entities.SubscriptionRecord, amount: Money.Money): Entities.SubscriptionRecord => {
  const credit = Result.getOrThrow(
    Money.parse(rec.subscription.credit_balance, amount.currency, { allowNegative: true })
  )
  return {
    ...rec,
    subscription: new Subscription.Subscription(
      { ...rec.subscription, credit_balance: Money.format(Money.make(credit.amount - amount.amount, amount.currency)) },
      { disableChecks: true }
    )
  }
}

/**
 * A renewal's invoice: the draft of the cycle that `next` opens (ending at `periodEnd`, usage
 * billed for the cycle `rec` ends), charged by `trade` — or settled without a charge when there is
 * none; under `send_invoice` (`collection`) it stays open, due `days_until_due` after `at`, paid
 * by the customer on its page. The one construction `Renewals.renew` and
 * `RenewalBatches.renewMany` share.
 *
 * @since 0.1.0
 */
export const renewalInvoice = (input: {
  readonly merchantId: string
  readonly subscription: Subscription.Subscription
  readonly rec: Entities.SubscriptionRecord
  readonly next: Entities.SubscriptionRecord
  readonly periodEnd: number | null
  readonly pv: { readonly id: string; readonly price_version_id: string }
  readonly draft: Invoicing.Draft
  readonly trade: { readonly trade_id: string } | null
  readonly at: number
  readonly collection?: Collection.Collection | undefined
  /** Born a draft (the merchant's grace period): finalised later, by `InvoiceActions`. */
  readonly asDraft?: boolean
}) => {
  const dueAt =
    input.collection !== undefined && input.trade !== null ? Collection.dueAt(input.collection, input.at) : null
  return newInvoice({
    merchant_id: input.merchantId,
    draft: input.draft,
    trade_id: input.trade?.trade_id ?? null,
    subscription_id: input.subscription.id,
    price_id: input.pv.id,
    price_version_id: input.pv.price_version_id,
    customer_id: input.subscription.customer_id,
    order_id: input.subscription.order_id,
    trigger:
      input.asDraft === true ? "draft" : dueAt !== null ? null : input.trade ? "charge" : "settle_without_charge",
    at: input.at,
    ...renewalPeriods(input.rec, input.next, input.periodEnd)
  }).pipe(Effect.map((inv) => (dueAt === null ? inv : SentInvoices.asSent(inv, dueAt))))
}

/**
 * The renewals service.
 *
 * @since 0.1.0
 */
export class Renewals extends Context.Service<Renewals>()("@recur/core/Renewals", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings)
    const taxes = yield* Ports.TaxCalculator
    const merchants = yield* Merchants.Merchants
    const charges = yield* Charges.Charges
    const reconciliation = yield* Reconciliation.Reconciliation
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const customers = storage.repository(Entities.customer)
    const { saveSub, schedule, subEvents, version } = writes(storage)
    const taxed_ = taxRenewal(taxes, storage)
    const finalInvoice = FinalInvoice.bill(storage, taxes, documents, schedule, gateway)

    /**
     * The price of the cycle that ends, the next cycle's (a scheduled change applied), and the
     * record the next cycle bills: a scheduled change to a price outside a discount's products
     * ends that discount from the change on, and so does a schedule's phase (`phaseStarted`)
     * with an item outside them (a discount of a later phase waits for its own).
     */
    const pricesOf = (merchantId: string, rec: Entities.SubscriptionRecord, phaseStarted = false) =>
      Effect.gen(function* () {
        const inForce = yield* version(merchantId, rec.subscription.price_version_id)
        if (rec.scheduled_price_version_id === null && !phaseStarted) return { inForce, pv: inForce, rec }
        const pv =
          rec.scheduled_price_version_id === null ? inForce : yield* version(merchantId, rec.scheduled_price_version_id)
        const from = rec.subscription.cycle_index + 1
        const later = rec.discounts.filter((t) => t.first_cycle !== null && t.first_cycle > from)
        let kept = rec.discounts.filter((t) => !later.includes(t))
        let ends = false
        for (const product of new Set([pv.product_id, ...rec.extra_items.map((x) => x.version.product_id)])) {
          const scope = yield* Discounts.scopeOn(storage, merchantId, kept, product)
          if (scope.ending.length > 0) [kept, ends] = [scope.kept, true]
        }
        return {
          inForce,
          pv,
          rec: ends ? { ...rec, discounts: rec.discounts.filter((t) => kept.includes(t) || later.includes(t)) } : rec
        }
      })

    /** The outbox events of a schedule's step, in the renewal's transaction. */
    const scheduleEvents = (merchantId: string, stepped: ReturnType<typeof RenewalPlan.scheduleStep>, at: number) =>
      stepped.schedule === null
        ? Effect.void
        : emitAll(storage, stepped.events, {
            merchant_id: merchantId,
            business_id: stepped.schedule.id,
            schema: Schedule.SubscriptionSchedule,
            data: stepped.schedule,
            at
          })

    /** Renews one subscription whose period ended: bills the next cycle once, charges it, advances. */
    const renew = Effect.fn("Renewals.renew")(function* (
      merchantId: string,
      subscriptionId: string,
      options: { readonly force?: boolean } = {}
    ) {
      const merchant = yield* merchants.get(merchantId)
      const prepared = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          let rec = sv.value
          const s = rec.subscription
          const decision = RenewalPlan.decide(rec, at, options.force ?? false)
          switch (decision._tag) {
            case "NotLive":
            case "NotDue":
              return Option.none()
            case "CancelAtPeriodEnd":
            case "TermCompleted": {
              const ended = decision._tag === "CancelAtPeriodEnd"
              // the schedule ends with the subscription: completed by its own end, else canceled
              const stepped = RenewalPlan.scheduleStep(rec, at, true)
              const bySchedule = stepped.schedule?.status === "completed" && !s.cancel_at_period_end
              const moved = Result.getOrThrow(
                Subscription.move(s, ended ? "cancel" : "term_completed", {
                  cancel_at: dt(at),
                  next_invoice_date: null,
                  cancel_reason: ended
                    ? (s.cancel_reason ?? (bySchedule ? "schedule_completed" : "cancellation_requested"))
                    : "term_completed"
                })
              )
              // pending proration lines no invoice will bill (docs/proration.md)
              rec = ChangeCommit.endedWithPending({ ...stepped.rec, subscription: moved.value })
              // the last period's usage, which no renewal will bill: on a final invoice
              const end = s.current_period_end !== null ? Math.min(msOf(s.current_period_end), at) : at
              const base = yield* version(merchantId, s.price_version_id)
              const metered = yield* MetricUsage.ofPeriod(storage)(merchantId, sv.value, end)
              const usage = [
                ...KeptUsage.finalUsageLines(sv.value, base, end),
                ...MetricUsage.used(metered),
                // what progressive invoices billed of the period already (issue 35)
                ...(yield* ProgressiveBilling.deductions(storage)(merchant, sv.value, at, true))
              ]
              const final = yield* finalInvoice(merchant, rec, at, { usage, base })
              rec = final.next
              yield* saveSub(rec, sv.version, at, final.invoiceId ? { sourceId: final.invoiceId } : undefined)
              yield* subEvents(merchantId, rec, moved.events, at)
              yield* scheduleEvents(merchantId, stepped, at)
              return Option.map(final.tradeToCharge, (tradeId) => ({
                tradeId,
                token: rec.payment_token!,
                trial: false
              }))
            }
            case "Bill":
              break
          }
          // an item set waiting for this cycle (next_cycle), then a schedule's phase starting with
          // it: the cycle's items (the base item and the others)
          const pendingStep = ItemRules.pendingItemsStep(rec, s.cycle_index + 1)
          const extras = yield* PhaseItems.resolve(pendingStep, at, (id) => version(merchantId, id))
          const stepped = RenewalPlan.scheduleStep(pendingStep, at, false, extras)
          rec = stepped.rec
          // an item's scheduled version (a catalog migration's) changes the price as the base item's does
          const changedPrice =
            rec.scheduled_price_version_id !== null ||
            rec.extra_items.some((x) => (x.scheduled_version ?? null) !== null)
          const prices = yield* pricesOf(merchantId, rec, extras !== undefined)
          const { inForce, pv } = prices
          rec = prices.rec
          const existing = (yield* Effect.orDie(
            invoices.list(merchantId, {
              limit: 100,
              filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
            })
          )).list
          // the invoice items pending on the subscription: lines of this invoice, billed once
          const pendingItems = yield* PendingItems.pendingOn(storage, merchantId, subscriptionId)
          // the items billed by a billable metric: their metrics' values over the period that ended
          const metered = yield* MetricUsage.ofPeriod(storage)(merchantId, sv.value)
          const planned = RenewalPlan.bill(
            rec,
            inForce,
            pv,
            existing.map((i) => ({ cycle_index: i.cycle_index, invoice_type: i.invoice_type })),
            // the ended period's usage is rated at the items in force during it
            sv.value,
            InvoiceItem.linesOf(pendingItems),
            [
              ...metered.map((c) => c.line),
              // what progressive invoices billed of the period already (issue 35)
              ...(yield* ProgressiveBilling.deductions(storage)(merchant, sv.value, at, true))
            ]
          )
          if (Result.isFailure(planned)) {
            // Already billed (a retried or concurrent run): resume its charge if still pending.
            const billed = existing.find(
              (i) => i.cycle_index === planned.failure.cycle_index && i.invoice_type === "renewal"
            )
            return billed && billed.biz_status === "pending" && billed.trade_id !== null && rec.payment_token !== null
              ? Option.some({ tradeId: billed.trade_id, token: rec.payment_token, trial: s.status === "trial" })
              : Option.none()
          }
          let b = planned.success
          let billed = yield* taxed_(merchantId, rec, b)
          // still charging after its own share: the customer's other credit first (SharedCredit)
          let expected = sv.version
          const pulled = yield* SharedCredit.pull(storage, {
            merchantId,
            holder: sv.value,
            version: expected,
            wanted: billed.total,
            // the renewal's scheduled instant (run early when forced, late when the worker lags):
            // holders scheduled by then keep theirs — the order of the schedule, not of the worker
            at: s.next_invoice_date === null ? at : msOf(s.next_invoice_date),
            minimum: yield* Charges.minimumFor(gateway, merchantId, rec.currency)
          })
          if (pulled !== undefined) {
            expected = pulled.version
            rec = { ...rec, subscription: withCredit(rec.subscription, pulled.rec.subscription.credit_balance) }
            b = { ...b, credit: Money.make(b.credit.amount + pulled.taken.amount, b.credit.currency) }
            billed = yield* taxed_(merchantId, rec, b)
          }
          // under the processor's minimum charge: not charged, carried to the next invoice
          const carried = (yield* underMinimum(gateway, merchantId, billed.total))
            ? Invoicing.carry(billed, CARRIED)
            : undefined
          const taxed = carried?.draft ?? billed
          const advanced = RenewalPlan.advance(rec, pv, b, taxed, at, decision.continuous)
          const { periodEnd } = advanced
          const next = carried ? withDebit(advanced.next, carried.carried) : advanced.next
          /**
           * The cycle's invoice (a draft or issued) inserted with the pending items it bills marked
           * `invoiced` by it — the one place both paths bill them, so an item is billed once (a
           * voided draft gives them back: `InvoiceActions.voidInvoice`).
           */
          const insertBilling = (invoice: Invoice.Invoice) =>
            Effect.gen(function* () {
              yield* invoices
                .insert(invoice)
                // another writer billed this cycle between our read and this insert (a concurrent
                // renewal): nothing was written here; the caller may read again and retry
                .pipe(
                  Effect.catchTag("UniqueViolation", () =>
                    Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: subscriptionId }))
                  )
                )
              yield* PendingItems.markInvoiced(
                storage,
                merchantId,
                pendingItems.filter((i) => i.currency === rec.currency),
                invoice.invoice_id
              )
            })
          if (merchant.invoice_draft_grace_seconds > 0) {
            // the merchant's grace period: the cycle advances, its invoice waits as a draft
            // (unnumbered, uncharged) that the worker finalises at the end of it (InvoiceActions);
            // it shows the collection in force now (finalising re-reads it: that one wins)
            const finalizesAt = at + merchant.invoice_draft_grace_seconds * 1000
            const holder = Option.getOrUndefined(yield* Effect.orDie(customers.get(merchantId, s.customer_id)))?.value
            const inForce = Collection.effective(rec.collection ?? null, holder?.collection ?? null)
            const drafted = yield* renewalInvoice({
              merchantId,
              subscription: s,
              rec,
              next,
              periodEnd,
              pv,
              draft: taxed,
              trade: null,
              at,
              asDraft: true
            })
            const draft = new Invoice.Invoice(
              {
                ...drafted,
                collection_method: inForce.collection_method,
                automatically_finalizes_at: dt(finalizesAt)
              },
              { disableChecks: true }
            )
            yield* insertBilling(draft)
            yield* saveSub(next, expected, at)
            if (changedPrice) yield* subEvents(merchantId, next, ["v2.subscription.price_changed"], at)
            yield* scheduleEvents(merchantId, stepped, at)
            if (periodEnd !== null) yield* schedule(merchant, "renewal", subscriptionId, periodEnd)
            yield* schedule(merchant, "invoice_finalize", draft.invoice_id, finalizesAt)
            return Option.none()
          }
          const trade = taxed.total.amount > 0n ? yield* renewalTrade(merchant, s, taxed, at) : null
          // sent, not charged: the subscription's collection setting, else its customer's
          const customer = Option.getOrUndefined(yield* Effect.orDie(customers.get(merchantId, s.customer_id)))?.value
          const collection = Collection.effective(rec.collection ?? null, customer?.collection ?? null)
          const inv = yield* renewalInvoice({
            merchantId,
            subscription: s,
            rec,
            next,
            periodEnd,
            pv,
            draft: taxed,
            trade,
            at,
            collection
          })
          const issued = yield* documents.issueOne(merchant, inv)
          yield* insertBilling(issued)
          // a zero-amount renewal of a trial also ends the trial
          rec =
            trade === null && s.status === "trial"
              ? { ...next, subscription: Lifecycle.must(Subscription.move(next.subscription, "renewal_succeeded")) }
              : next
          yield* saveSub(rec, expected, at, { sourceId: inv.invoice_id })
          if (changedPrice) yield* subEvents(merchantId, rec, ["v2.subscription.price_changed"], at)
          yield* scheduleEvents(merchantId, stepped, at)
          if (periodEnd !== null) yield* schedule(merchant, "renewal", subscriptionId, periodEnd)
          if (trade !== null && issued.collection_method === "send_invoice" && issued.due_date !== null) {
            // sent: open and numbered, its trade waiting for the customer's card on the invoice's
            // page; emailed (`v2.invoice.sent`), and looked at again on its due date
            yield* SentInvoices.send(storage, merchant, { trade, invoice: issued, subscriptionId, at })
            // a sent renewal after a trial ends the trial (the customer is billed from now on)
            if (rec.subscription.status === "trial") {
              const v = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
              yield* saveSub(
                {
                  ...v.value,
                  subscription: Lifecycle.must(Subscription.move(v.value.subscription, "renewal_succeeded"))
                },
                v.version,
                at
              )
            }
            return Option.none()
          }
          if (trade === null) {
            yield* emit(storage, {
              merchant_id: merchantId,
              type: "v2.invoice.paid",
              business_id: inv.invoice_id,
              schema: Invoice.Invoice,
              data: inv,
              at
            })
            return Option.none()
          }
          yield* submitTrade(storage, { trade, invoice_id: inv.invoice_id, subscription_id: subscriptionId, at })
          if (rec.payment_token === null) return Option.none()
          // a durable intent: if this process dies before the charge, a worker makes it
          yield* schedule(merchant, "charge", trade.trade_id, at)
          return Option.some({
            tradeId: trade.trade_id,
            token: rec.payment_token,
            trial: rec.subscription.status === "trial"
          })
        })
      )
      if (Option.isNone(prepared)) return Option.none<Payments.PaymentResult>()
      const result = yield* charges.chargeInvoiceTrade(merchantId, prepared.value.tradeId, prepared.value.token)
      // a successful renewal after a trial ends the trial
      if (result.status === "succeeded" && prepared.value.trial)
        yield* endTrialAfterPayment(storage, merchant, subscriptionId)
      return Option.some(result)
    })

    const trialNotice = Effect.fn("Renewals.trialNotice")(function* (merchantId: string, subscriptionId: string) {
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const merchant = yield* merchants.get(merchantId)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          if (sv.value.subscription.status !== "trial") return
          const moved = Result.getOrThrow(Subscription.move(sv.value.subscription, "trial_expiring_notice"))
          yield* subEvents(merchantId, sv.value, moved.events, yield* nowOf(merchant))
        })
      )
    })

    /**
     * 23 hours after a first payment's decline (the contract's incomplete expiry): the first
     * payment ends as at its session's expiry (`Reconciliation.expireFirstPayment`: trade closed,
     * subscription canceled with cancel_reason `incomplete_expired`, invoice voided, session
     * expired), unless it was paid meanwhile.
     */
    const expireIncomplete = Effect.fn("Renewals.expireIncomplete")(function* (
      merchantId: string,
      subscriptionId: string
    ) {
      const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )
      const status = sv.value.subscription.status
      const tradeId = sv.value.subscription.source_trade_id
      if ((status !== "incomplete" && status !== "init") || tradeId === null) return
      yield* reconciliation.expireFirstPayment(merchantId, tradeId)
    })

    /**
     * The invoice the subscription's next renewal will issue if nothing changes before it (none
     * when it will not renew: not trial or active, canceling at the period's end, or a fixed term
     * ending). The renewal's own computation ({@link RenewalPlan.bill} and the tax step), run
     * without writing anything.
     */
    const upcoming = Effect.fn("Renewals.upcoming")(function* (merchantId: string, subscriptionId: string) {
      yield* merchants.get(merchantId)
      const sv = yield* Effect.flatMap(Effect.orDie(subs.get(merchantId, subscriptionId)), (o) =>
        must(o, "subscription", subscriptionId)
      )
      return yield* upcomingOf(merchantId, sv.value)
    })

    /**
     * {@link upcoming} of a record as given (not read from storage): what its next renewal would
     * bill. A catalog migration's preview asks it of the record as it is and as it would be with
     * the new version scheduled.
     */
    const upcomingOf = Effect.fn("Renewals.upcomingOf")(function* (
      merchantId: string,
      stored: Entities.SubscriptionRecord
    ) {
      const s = stored.subscription
      if (s.next_invoice_date === null) return Option.none<Invoice.UpcomingInvoice>()
      const due = msOf(s.next_invoice_date)
      const decision = RenewalPlan.decide(stored, due, true)
      if (decision._tag !== "Bill") return Option.none<Invoice.UpcomingInvoice>()
      // the next phase of a schedule when the next cycle starts one
      const pendingStep = ItemRules.pendingItemsStep(stored, s.cycle_index + 1)
      const extras = yield* PhaseItems.resolve(pendingStep, due, (id) => version(merchantId, id))
      const { inForce, pv, rec } = yield* pricesOf(
        merchantId,
        RenewalPlan.scheduleStep(pendingStep, due, false, extras).rec,
        extras !== undefined
      )
      const pendingItems = yield* PendingItems.pendingOn(storage, merchantId, s.id)
      const metered = yield* MetricUsage.ofPeriod(storage)(merchantId, stored)
      const planned = RenewalPlan.bill(rec, inForce, pv, [], stored, InvoiceItem.linesOf(pendingItems), [
        ...metered.map((c) => c.line),
        ...(yield* ProgressiveBilling.deductions(storage)(yield* merchants.get(merchantId), stored, due, false))
      ])
      if (Result.isFailure(planned)) return Option.none<Invoice.UpcomingInvoice>()
      let b = planned.success
      let taxed = yield* taxed_(merchantId, rec, b)
      // as `renew` does: what its own share leaves to charge, from the customer's other credit
      if (taxed.total.amount > 0n) {
        const from = yield* SharedCredit.available(storage, {
          merchantId,
          customerId: s.customer_id,
          currency: rec.currency,
          holder: stored,
          at: due
        })
        const taken = SharedCredit.capped(
          from.amount,
          taxed.total.amount,
          yield* Charges.minimumFor(gateway, merchantId, rec.currency)
        )
        if (taken > 0n) {
          b = { ...b, credit: Money.make(b.credit.amount + taken, b.credit.currency) }
          taxed = yield* taxed_(merchantId, rec, b)
        }
      }
      const { next, periodEnd } = RenewalPlan.advance(rec, pv, b, taxed, due, decision.continuous)
      const periods = renewalPeriods(rec, next, periodEnd)
      return Option.some(
        new Invoice.UpcomingInvoice(
          {
            subscription_id: s.id,
            customer_id: s.customer_id,
            price_id: pv.id,
            invoice_type: taxed.invoice_type,
            cycle_index: taxed.cycle_index,
            invoice_date: s.next_invoice_date,
            currency: taxed.currency,
            discount_amount: Money.format(
              Money.make(
                taxed.discounts.reduce((sum, d) => sum + d.amount.amount, 0n),
                taxed.currency
              )
            ),
            tax_amount: Money.format(taxed.tax),
            credit_applied: Money.format(taxed.creditApplied),
            amount: Money.format(taxed.total),
            ...documentOf(taxed, periods.period, periods.usagePeriod),
            subtotal: Money.format(taxed.subtotal)
          },
          { disableChecks: true }
        )
      )
    })

    return { renew, trialNotice, expireIncomplete, upcoming, upcomingOf } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
