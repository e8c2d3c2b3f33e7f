/**
 * Dunning retries: a past-due subscription's open invoice charged again on the schedule of
 * its merchant's {@link DunningPolicy.Policy}.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import * as Entities from "./Entities.js"
import * as Invoice from "./Invoice.js"
import { nowOf } from "./internal/engine.js"
import { must, writes } from "./internal/records.js"
import * as Lifecycle from "./Lifecycle.js"
import * as Merchants from "./Merchants.js"
import * as Payments from "./Payments.js"
import * as Store from "./Store.js"
import * as Trade from "./Trade.js"

/**
 * Runs scheduled dunning retries.
 *
 * @since 0.1.0
 */
export class Dunning extends Context.Service<Dunning>()("@recur/core/Dunning", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const payments = yield* Payments.Payments
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, schedule } = writes(storage)

    /** One retry of a past-due subscription's open invoice, with its saved card. */
    const retry = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
          must(o, "subscription", subscriptionId)
        )
        if (sv.value.subscription.status !== "past_due" || sv.value.payment_token === null)
          return Option.none<Payments.PaymentResult>()
        const open = (yield* Effect.orDie(
          invoices.list(merchantId, {
            limit: 100,
            filters: [
              { column: "subscription_id", op: "in", values: [subscriptionId] },
              { column: "biz_status", op: "in", values: ["retrying", "pending"] }
            ]
          })
        )).list
        const invoice = open.find((i) => i.trade_id !== null)
        if (!invoice) return Option.none<Payments.PaymentResult>()
        const tradeId = invoice.trade_id!
        yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const s = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
            yield* saveSub({ ...s.value, dunning_attempts: s.value.dunning_attempts + 1 }, s.version, at)
            const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
            if (tv.value.trade.trade_status === "payment_failed") {
              yield* Effect.orDie(
                trades.update(
                  {
                    ...tv.value,
                    attempts: tv.value.attempts + 1,
                    trade: Lifecycle.must(Trade.move(tv.value.trade, "submit_payment"))
                  },
                  tv.version
                )
              )
            }
            const iv = Option.getOrThrow(yield* invoices.get(merchantId, invoice.invoice_id))
            if (iv.value.biz_status === "retrying")
              yield* Effect.orDie(invoices.update(Lifecycle.must(Invoice.move(iv.value, "charge")), iv.version))
            yield* schedule(merchant, "charge", tradeId, at)
          })
        )
        return Option.some(yield* payments.chargeInvoiceTrade(merchantId, tradeId, sv.value.payment_token))
      }).pipe(Effect.withSpan("Dunning.retry"))

    return { retry } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
