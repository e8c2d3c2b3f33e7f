/**
 * Payments: charging a trade at the gateway and applying what the gateway answered to the
 * trade and everything that hangs off it — the invoice, the subscription (its first period, a
 * recovery from dunning, a failure that starts or ends dunning), the checkout session.
 *
 * A charge is made between two transactions: the caller records the trade as `processing`, the
 * gateway is called with the trade id (+ attempt) as idempotency key, and {@link Payments}'
 * `applyOutcome` records the answer. A crash in between leaves a `processing` trade that
 * `reconcileTrade` (a scheduled work item) resolves by asking the gateway, so nothing is
 * charged twice.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as CheckoutSession from "../checkout/CheckoutSession.js"
import * as DunningPolicy from "./DunningPolicy.js"
import * as Entities from "../kernel/Entities.js"
import type * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import { dt, emit, emitAll, laneOf, msOf, nowOf, type StorageService } from "../kernel/ServiceSupport.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import { scheduleOf } from "../subscriptions/SubscriptionTerms.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { isVersionConflict, must } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import { fmtMinor } from "../money/Money.js"
import * as Ports from "../kernel/Ports.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Trade from "./Trade.js"
import { Discounts, type Metadata } from "../kernel/Common.js"
import * as Ids from "../kernel/Ids.js"

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

/** A trade's record once the processor answered its charge: no longer waiting on an unavailable processor. */
const settledRecord = (tr: Entities.TradeRecord): Entities.TradeRecord => {
  const { unavailable_since: _, ...rest } = tr
  return rest
}

/**
 * A trade its charge paid: moved `succeeded` (or `succeeded_late`, after it had failed) at `at`
 * with the processor's transaction, the token it charged and the card it showed. The one update
 * `Payments.applyOutcome` and `RenewalBatches.renewMany` share.
 *
 * @since 0.1.0
 */
export const tradeSucceeded = (
  trade: Trade.Trade,
  event: "succeeded" | "succeeded_late",
  outcome: Extract<Ports.ChargeOutcome, { readonly _tag: "Succeeded" }>,
  at: number
): Trade.Trade =>
  Lifecycle.must(
    Trade.move(trade, event, {
      paid_at: dt(at),
      txn_time: dt(at),
      last_trans_id: outcome.transaction_id,
      payment_token: Option.getOrNull(outcome.token),
      payment_method: `${outcome.brand} •••• ${outcome.last4}`,
      next_action: null,
      last_payment_error: null
    })
  )

/**
 * The payments service.
 *
 * @since 0.1.0
 */
export class Payments extends Context.Service<Payments>()("@recur/core/Payments", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const gateway = yield* Ports.PaymentGateway
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const sessions = storage.repository(Entities.checkoutSession)
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
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
     * No charge of an invoice will be tried again: the invoice fails for good
     * (`v2.invoice.payment_failed`) and its trade closes with `reason`; answers the closed trade.
     */
    const giveUp = (
      merchantId: string,
      invV: Store.Versioned<Invoice.Invoice> | undefined,
      tradeId: string,
      reason: string,
      at: number
    ) =>
      Effect.gen(function* () {
        if (invV) {
          const failed = Lifecycle.must(
            Invoice.move(invV.value, invV.value.biz_status === "retrying" ? "retries_exhausted" : "charge_failed_final")
          )
          yield* Effect.orDie(invoices.update(failed, invV.version))
          yield* emit(storage, {
            merchant_id: merchantId,
            type: "v2.invoice.payment_failed",
            business_id: failed.invoice_id,
            schema: Invoice.Invoice,
            data: failed,
            at
          })
        }
        const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
        const closed = Lifecycle.must(Trade.move(tv.value.trade, "close", { closed_at: dt(at), closed_reason: reason }))
        yield* Effect.orDie(trades.update({ ...tv.value, trade: closed }, tv.version))
        return closed
      })

    /** A renewal charge failed: retry on the merchant's dunning schedule, or give up. */
    const dunningStep = (
      merchant: Merchant.Merchant,
      sub: Entities.SubscriptionRecord,
      subVersion: number,
      tr: Entities.TradeRecord,
      invV: Store.Versioned<Invoice.Invoice> | undefined,
      at: number
    ) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        const policy = DunningPolicy.policyOf(merchant, yield* Effect.service(DunningPolicy.DefaultPolicy))
        const step = DunningPolicy.decide(policy, {
          retriesDone: sub.dunning_attempts,
          pastDue: sub.subscription.status === "past_due",
          at
        })
        if (step._tag === "Retry") {
          if (step.first) {
            const moved = Result.getOrThrow(Subscription.move(sub.subscription, "renewal_failed"))
            const next = { ...sub, subscription: moved.value }
            yield* saveSub(next, subVersion, at)
            yield* subEvents(merchantId, next, moved.events, at)
          }
          if (invV && invV.value.biz_status === "pending") {
            yield* Effect.orDie(
              invoices.update(Lifecycle.must(Invoice.move(invV.value, "charge_failed_will_retry")), invV.version)
            )
          }
          yield* schedule(merchant, "dunning", sub.subscription.id, step.at)
          return
        }
        const canceled = step.finalState === "canceled"
        const moved = Result.getOrThrow(
          Subscription.move(
            sub.subscription,
            canceled ? "retries_exhausted_cancel" : "retries_exhausted",
            canceled ? { cancel_reason: "payment_failed", cancel_at: dt(at), next_invoice_date: null } : {}
          )
        )
        const next: Entities.SubscriptionRecord = { ...sub, subscription: moved.value }
        yield* saveSub(next, subVersion, at)
        yield* giveUp(merchantId, invV, tr.trade.trade_id, "retries_exhausted", at)
        yield* subEvents(merchantId, next, moved.events, at)
        yield* storage.workQueue.cancel(merchantId, "renewal", sub.subscription.id)
      })

    /**
     * An off-session charge of an invoice met `authentication_required`: the card's issuer wants
     * the customer (3-D Secure), so no off-session retry can succeed. The invoice waits for them
     * (`v2.invoice.payment_action_required`, with its hosted page, where they pay on session);
     * dunning keeps its schedule without charging (see `Dunning.retry`).
     */
    const actionRequired = (merchantId: string, invoiceId: string, at: number) =>
      Effect.gen(function* () {
        const iv = Option.getOrUndefined(yield* invoices.get(merchantId, invoiceId))
        if (iv === undefined) return
        const moved = Invoice.move(iv.value, "payment_action_required")
        if (Result.isFailure(moved)) return
        yield* Effect.orDie(invoices.update(moved.success.value, iv.version))
        yield* emitAll(storage, moved.success.events, {
          merchant_id: merchantId,
          business_id: invoiceId,
          schema: Invoice.Invoice,
          data: moved.success.value,
          at
        })
      })

    /**
     * A dunning retry of an invoice that waits for its customer's authentication
     * (`authentication_required` off session): the retry is counted and the merchant's schedule
     * goes on — the next retry, or the end (unpaid or canceled) — but nothing is charged off
     * session, where the issuer would only decline again.
     */
    const dunningWithoutCharge = Effect.fn("Payments.dunningWithoutCharge")(function* (
      merchantId: string,
      subscriptionId: string,
      tradeId: string
    ) {
      const merchant = yield* Effect.orDie(merchants.get(merchantId))
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const before = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
          if (before.value.subscription.status !== "past_due") return
          yield* saveSub({ ...before.value, dunning_attempts: before.value.dunning_attempts + 1 }, before.version, at)
          const sv = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
          const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
          const invV = tv.value.invoice_id
            ? Option.getOrUndefined(yield* invoices.get(merchantId, tv.value.invoice_id))
            : undefined
          yield* dunningStep(merchant, sv.value, sv.version, tv.value, invV, at)
        })
      )
    })

    /**
     * An off-session invoice charge the processor refused as under its minimum charge (Stripe's
     * `amount_too_small` from an account settling in another currency: its minimum is the
     * settlement currency's, at the day's rate, which `minimumCharge` cannot know) is settled as
     * an invoice under `minimumCharge` is at billing: the invoice is paid with nothing charged, its
     * amount becomes a debit on the subscription's balance that the next invoice collects (its
     * `balance` line), a trial ends as after any paid renewal. The trade closes
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
        yield* saveSub(sub, subV.version, at)
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

    /** Applies a gateway outcome to a trade and everything that hangs off it. */
    const applyOutcome = Effect.fn("Payments.applyOutcome")(function* (
      merchantId: string,
      tradeId: string,
      outcome: Ports.ChargeOutcome
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
                if (
                  outcome.below_minimum === true &&
                  subV !== undefined &&
                  invV !== undefined &&
                  invV.value.biz_status === "pending" &&
                  subV.value.payment_token !== null &&
                  (subV.value.subscription.status === "active" ||
                    subV.value.subscription.status === "trial" ||
                    subV.value.subscription.status === "past_due")
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
                const offSession =
                  sub !== undefined &&
                  sub.payment_token !== null &&
                  sub.subscription.status !== "init" &&
                  sub.subscription.status !== "incomplete"
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
                yield* Effect.orDie(trades.update({ ...settledRecord(rec), trade }, tv.version))
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
                const payable = !late || invV === undefined || Result.isSuccess(Invoice.move(invV.value, "paid"))
                if (invV && payable) {
                  const moved = Lifecycle.must(Invoice.move(invV.value, "paid", { paid_at: dt(at) }))
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
                const error = new Trade.LastPaymentError({ code: outcome.code, message: outcome.message })
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
                if (sub && subV) {
                  const status = sub.subscription.status
                  if (status === "init") {
                    sub = {
                      ...sub,
                      subscription: Lifecycle.must(Subscription.move(sub.subscription, "first_payment_failed"))
                    }
                    yield* saveSub(sub, subV.version, at)
                    yield* schedule(
                      merchant,
                      "incomplete_expiry",
                      sub.subscription.id,
                      msOf(sub.subscription.created_at) + settings.incompleteExpiryMs
                    )
                  } else if (status === "trial" || status === "active" || status === "past_due") {
                    yield* dunningStep(merchant, sub, subV.version, tr, invV, at)
                    if (outcome.code === "authentication_required" && invV)
                      yield* actionRequired(merchantId, invV.value.invoice_id, at)
                    sub = Option.getOrUndefined(
                      Option.map(yield* subs.get(merchantId, sub.subscription.id), (v) => v.value)
                    )
                    trade = Option.getOrThrow(yield* trades.get(merchantId, tradeId)).value.trade
                  } else if (status === "unpaid" && invV && invV.value.biz_status === "pending") {
                    // a late payment of an unpaid subscription's invoice failed: the invoice
                    // fails again, its trade closes, the subscription stays unpaid
                    trade = yield* giveUp(merchantId, invV, tradeId, "payment_failed", at)
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

    /**
     * Asks the gateway about a trade whose outcome is unknown and applies the answer. A trade
     * already decided (succeeded, failed, closed) is answered from the store: its outcome can no
     * longer change by asking, so the processor is never called for it.
     */
    const reconcileTrade = Effect.fn("Payments.reconcileTrade")(function* (merchantId: string, tradeId: string) {
      const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => must(o, "trade", tradeId))
      const status = tv.value.trade.trade_status
      // a failed trade is asked too: a charge the processor took after all is applied (the money
      // was taken); a succeeded or closed one is answered as it is
      const outcome =
        status === "processing" || status === "payment_failed"
          ? yield* gateway.retrieve(tradeId, referencesOf(tv.value))
          : // applyOutcome answers a decided trade as it is, whatever the outcome says
            Ports.ChargeOutcome.Unknown()
      return yield* applyOutcome(merchantId, tradeId, outcome)
    })

    /** What the engine knows of a trade's charges at the gateway (its attempt and their references). */
    const referencesOf = (tr: Entities.TradeRecord): Ports.ChargeReferences => ({
      attempt: tr.attempts,
      references: tr.charges ?? []
    })

    /** Charges an invoice's trade off-session with the saved token (the trade's current attempt). */
    const chargeInvoiceTrade = Effect.fn("Payments.chargeInvoiceTrade")(function* (
      merchantId: string,
      tradeId: string,
      token: string
    ) {
      const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => Effect.orDie(must(o, "trade", tradeId)))
      const t = tv.value.trade
      const outcome = yield* gateway.charge({
        trade_id: tradeId,
        attempt: tv.value.attempts,
        merchant_id: merchantId,
        amount: Result.getOrThrow(Money.parse(t.amount, t.currency)),
        source: { _tag: "Token", token },
        off_session: true,
        references: tv.value.charges ?? []
      })
      return yield* Effect.orDie(applyOutcome(merchantId, tradeId, outcome))
    })

    /** Makes a recorded but not yet made off-session charge (after a crash between the two transactions). */
    const chargePending = Effect.fn("Payments.chargePending")(function* (merchantId: string, tradeId: string) {
      const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => Effect.orDie(must(o, "trade", tradeId)))
      // a charge the processor could not take (`Unavailable`) waits in requires_payment_method
      const waiting =
        tv.value.trade.trade_status === "requires_payment_method" && tv.value.unavailable_since !== undefined
      if ((tv.value.trade.trade_status !== "processing" && !waiting) || tv.value.subscription_id === null)
        return Option.none<PaymentResult>()
      const sub = yield* Effect.flatMap(subs.get(merchantId, tv.value.subscription_id), (o) =>
        Effect.orDie(must(o, "subscription", tv.value.subscription_id!))
      )
      if (sub.value.payment_token === null) return Option.none<PaymentResult>()
      if (waiting) {
        // made again as a new attempt: the one the processor could not take charged nothing
        const resubmitted = yield* storage.withTransaction(
          Effect.gen(function* () {
            const now = Option.getOrThrow(yield* Effect.orDie(trades.get(merchantId, tradeId)))
            if (now.value.trade.trade_status !== "requires_payment_method") return false
            yield* Effect.orDie(
              trades.update(
                {
                  ...now.value,
                  attempts: now.value.attempts + 1,
                  trade: Lifecycle.must(Trade.move(now.value.trade, "submit_payment", { last_payment_error: null }))
                },
                now.version
              )
            )
            return true
          })
        )
        if (!resubmitted) return Option.none<PaymentResult>()
      }
      return Option.some(yield* chargeInvoiceTrade(merchantId, tradeId, sub.value.payment_token))
    })

    /**
     * The end of a first payment that was never made — a checkout declined and not retried, or a
     * 3-D Secure challenge left unanswered — when its checkout session expires, or 23 hours after
     * its subscription's first decline (`incomplete_expiry`), whichever comes first. A trade whose
     * outcome is still open is asked about first: a payment that did go through is recorded as
     * paid, one still unknown is asked about again later. Otherwise, in one transaction and
     * through the machines: the trade closes, the subscription ends (`canceled`, cancel_reason
     * `incomplete_expired`: `v2.subscription.canceled`), its first invoice — never issued, so
     * without a number — is voided (`v2.invoice.voided`) and the session expires. A no-op once
     * paid or ended.
     */
    const expireFirstPayment = Effect.fn("Payments.expireFirstPayment")(function* (
      merchantId: string,
      tradeId: string
    ) {
      const merchant = yield* Effect.orDie(merchants.get(merchantId))
      const before = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) =>
        Effect.orDie(must(o, "trade", tradeId))
      )
      if (before.value.trade.trade_status === "processing") {
        // a challenge still waiting is canceled at the gateway first, so the payer can no longer
        // pay a checkout that has ended; a payment that went through before is kept as paid
        const outcome = yield* (gateway.cancel ?? gateway.retrieve)(tradeId, referencesOf(before.value))
        if (outcome._tag === "Failed" || outcome._tag === "RequiresAction") return yield* end(merchant, tradeId)
        const applied = yield* Effect.orDie(applyOutcome(merchantId, tradeId, outcome))
        if (applied.status === "processing") {
          // the gateway does not know yet: ask again later, end nothing now
          yield* schedule(
            merchant,
            "first_payment_expiry",
            tradeId,
            (yield* nowOf(merchant)) + settings.reconcileAfterMs
          )
          return "undecided" as const
        }
        if (applied.status === "succeeded") return "paid" as const
      }
      return yield* end(merchant, tradeId)
    })

    /** Ends an unpaid first payment in one transaction (see {@link expireFirstPayment}). */
    const end = (merchant: Merchant.Merchant, tradeId: string) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const tv = Option.getOrThrow(yield* Effect.orDie(trades.get(merchantId, tradeId)))
            const tr = tv.value
            const status = tr.trade.trade_status
            if (status === "succeeded") return "paid" as const
            if (status !== "closed") {
              const trigger = status === "processing" ? "abandon" : "close"
              const closed = Lifecycle.must(
                Trade.move(tr.trade, trigger, { closed_at: dt(at), closed_reason: "expired", next_action: null })
              )
              yield* Effect.orDie(trades.update({ ...tr, trade: closed }, tv.version))
              yield* storage.workQueue.cancel(merchantId, "reconcile", tradeId)
              yield* storage.workQueue.cancel(merchantId, "charge", tradeId)
            }
            if (tr.subscription_id !== null) {
              const sv = Option.getOrThrow(yield* Effect.orDie(subs.get(merchantId, tr.subscription_id)))
              const st = sv.value.subscription.status
              if (st === "init" || st === "incomplete") {
                const moved = Result.getOrThrow(
                  Subscription.move(sv.value.subscription, "incomplete_expired", {
                    cancel_reason: "incomplete_expired",
                    cancel_at: dt(at),
                    next_invoice_date: null
                  })
                )
                const next = { ...sv.value, subscription: moved.value }
                yield* saveSub(next, sv.version, at)
                yield* subEvents(merchantId, next, moved.events, at)
                yield* storage.workQueue.cancel(merchantId, "incomplete_expiry", tr.subscription_id)
              }
            }
            if (tr.invoice_id !== null) {
              const iv = Option.getOrThrow(yield* Effect.orDie(invoices.get(merchantId, tr.invoice_id)))
              const moved = Invoice.move(iv.value, "void")
              if (Result.isSuccess(moved)) {
                yield* Effect.orDie(invoices.update(moved.success.value, iv.version))
                yield* emitAll(storage, moved.success.events, {
                  merchant_id: merchantId,
                  business_id: iv.value.invoice_id,
                  schema: Invoice.Invoice,
                  data: moved.success.value,
                  at
                })
              }
            }
            if (tr.trade.session_id !== null) {
              const sv = yield* Effect.orDie(sessions.get(merchantId, tr.trade.session_id))
              if (Option.isSome(sv) && sv.value.value.status === "open")
                yield* Effect.orDie(
                  sessions.update(Lifecycle.must(CheckoutSession.move(sv.value.value, "expire")), sv.value.version)
                )
            }
            yield* storage.workQueue.cancel(merchantId, "first_payment_expiry", tradeId)
            return "expired" as const
          })
        )
      })

    return {
      applyOutcome,
      reconcileTrade,
      chargeInvoiceTrade,
      chargePending,
      expireFirstPayment,
      dunningWithoutCharge,
      referencesOf
    } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}

// ------------------------------------------------------------------ building and submitting trades

/** A new trade (status `requires_payment_method`; the caller moves it). */
export const newTrade = (input: {
  readonly merchant: Merchant.Merchant
  readonly amount: Money.Money
  readonly customer_id: string
  readonly order_id: string | null
  readonly payment_mode: "onetime_payment" | "subscription"
  readonly order_type: "initial" | "renewal" | "upgrade" | "one_time"
  readonly session: Option.Option<CheckoutSession.CheckoutSession>
  readonly line: Trade.LineItem | null
  readonly tax: Money.Money
  readonly metadata: Metadata
  readonly at: number
}) =>
  Effect.map(
    Ids.make(Ids.prefixes.trade),
    (trade_id) =>
      new Trade.Trade(
        {
          trade_id,
          access_no: null,
          merchant_id: input.merchant.merchant_id,
          amount: Money.format(input.amount),
          currency: input.amount.currency,
          customer_id: input.customer_id,
          callback_url: null,
          order_id: input.order_id,
          last_trans_id: null,
          paid_at: null,
          payment_mode: input.payment_mode,
          payment_token: null,
          payment_method: null,
          payment_channel: "card",
          return_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.return_url }),
          trade_status: Lifecycle.trade.initial,
          txn_time: null,
          created_at: dt(input.at),
          refund_status: Lifecycle.tradeRefund.initial,
          total_refunded_amount: fmtMinor(0n, input.amount.currency),
          session_id: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_id }),
          session_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_url }),
          order_type: input.order_type,
          closed_at: null,
          closed_reason: null,
          first_source_channel: Option.match(input.session, {
            onNone: () => null,
            onSome: (s) => s.first_source_channel
          }),
          last_source_channel: null,
          tax_amount: Money.format(input.tax),
          metadata: input.metadata,
          last_payment_error: null,
          next_action: null,
          refer_info: null,
          line_items: input.line ? [input.line] : [],
          discounts: new Discounts({ current_period: [] }, { disableChecks: true }),
          billing_address: Option.match(input.session, { onNone: () => null, onSome: (s) => s.billing_address }),
          payment_info: null,
          dispute_status: Lifecycle.tradeDispute.initial,
          dispute: null
        },
        { disableChecks: true }
      )
  )

/**
 * Records a new trade as submitted (its charge is on its way), linked to its invoice and
 * subscription, and emits `v2.trades.created` with the trade as it was created; answers the
 * submitted trade.
 */
export const submitTrade = (
  storage: StorageService,
  input: {
    readonly trade: Trade.Trade
    readonly invoice_id: string | null
    readonly subscription_id: string | null
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const submitted = Lifecycle.must(Trade.move(input.trade, "submit_payment"))
    yield* Effect.orDie(
      storage.repository(Entities.trade).insert({
        trade: submitted,
        attempts: 1,
        invoice_id: input.invoice_id,
        subscription_id: input.subscription_id
      })
    )
    yield* emit(storage, {
      merchant_id: input.trade.merchant_id,
      type: "v2.trades.created",
      business_id: input.trade.trade_id,
      schema: Trade.Trade,
      data: input.trade,
      at: input.at
    })
    return submitted
  })

/**
 * Whether a charge of `amount` would be under the processor's minimum for the merchant (Stripe:
 * 0.50 USD…): such an invoice is not charged but carried to the customer's next invoice
 * (`Invoicing.carry`). Never for a gateway without a minimum (the sandbox).
 */
export const underMinimum = (
  gateway: Ports.PaymentGateway["Service"],
  merchantId: string,
  amount: Money.Money
): Effect.Effect<boolean> =>
  amount.amount <= 0n || gateway.minimumCharge === undefined
    ? Effect.succeed(false)
    : Effect.map(
        gateway.minimumCharge({ merchant_id: merchantId, currency: amount.currency }),
        (minimum) =>
          Option.isSome(minimum) && minimum.value.currency === amount.currency && amount.amount < minimum.value.amount
      )

/** A renewal's trade: the cycle's taxed total, off-session, no session and no line. */
export const renewalTrade = (
  merchant: Merchant.Merchant,
  sub: Subscription.Subscription,
  taxed: { readonly total: Money.Money; readonly tax: Money.Money },
  at: number
) =>
  newTrade({
    merchant,
    amount: taxed.total,
    customer_id: sub.customer_id,
    order_id: sub.order_id,
    payment_mode: "subscription",
    order_type: "renewal",
    session: Option.none(),
    line: null,
    tax: taxed.tax,
    metadata: {},
    at
  })
