/**
 * Reconciliation: trades whose outcome is still open. `reconcileTrade` (the worker's `reconcile`
 * item, a processor's event, a payer back from 3-D Secure) asks the processor about a trade and
 * applies the answer through `Payments.applyOutcome`, so a crash between recording a trade and
 * recording its answer never charges twice; `expireFirstPayment` (the `first_payment_expiry`
 * item) ends a first payment that was never made, after asking the processor the same way.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as CheckoutSession from "../checkout/CheckoutSession.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Entities from "../kernel/Entities.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Ports from "../kernel/Ports.js"
import { dt, emitAll, must, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Settings from "../tenants/Settings.js"
import * as Payments from "./Payments.js"
import * as Trade from "./Trade.js"
import { referencesOf } from "./TradeStore.js"

/**
 * The reconciliation service.
 *
 * @since 0.1.0
 */
export class Reconciliation extends Context.Service<Reconciliation>()("@recur/core/Reconciliation", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const gateway = yield* Ports.PaymentGateway
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const payments = yield* Payments.Payments
    const sessions = storage.repository(Entities.checkoutSession)
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, schedule, subEvents } = writes(storage)

    /**
     * Asks the gateway about a trade whose outcome is unknown and applies the answer. A trade
     * already decided (succeeded, failed, closed) is answered from the store: its outcome can no
     * longer change by asking, so the processor is never called for it.
     */
    const reconcileTrade = Effect.fn("Reconciliation.reconcileTrade")(function* (merchantId: string, tradeId: string) {
      const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => must(o, "trade", tradeId))
      const status = tv.value.trade.trade_status
      // a failed trade is asked too: a charge the processor took after all is applied (the money
      // was taken); a succeeded or closed one is answered as it is
      const outcome =
        status === "processing" || status === "payment_failed"
          ? yield* gateway.retrieve(tradeId, referencesOf(tv.value))
          : // applyOutcome answers a decided trade as it is, whatever the outcome says
            Ports.ChargeOutcome.Unknown()
      return yield* payments.applyOutcome(merchantId, tradeId, outcome)
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
    const expireFirstPayment = Effect.fn("Reconciliation.expireFirstPayment")(function* (
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
        const applied = yield* Effect.orDie(payments.applyOutcome(merchantId, tradeId, outcome))
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

    return { reconcileTrade, expireFirstPayment } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
