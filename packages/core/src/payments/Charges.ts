/**
 * Charges: an invoice's trade charged off session with the subscription's saved card — a
 * renewal, a dunning retry, an upgrade's proration, an unpaid subscription's recovery — and a
 * recorded charge that was never made (a crash between the two transactions, or a processor
 * that could not take it) made by the worker's `charge` item. The answer is applied by
 * `Payments.applyOutcome`. Also whether an amount is under the processor's minimum charge, asked
 * before a trade is made.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Invoice from "../invoices/Invoice.js"
import * as Entities from "../kernel/Entities.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Ports from "../kernel/Ports.js"
import { merchantNow, must } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Payments from "./Payments.js"
import { cardOnFile } from "./CardOnFile.js"
import * as Trade from "./Trade.js"

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

/**
 * The processor's minimum charge in `currency` (0 when it has none): an amount above 0 and under
 * it is not charged but carried.
 *
 * @since 0.1.0
 */
export const minimumFor = (
  gateway: Ports.PaymentGateway["Service"],
  merchantId: string,
  currency: string
): Effect.Effect<bigint> =>
  gateway.minimumCharge === undefined
    ? Effect.succeed(0n)
    : Effect.map(gateway.minimumCharge({ merchant_id: merchantId, currency }), (minimum) =>
        Option.isSome(minimum) && minimum.value.currency === currency ? minimum.value.amount : 0n
      )

/**
 * The off-session charges service.
 *
 * @since 0.1.0
 */
export class Charges extends Context.Service<Charges>()("@recur/core/Charges", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const gateway = yield* Ports.PaymentGateway
    const payments = yield* Payments.Payments
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const now = merchantNow(storage)

    /** Charges an invoice's trade off-session with the saved token (the trade's current attempt). */
    const chargeInvoiceTrade = Effect.fn("Charges.chargeInvoiceTrade")(function* (
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
        references: tv.value.charges ?? [],
        now: yield* now(merchantId)
      })
      return yield* Effect.orDie(payments.applyOutcome(merchantId, tradeId, outcome))
    })

    /**
     * The saved card an off-session charge of a trade is made with: its subscription's, or for a
     * one-off invoice's trade (no subscription) the customer's card on file. None for a sent or
     * written-off invoice's trade: it is paid only on its page, never with a card on file.
     */
    const tokenOf = (merchantId: string, tr: Entities.TradeRecord) =>
      Effect.gen(function* () {
        const inv =
          tr.invoice_id === null ? undefined : Option.getOrUndefined(yield* invoices.get(merchantId, tr.invoice_id))
        if (inv?.value.collection_method === "send_invoice" || inv?.value.biz_status === "uncollectible")
          return Option.none<string>()
        if (tr.subscription_id !== null) {
          const sub = yield* Effect.flatMap(subs.get(merchantId, tr.subscription_id), (o) =>
            Effect.orDie(must(o, "subscription", tr.subscription_id!))
          )
          return Option.fromNullishOr(sub.value.payment_token)
        }
        return inv !== undefined && Invoice.isStandalone(inv.value.invoice_type)
          ? yield* cardOnFile(storage, merchantId, tr.trade.customer_id)
          : Option.none<string>()
      })

    /** Makes a recorded but not yet made off-session charge (after a crash between the two transactions). */
    const chargePending = Effect.fn("Charges.chargePending")(function* (merchantId: string, tradeId: string) {
      const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => Effect.orDie(must(o, "trade", tradeId)))
      // a charge the processor could not take (`Unavailable`) waits in requires_payment_method
      const waiting =
        tv.value.trade.trade_status === "requires_payment_method" && tv.value.unavailable_since !== undefined
      if (tv.value.trade.trade_status !== "processing" && !waiting) return Option.none<Payments.PaymentResult>()
      const token = yield* tokenOf(merchantId, tv.value)
      if (Option.isNone(token)) return Option.none<Payments.PaymentResult>()
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
        if (!resubmitted) return Option.none<Payments.PaymentResult>()
      }
      return Option.some(yield* chargeInvoiceTrade(merchantId, tradeId, token.value))
    })

    return { chargeInvoiceTrade, chargePending } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
