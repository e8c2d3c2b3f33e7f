/**
 * Declines: what a declined charge does to its subscription and invoice, in the transaction that
 * records the decline (`Payments.applyOutcome`). A first payment's decline leaves the
 * subscription `incomplete` until it expires; a renewal's or a retry's takes the next step of
 * the merchant's dunning schedule ({@link DunningPolicy.decide}): a retry scheduled, or the end —
 * the invoice failed for good, the subscription `unpaid` or `canceled`. An issuer that wants its
 * customer (`authentication_required`) makes the invoice wait for them, and the schedule goes
 * on without charging (`dunningWithoutCharge`, called by `Dunning.retry`).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Invoice from "../invoices/Invoice.js"
import * as Entities from "../kernel/Entities.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { dt, emit, emitAll, msOf, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Settings from "../tenants/Settings.js"
import * as DunningPolicy from "./DunningPolicy.js"
import * as Trade from "./Trade.js"

/**
 * A decline as the gateway told it: the processor's code and, when it gave one, its class.
 *
 * @since 0.1.0
 */
export interface Decline {
  readonly code: string
  readonly decline_class?: DunningPolicy.DeclineClass | undefined
}

/**
 * The declines service.
 *
 * @since 0.1.0
 */
export class Declines extends Context.Service<Declines>()("@recur/core/Declines", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, schedule, subEvents } = writes(storage)

    /**
     * No charge of an invoice will be tried again: the invoice fails for good
     * (`v2.invoice.payment_failed`, saying in its `dunning` what it waits for) and its trade closes
     * with `reason`; answers the closed trade.
     */
    const giveUp = (
      merchantId: string,
      invV: Store.Versioned<Invoice.Invoice> | undefined,
      tradeId: string,
      reason: string,
      at: number,
      dunning?: Invoice.InvoiceDunning
    ) =>
      Effect.gen(function* () {
        if (invV) {
          const failed = Lifecycle.must(
            Invoice.move(
              invV.value,
              invV.value.biz_status === "retrying" ? "retries_exhausted" : "charge_failed_final",
              dunning !== undefined ? { dunning } : {}
            )
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

    /**
     * A renewal charge failed with `decline`: retry on the merchant's dunning schedule, or end —
     * the last retry failed, or the decline's class stops retrying (`stop`: the invoice fails at
     * once and waits for a new payment method, the subscription goes past due and on to the
     * policy's final state, `closed_reason` `new_payment_method_required`).
     */
    const dunningStep = (
      merchant: Merchant.Merchant,
      sub: Entities.SubscriptionRecord,
      subVersion: number,
      tradeId: string,
      invV: Store.Versioned<Invoice.Invoice> | undefined,
      at: number,
      decline: Decline
    ) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        const policy = DunningPolicy.policyOf(merchant, yield* Effect.service(DunningPolicy.DefaultPolicy))
        const declineClass = DunningPolicy.classOf(decline.decline_class)
        const step = DunningPolicy.decide(policy, {
          retriesDone: sub.dunning_attempts,
          pastDue: sub.subscription.status === "past_due",
          at,
          declineClass
        })
        const dunningOf = (
          next_action: Invoice.InvoiceDunning["next_action"],
          next_retry_at: number | null,
          ended_by: Invoice.InvoiceDunning["ended_by"]
        ) =>
          new Invoice.InvoiceDunning({
            decline_code: decline.code,
            decline_class: declineClass,
            next_action,
            next_retry_at: next_retry_at === null ? null : dt(next_retry_at),
            ended_by
          })
        let current = sub
        let version = subVersion
        if (sub.subscription.status !== "past_due") {
          // this failure starts dunning: the subscription is past due (also when it stops at once)
          const moved = Result.getOrThrow(Subscription.move(sub.subscription, "renewal_failed"))
          current = { ...sub, subscription: moved.value }
          yield* saveSub(current, version, at)
          version = Option.getOrThrow(yield* subs.get(merchantId, sub.subscription.id)).version
          yield* subEvents(merchantId, current, moved.events, at)
        }
        if (step._tag === "Retry") {
          if (invV && (invV.value.biz_status === "pending" || invV.value.biz_status === "retrying")) {
            const dunning = dunningOf("retry", step.at, null)
            yield* Effect.orDie(
              invoices.update(
                invV.value.biz_status === "pending"
                  ? Lifecycle.must(Invoice.move(invV.value, "charge_failed_will_retry", { dunning }))
                  : new Invoice.Invoice({ ...invV.value, dunning }, { disableChecks: true }),
                invV.version
              )
            )
          }
          yield* schedule(merchant, "dunning", sub.subscription.id, step.at)
          return
        }
        const canceled = step.finalState === "canceled"
        const moved = Result.getOrThrow(
          Subscription.move(
            current.subscription,
            canceled ? "retries_exhausted_cancel" : "retries_exhausted",
            canceled ? { cancel_reason: "payment_failed", cancel_at: dt(at), next_invoice_date: null } : {}
          )
        )
        const next: Entities.SubscriptionRecord = { ...current, subscription: moved.value }
        yield* saveSub(next, version, at)
        const stopped = step._tag === "Stop"
        yield* giveUp(
          merchantId,
          invV,
          tradeId,
          stopped ? "new_payment_method_required" : "retries_exhausted",
          at,
          dunningOf(canceled ? "none" : "new_payment_method", null, stopped ? "decline" : "retries_exhausted")
        )
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
    const dunningWithoutCharge = Effect.fn("Declines.dunningWithoutCharge")(function* (
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
          const error = tv.value.trade.last_payment_error
          yield* dunningStep(merchant, sv.value, sv.version, tradeId, invV, at, {
            code: error?.code ?? "authentication_required",
            decline_class: error?.decline_class
          })
        })
      )
    })

    /**
     * What a declined charge does to its subscription, in the caller's transaction (the trade
     * already recorded `payment_failed`): a first payment's subscription becomes `incomplete` and
     * expires later; a renewal's, a trial's end or a retry's takes the next step of dunning (an
     * `authentication_required` decline makes the invoice wait for the customer); an unpaid
     * subscription's late payment fails its invoice again and closes its trade, the subscription
     * stays unpaid. Answers the subscription and the trade as they now are.
     */
    const applyDecline = Effect.fn("Declines.applyDecline")(function* (
      merchant: Merchant.Merchant,
      trade: Trade.Trade,
      subV: Store.Versioned<Entities.SubscriptionRecord>,
      invV: Store.Versioned<Invoice.Invoice> | undefined,
      decline: Decline,
      at: number
    ) {
      const merchantId = merchant.merchant_id
      const tradeId = trade.trade_id
      const sub = subV.value
      const status = sub.subscription.status
      if (status === "init") {
        const next: Entities.SubscriptionRecord = {
          ...sub,
          subscription: Lifecycle.must(Subscription.move(sub.subscription, "first_payment_failed"))
        }
        yield* saveSub(next, subV.version, at)
        yield* schedule(
          merchant,
          "incomplete_expiry",
          next.subscription.id,
          msOf(next.subscription.created_at) + settings.incompleteExpiryMs
        )
        return { sub: next, trade }
      }
      if (status === "trial" || status === "active" || status === "past_due") {
        yield* dunningStep(merchant, sub, subV.version, tradeId, invV, at, decline)
        if (decline.code === "authentication_required" && invV)
          yield* actionRequired(merchantId, invV.value.invoice_id, at)
        return {
          sub: Option.getOrUndefined(Option.map(yield* subs.get(merchantId, sub.subscription.id), (v) => v.value)),
          trade: Option.getOrThrow(yield* trades.get(merchantId, tradeId)).value.trade
        }
      }
      if (status === "unpaid" && invV && invV.value.biz_status === "pending")
        // a late payment of an unpaid subscription's invoice failed: the invoice
        // fails again, its trade closes, the subscription stays unpaid
        return { sub, trade: yield* giveUp(merchantId, invV, tradeId, "payment_failed", at) }
      return { sub, trade }
    })

    return { applyDecline, dunningWithoutCharge } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
