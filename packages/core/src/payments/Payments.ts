/**
 * Payments: applying what the gateway answered to a trade and everything that hangs off it — the
 * invoice, the subscription (its first period, a recovery from dunning, a decline that starts or
 * ends dunning through {@link Declines}), the checkout session.
 *
 * A charge is made between two transactions: the caller records the trade as `processing`, the
 * gateway is called with the trade id (+ attempt) as idempotency key, and {@link Payments}'
 * `applyOutcome` records the answer. A crash in between leaves a `processing` trade that
 * `Reconciliation.reconcileTrade` (a scheduled work item) resolves by asking the gateway, so
 * nothing is charged twice. Off-session charges are made by `Charges`; new trades are built and
 * submitted with `TradeStore`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as BillingAnchor from "../subscriptions/BillingAnchor.js"
import * as CheckoutSession from "../checkout/CheckoutSession.js"
import { filledByPayer } from "../customers/Customers.js"
import * as Entities from "../kernel/Entities.js"
import type * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import { dt, emit, emitAll, laneOf, msOf, nowOf } from "../kernel/ServiceSupport.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import { scheduleOf } from "../subscriptions/SubscriptionTerms.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { isVersionConflict, must } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import type * as Ports from "../kernel/Ports.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Declines from "./Declines.js"
import * as Trade from "./Trade.js"
import { settledRecord, tradeSucceeded } from "./TradeStore.js"

/** A trade waiting for its payer (3-D Secure) is asked about again after this many reconcile delays. */
const WAITING_RECHECKS = 5

/**
 * The result of paying a session (or of any charge the engine makes).
 *
 * @since 0.1.0
 */
export interface PaymentResult {
  /**
   * `unavailable`: the processor could not take the charge (outage, rate limit, the merchant's
   * keys): nothing was charged, it is not a decline (`error.code` is the reason).
   */
  readonly status: "succeeded" | "requires_action" | "failed" | "processing" | "unavailable"
  readonly trade: Trade.Trade
  readonly subscription: Option.Option<Subscription.Subscription>
  readonly redirect_url: Option.Option<string>
  readonly error: Option.Option<{ readonly code: string; readonly message: string }>
}

/**
 * How long an off-session charge the processor could not take waits before it is made again,
 * given how long the processor has been unavailable to it: as long again (a doubling backoff),
 * at least a minute, at most an hour.
 *
 * @since 0.1.0
 */
export const unavailableBackoff = (unavailableForMs: number): number =>
  Math.min(Math.max(unavailableForMs, 60_000), 3_600_000)

/**
 * The payments service.
 *
 * @since 0.1.0
 */
export class Payments extends Context.Service<Payments>()("@recur/core/Payments", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const declines = yield* Declines.Declines
    const sessions = storage.repository(Entities.checkoutSession)
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const customers = storage.repository(Entities.customer)
    const { saveSub, schedule, subEvents, version } = writes(storage)
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, settings)

    /** Starts a subscription's first period after its first payment. */
    const startSubscription = (
      merchant: Merchant.Merchant,
      rec: Entities.SubscriptionRecord,
      at: number,
      token: string | null,
      card: Entities.PaymentMethod | null
    ) =>
      Effect.gen(function* () {
        const pv = yield* version(merchant.merchant_id, rec.subscription.price_version_id)
        const payment_method = card ?? rec.payment_method
        const withTrial = rec.trial_end !== null
        const trigger = withTrial
          ? ("first_payment_succeeded_with_trial" as const)
          : ("first_payment_succeeded" as const)
        let next: Entities.SubscriptionRecord
        let events: ReadonlyArray<Lifecycle.EventType>
        if (withTrial) {
          const end = rec.trial_end!
          const moved = Result.getOrThrow(
            Subscription.move(rec.subscription, trigger, {
              current_period_start: dt(at),
              current_period_end: dt(end),
              next_invoice_date: dt(end)
            })
          )
          next = {
            ...rec,
            anchor: end,
            anchor_cycle: 1,
            payment_token: token,
            payment_method,
            subscription: moved.value
          }
          events = moved.events
          yield* schedule(merchant, "renewal", rec.subscription.id, end)
          if (end - settings.trialNoticeMs > at)
            yield* schedule(merchant, "trial_notice", rec.subscription.id, end - settings.trialNoticeMs)
        } else if (BillingAnchor.inFirstPeriod(rec)) {
          // a chosen anchor: the short first period ends on it, then periods run anchor to anchor
          const end = rec.anchor!
          const moved = Result.getOrThrow(
            Subscription.move(rec.subscription, trigger, {
              current_period_start: dt(at),
              current_period_end: dt(end),
              next_invoice_date: dt(end)
            })
          )
          next = { ...rec, payment_token: token, payment_method, subscription: moved.value }
          events = moved.events
          yield* schedule(merchant, "renewal", rec.subscription.id, end)
        } else {
          const period = BillingPeriod.period(scheduleOf({ ...rec, anchor: at }, pv), 0)
          const moved = Result.getOrThrow(
            Subscription.move(rec.subscription, trigger, {
              current_period_start: dt(at),
              current_period_end: Option.match(period, { onNone: () => null, onSome: (p) => dt(p.end) }),
              next_invoice_date: Option.match(period, { onNone: () => null, onSome: (p) => dt(p.end) })
            })
          )
          next = {
            ...rec,
            anchor: at,
            anchor_cycle: 0,
            payment_token: token,
            payment_method,
            subscription: moved.value
          }
          events = moved.events
          if (Option.isSome(period)) yield* schedule(merchant, "renewal", rec.subscription.id, period.value.end)
        }
        return { next, events }
      })

    /**
     * An off-session invoice charge the processor refused as under its minimum charge (Stripe's
     * `amount_too_small` from an account settling in another currency: its minimum is the
     * settlement currency's, at the day's rate, which `minimumCharge` cannot know) is settled as
     * an invoice under `minimumCharge` is at billing: the invoice is paid with nothing charged, its
     * amount becomes a debit on the subscription's balance that the next invoice collects (its
     * `balance` line) — a canceled subscription's final invoice has no next one: the debit stays
     * on its balance as the customer's debt —, a trial ends as after any paid renewal. The trade closes
     * (`closed_reason` `below_minimum`, its `last_payment_error` the processor's code); never
     * dunned, never tried again. Told by `v2.invoice.paid` and a warning log line
     * (`event=recur.payment.carried`). Answers the closed trade and the subscription.
     */
    const carryBelowMinimum = (
      merchant: Merchant.Merchant,
      tv: Store.Versioned<Entities.TradeRecord>,
      subV: Store.Versioned<Entities.SubscriptionRecord>,
      invV: Store.Versioned<Invoice.Invoice>,
      outcome: Ports.UnavailableReason,
      at: number
    ) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        const waiting = Lifecycle.must(
          Trade.move(tv.value.trade, "processor_unavailable", {
            next_action: null,
            last_payment_error: new Trade.LastPaymentError({ code: outcome.code, message: outcome.message })
          })
        )
        const closed = Lifecycle.must(
          Trade.move(waiting, "close", { closed_at: dt(at), closed_reason: "below_minimum" })
        )
        yield* Effect.orDie(trades.update({ ...settledRecord(tv.value), trade: closed }, tv.version))
        const moved = Lifecycle.must(Invoice.move(invV.value, "paid", { paid_at: dt(at) }))
        const paid = Invoice.isIssued(moved) ? moved : yield* documents.issueOne(merchant, moved)
        yield* Effect.orDie(invoices.update(paid, invV.version))
        yield* emit(storage, {
          merchant_id: merchantId,
          type: "v2.invoice.paid",
          business_id: paid.invoice_id,
          schema: Invoice.Invoice,
          data: paid,
          at
        })
        const carried = Result.getOrThrow(Money.parse(closed.amount, closed.currency))
        const credit = Result.getOrThrow(
          Money.parse(subV.value.subscription.credit_balance, carried.currency, { allowNegative: true })
        )
        const before = subV.value.subscription
        const debited = new Subscription.Subscription(
          { ...before, credit_balance: Money.format(Money.make(credit.amount - carried.amount, carried.currency)) },
          { disableChecks: true }
        )
        // a past-due subscription's dunning retry recovers it as a paid retry does
        const recovered = debited.status === "past_due"
        const sub: Entities.SubscriptionRecord = {
          ...subV.value,
          ...(recovered ? { dunning_attempts: 0 } : {}),
          subscription:
            debited.status === "trial"
              ? Lifecycle.must(Subscription.move(debited, "renewal_succeeded"))
              : recovered
                ? Lifecycle.must(Subscription.move(debited, "retry_succeeded"))
                : debited
        }
        yield* saveSub(sub, subV.version, at, {
          sourceType: "carried_minimum",
          sourceId: paid.invoice_id,
          description: "an amount under the processor's minimum, carried to the next invoice"
        })
        if (recovered) {
          yield* storage.workQueue.cancel(merchantId, "dunning", sub.subscription.id)
          const nextDate = sub.subscription.next_invoice_date
          if (nextDate !== null) yield* schedule(merchant, "renewal", sub.subscription.id, Math.max(msOf(nextDate), at))
        }
        yield* Effect.logWarning(
          `the processor refused trade ${closed.trade_id}'s ${closed.amount} ${closed.currency} as under its minimum charge (${outcome.code}); its invoice is paid and the amount carried to the next invoice`
        ).pipe(
          Effect.annotateLogs({
            event: "recur.payment.carried",
            merchant_id: merchantId,
            trade_id: closed.trade_id,
            invoice_id: paid.invoice_id,
            code: outcome.code
          })
        )
        return { trade: closed, sub }
      })

    /**
     * Applies a gateway outcome to a trade and everything that hangs off it. `options.onSession`:
     * the charge was made by the payer on an invoice's page (`InvoicePayments.payInvoice`) — a
     * processor that could not take it leaves a sent, written-off or one-off invoice payable
     * again on its page, never charged off-session with a card on file.
     */
    const applyOutcome = Effect.fn("Payments.applyOutcome")(function* (
      merchantId: string,
      tradeId: string,
      outcome: Ports.ChargeOutcome,
      options?: { readonly onSession?: boolean }
    ): Effect.fn.Return<PaymentResult, Errors.NotFound> {
      const merchant = yield* Effect.orDie(merchants.get(merchantId))
      return yield* storage
        .withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => must(o, "trade", tradeId))
            const tr = tv.value
            let trade = tr.trade
            const subV = tr.subscription_id
              ? Option.getOrUndefined(yield* subs.get(merchantId, tr.subscription_id))
              : undefined
            const invV = tr.invoice_id
              ? Option.getOrUndefined(yield* invoices.get(merchantId, tr.invoice_id))
              : undefined
            let sub = subV?.value
            const result = (status: PaymentResult["status"], extra: Partial<PaymentResult> = {}): PaymentResult => ({
              status,
              trade,
              subscription: Option.fromNullishOr(sub?.subscription),
              redirect_url: Option.none(),
              error: Option.none(),
              ...extra
            })
            // the processor's reference of the charge this outcome names, kept on the trade so that
            // the gateway reads it by id from then on (never a search, never a second create)
            const named = outcome._tag !== "Unknown" && outcome._tag !== "Unavailable" ? outcome.reference : undefined
            const known = tr.charges ?? []
            const rec: Entities.TradeRecord =
              named !== undefined && !known.some((c) => c.reference === named)
                ? { ...tr, charges: [...known, { attempt: tr.attempts, reference: named }] }
                : tr
            if (trade.trade_status === "succeeded") return result("succeeded")
            // a charge recorded as failed that the processor took after all (a late confirmation,
            // a webhook): the money was taken, so the trade is paid — never left failed
            const late = trade.trade_status === "payment_failed" && outcome._tag === "Succeeded"
            if (trade.trade_status !== "processing" && !late)
              return result(trade.trade_status === "payment_failed" ? "failed" : "processing")
            if (outcome._tag !== "RequiresAction") {
              yield* storage.workQueue.cancel(merchantId, "charge", tradeId)
              if (outcome._tag !== "Unknown") yield* storage.workQueue.cancel(merchantId, "reconcile", tradeId)
            }
            switch (outcome._tag) {
              case "Unavailable": {
                // refused as under the processor's minimum: carried to the next invoice, settled
                // — a canceled subscription's (its final invoice) too: no later invoice collects
                // it, the amount stays on the balance as the customer's debt, never tried again
                if (
                  outcome.below_minimum === true &&
                  subV !== undefined &&
                  invV !== undefined &&
                  invV.value.biz_status === "pending" &&
                  subV.value.payment_token !== null &&
                  (subV.value.subscription.status === "active" ||
                    subV.value.subscription.status === "trial" ||
                    subV.value.subscription.status === "past_due" ||
                    subV.value.subscription.status === "canceled")
                ) {
                  const carried = yield* carryBelowMinimum(merchant, tv, subV, invV, outcome, at)
                  trade = carried.trade
                  sub = carried.sub
                  return result("succeeded")
                }
                // nothing was charged and the card was not asked: not a decline, no dunning. The
                // trade waits for a payment again; an off-session charge (renewal, retry, change)
                // is made again by the worker with backoff, a payer on the page tries again
                const since = tr.unavailable_since ?? at
                trade = Lifecycle.must(
                  Trade.move(trade, "processor_unavailable", {
                    next_action: null,
                    last_payment_error: new Trade.LastPaymentError({ code: outcome.code, message: outcome.message })
                  })
                )
                yield* Effect.orDie(trades.update({ ...tr, trade, unavailable_since: since }, tv.version))
                // a sent or written-off invoice is paid only on its page (a card on file is never
                // charged for it), nor is a one-off invoice its payer pays there: payable again
                const pageOnly =
                  invV !== undefined &&
                  (invV.value.collection_method === "send_invoice" ||
                    invV.value.biz_status === "uncollectible" ||
                    (options?.onSession === true && Invoice.isStandalone(invV.value.invoice_type)))
                const offSession =
                  !pageOnly &&
                  ((sub !== undefined &&
                    sub.payment_token !== null &&
                    sub.subscription.status !== "init" &&
                    sub.subscription.status !== "incomplete") ||
                    // a one-off invoice's charge, made with the card on file (`Charges.chargePending`)
                    (sub === undefined &&
                      invV !== undefined &&
                      Invoice.isStandalone(invV.value.invoice_type) &&
                      invV.value.biz_status === "pending"))
                if (offSession) yield* schedule(merchant, "charge", tradeId, at + unavailableBackoff(at - since))
                yield* Effect.logWarning(
                  `the processor could not take the charge of trade ${tradeId} (${outcome.reason}: ${outcome.code}); nothing was charged${offSession ? ", tried again later" : ""}`
                ).pipe(
                  Effect.annotateLogs({
                    event: "recur.payment.processor_unavailable",
                    merchant_id: merchantId,
                    trade_id: tradeId,
                    reason: outcome.reason,
                    code: outcome.code
                  })
                )
                // the operator is told once per run of unavailability, not at every retry
                if (tr.unavailable_since === undefined)
                  yield* emit(storage, {
                    merchant_id: merchantId,
                    type: "v2.trades.processor_unavailable",
                    business_id: tradeId,
                    schema: Trade.Trade,
                    data: trade,
                    at
                  })
                return result("unavailable", {
                  error: Option.some({ code: outcome.reason, message: outcome.message })
                })
              }
              case "Unknown": {
                yield* storage.workQueue.schedule({
                  lane: laneOf(merchant),
                  merchant_id: merchantId,
                  kind: "reconcile",
                  subject_id: tradeId,
                  due_at: at + settings.reconcileAfterMs
                })
                return result("processing")
              }
              case "RequiresAction": {
                trade = new Trade.Trade(
                  {
                    ...trade,
                    next_action: new Trade.NextAction({
                      type: "redirect_to_url",
                      redirect: { url: outcome.redirect_url },
                      client: { confirm_url: "", apple_pay_session: "" }
                    })
                  },
                  { disableChecks: true }
                )
                yield* Effect.orDie(trades.update({ ...rec, trade }, tv.version))
                // the payer may finish the challenge and never come back (and no webhook may
                // come): the worker asks again until it is decided or expires — after a few
                // minutes, then less and less often (half the trade's age), a handful of calls a day
                yield* storage.workQueue.schedule({
                  lane: laneOf(merchant),
                  merchant_id: merchantId,
                  kind: "reconcile",
                  subject_id: tradeId,
                  due_at:
                    at +
                    Math.max(
                      WAITING_RECHECKS * settings.reconcileAfterMs,
                      Math.floor((at - msOf(trade.created_at)) / 2)
                    )
                })
                return result("requires_action", { redirect_url: Option.some(outcome.redirect_url) })
              }
              case "Succeeded": {
                const token = Option.getOrNull(outcome.token)
                // the card the token charges, when the processor told its expiry (shown in the portal)
                const card: Entities.PaymentMethod | null =
                  token !== null && outcome.exp_month !== undefined && outcome.exp_year !== undefined
                    ? {
                        brand: outcome.brand,
                        last4: outcome.last4,
                        exp_month: outcome.exp_month,
                        exp_year: outcome.exp_year
                      }
                    : null
                trade = tradeSucceeded(trade, late ? "succeeded_late" : "succeeded", outcome, at)
                const { payer, ...paidRecord } = settledRecord(rec)
                yield* Effect.orDie(trades.update({ ...paidRecord, trade }, tv.version))
                // what the checkout's payer typed for the customer: kept now the payment succeeded
                if (payer !== undefined) {
                  const cv = Option.getOrUndefined(yield* Effect.orDie(customers.get(merchantId, trade.customer_id)))
                  const filled = cv !== undefined ? filledByPayer(cv.value, payer, at) : undefined
                  if (cv !== undefined && filled !== undefined)
                    yield* Effect.orDie(customers.update(filled, cv.version))
                }
                yield* emit(storage, {
                  merchant_id: merchantId,
                  type: "v2.trades.succeeded",
                  business_id: tradeId,
                  schema: Trade.Trade,
                  data: trade,
                  at
                })
                // a late success finds its invoice wherever the failure left it: paid when it still
                // can be (retrying, pending), else left as it is (the trade shows the money taken)
                // a sent invoice is open while its customer pays it on its page: charged, then paid
                const charged =
                  invV !== undefined &&
                  invV.value.biz_status === "open" &&
                  invV.value.collection_method === "send_invoice"
                    ? Lifecycle.must(Invoice.move(invV.value, "charge"))
                    : invV?.value
                // an invoice that can no longer be paid (voided, written off and paid by another
                // trade, already paid): left as it is, never a crash — the trade keeps the money
                // taken (its event) and the operator is told, to refund it
                const payable = charged === undefined || Result.isSuccess(Invoice.move(charged, "paid"))
                if (!payable && invV !== undefined)
                  yield* Effect.logWarning(
                    `trade ${tradeId} was charged ${trade.amount} ${trade.currency} for invoice ${invV.value.invoice_id}, which is ${invV.value.biz_status} and can no longer be paid: the money is kept on the trade, refund it`
                  ).pipe(
                    Effect.annotateLogs({
                      event: "recur.payment.success_on_closed_invoice",
                      merchant_id: merchantId,
                      trade_id: tradeId,
                      invoice_id: invV.value.invoice_id,
                      invoice_status: invV.value.biz_status
                    })
                  )
                if (invV && charged && payable) {
                  const moved = Lifecycle.must(Invoice.move(charged, "paid", { paid_at: dt(at) }))
                  // a checkout's first invoice becomes final as it is paid: it is issued now
                  // (numbered, its parties kept), so a declined or abandoned one takes no number
                  const paid = Invoice.isIssued(moved) ? moved : yield* documents.issueOne(merchant, moved)
                  yield* Effect.orDie(invoices.update(paid, invV.version))
                  yield* emit(storage, {
                    merchant_id: merchantId,
                    type: "v2.invoice.paid",
                    business_id: paid.invoice_id,
                    schema: Invoice.Invoice,
                    data: paid,
                    at
                  })
                }
                // a late success whose invoice had already failed for good leaves the subscription
                // where its end of dunning put it: the trade shows the money taken (its event)
                if (sub && subV && payable) {
                  if (sub.subscription.status === "init" || sub.subscription.status === "incomplete") {
                    const started = yield* startSubscription(merchant, sub, at, token, card)
                    sub = started.next
                    yield* saveSub(sub, subV.version, at)
                    yield* storage.workQueue.cancel(merchantId, "incomplete_expiry", sub.subscription.id)
                    yield* subEvents(merchantId, sub, started.events, at)
                  } else if (sub.subscription.status === "past_due" || sub.subscription.status === "unpaid") {
                    sub = {
                      ...sub,
                      dunning_attempts: 0,
                      payment_token: token ?? sub.payment_token,
                      payment_method: token !== null && token !== sub.payment_token ? card : sub.payment_method,
                      subscription: Lifecycle.must(Subscription.move(sub.subscription, "retry_succeeded"))
                    }
                    yield* saveSub(sub, subV.version, at)
                    yield* storage.workQueue.cancel(merchantId, "dunning", sub.subscription.id)
                    const nextDate = sub.subscription.next_invoice_date
                    if (nextDate !== null)
                      yield* schedule(merchant, "renewal", sub.subscription.id, Math.max(msOf(nextDate), at))
                  } else if (token !== null && token !== sub.payment_token) {
                    sub = { ...sub, payment_token: token, payment_method: card }
                    yield* saveSub(sub, subV.version, at)
                  }
                }
                if (trade.session_id !== null) {
                  const s = yield* sessions.get(merchantId, trade.session_id)
                  if (Option.isSome(s) && s.value.value.status === "open") {
                    yield* Effect.orDie(
                      sessions.update(
                        Lifecycle.must(CheckoutSession.move(s.value.value, "paid", { completed_at: dt(at) })),
                        s.value.version
                      )
                    )
                  }
                }
                return result("succeeded")
              }
              case "Failed": {
                const error = new Trade.LastPaymentError({
                  code: outcome.code,
                  message: outcome.message,
                  ...(outcome.decline_class !== undefined ? { decline_class: outcome.decline_class } : {})
                })
                trade = Lifecycle.must(
                  Trade.move(trade, "failed", { last_payment_error: error, next_action: null, txn_time: dt(at) })
                )
                yield* Effect.orDie(trades.update({ ...settledRecord(rec), trade }, tv.version))
                yield* emit(storage, {
                  merchant_id: merchantId,
                  type: "v2.trades.payment_failed",
                  business_id: tradeId,
                  schema: Trade.Trade,
                  data: trade,
                  at
                })
                // a sent invoice's declined card on its page: the customer is shown the decline and
                // may pay again; its dunning runs from its due date (`SentInvoices.due`), not here
                const sent = invV?.value.collection_method === "send_invoice" && invV.value.biz_status === "open"
                // a written-off invoice paid on its page and declined: still uncollectible, no dunning
                const writtenOff = invV?.value.biz_status === "uncollectible"
                if (sub && subV && !sent && !writtenOff) {
                  const declined = yield* declines.applyDecline(merchant, trade, subV, invV, outcome, at)
                  sub = declined.sub
                  trade = declined.trade
                } else if (invV !== undefined && Invoice.isStandalone(invV.value.invoice_type)) {
                  // a one-off invoice (no subscription, no dunning): failed, payable on its page
                  const failed = Invoice.move(invV.value, "charge_failed_final")
                  if (Result.isSuccess(failed)) {
                    yield* Effect.orDie(invoices.update(failed.success.value, invV.version))
                    yield* emitAll(storage, failed.success.events, {
                      merchant_id: merchantId,
                      business_id: invV.value.invoice_id,
                      schema: Invoice.Invoice,
                      data: failed.success.value,
                      at
                    })
                  }
                }
                return result("failed", { error: Option.some({ code: outcome.code, message: outcome.message }) })
              }
            }
          })
        )
        .pipe(
          // another applier (the reconcile worker, a concurrent pay) moved one of the records
          // first: apply again on what it wrote (a trade already decided is answered as it is)
          Effect.catchDefect((d) => (isVersionConflict(d) ? Effect.fail(d) : Effect.die(d))),
          Effect.retry({ while: isVersionConflict, times: 20 }),
          Effect.catchIf(isVersionConflict, Effect.die)
        )
    })

    return { applyOutcome } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
