/**
 * What the engine does with a processor's webhook, once the gateway has checked it and said what
 * it means (`Ports.ProcessorEvent`): a payment that changed is reconciled exactly as the worker
 * reconciles an unknown outcome (the gateway is asked for the trade's state, so events arriving
 * late, twice or out of order change nothing twice); a pending refund that changed is asked about
 * again; a dispute is recorded on the trade through
 * its dispute machine, with `v2.trades.disputed` / `v2.trades.dispute_closed`. Each event is acted
 * on once: its id is kept after it was handled (a crash before that only means handling it again,
 * which changes nothing).
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import * as Entities from "./Entities.js"
import * as Errors from "./Errors.js"
import { emit, nowOf } from "./internal/engine.js"
import type * as Lifecycle from "./Lifecycle.js"
import * as Merchants from "./Merchants.js"
import * as Money from "./Money.js"
import * as Payments from "./Payments.js"
import * as Refunds from "./Refunds.js"
import type * as Ports from "./Ports.js"
import * as Store from "./Store.js"
import * as Trade from "./Trade.js"

/**
 * What receiving an event did: `duplicate` when it was handled before.
 *
 * @since 0.1.0
 */
export interface Received {
  readonly event_id: string
  readonly duplicate: boolean
  readonly handled: "payment" | "refund" | "dispute" | "ignored"
}

/**
 * The processor events service.
 *
 * @since 0.1.0
 */
export class ProcessorEvents extends Context.Service<ProcessorEvents>()("@recur/core/ProcessorEvents", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const payments = yield* Payments.Payments
    const refunds = yield* Refunds.Refunds
    const seen = storage.repository(Entities.processorEvent)
    const trades = storage.repository(Entities.trade)

    /** The trade, when it is this merchant's. */
    const tradeOf = (merchantId: string, tradeId: string) => Effect.orDie(trades.get(merchantId, tradeId))

    /** Records a dispute's state on its trade (a repeated or older report changes nothing). */
    const dispute = (merchantId: string, event: Extract<Ports.ProcessorEvent, { _tag: "Disputed" }>) =>
      storage.withTransaction(
        Effect.gen(function* () {
          const merchant = yield* merchants.get(merchantId)
          const tv = yield* tradeOf(merchantId, event.trade_id)
          if (Option.isNone(tv)) return
          const at = yield* nowOf(merchant)
          let trade = tv.value.value.trade
          const events: Array<Lifecycle.EventType> = []
          const move = (trigger: "dispute_opened" | "dispute_updated" | "dispute_won" | "dispute_lost") => {
            const moved = Trade.moveDispute(trade, trigger, {
              dispute: new Trade.TradeDisputeRecord({
                dispute_id: event.dispute_id,
                amount: Money.format(event.amount),
                currency: event.amount.currency,
                reason: event.reason,
                opened_at: trade.dispute?.opened_at ?? DateTime.makeUnsafe(at),
                closed_at: trigger === "dispute_won" || trigger === "dispute_lost" ? DateTime.makeUnsafe(at) : null
              })
            })
            if (moved._tag === "Success") {
              trade = moved.success.value
              events.push(...moved.success.events)
            }
          }
          if (trade.dispute_status === "none") move("dispute_opened")
          if (trade.dispute_status === "open")
            move(event.status === "won" ? "dispute_won" : event.status === "lost" ? "dispute_lost" : "dispute_updated")
          if (trade === tv.value.value.trade) return
          // a concurrent change of the trade: the processor sends the event again on a non-2xx
          yield* trades.update({ ...tv.value.value, trade }, tv.value.version).pipe(
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "trade", id: event.trade_id }))
            ),
            Effect.catchTag("UniqueViolation", Effect.die)
          )
          for (const type of events)
            yield* emit(storage, {
              merchant_id: merchantId,
              type,
              business_id: trade.trade_id,
              schema: Trade.Trade,
              data: trade,
              at
            })
        })
      )

    /**
     * Acts on one processor event for a merchant: once per `(provider, event id)`. A trade of
     * another merchant (or none) is ignored.
     */
    const receive = (merchantId: string, provider: string, event: Ports.ProcessorEvent) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const key = `${provider}:${event.event_id}`
        if (Option.isSome(yield* Effect.orDie(seen.get(merchantId, key))))
          return { event_id: event.event_id, duplicate: true, handled: "ignored" } satisfies Received as Received
        let handled: Received["handled"] = "ignored"
        if (event._tag === "PaymentUpdated" || event._tag === "Refunded") {
          const trade = yield* tradeOf(merchantId, event.trade_id)
          if (Option.isSome(trade)) {
            // the same reconciliation as the worker's: the gateway's answer, applied once
            yield* payments.reconcileTrade(merchantId, event.trade_id)
            handled = event._tag === "PaymentUpdated" ? "payment" : "refund"
          }
        } else if (event._tag === "RefundUpdated") {
          // a pending refund is asked about again; a settled one (or another merchant's) is left
          if (Option.isSome(yield* refunds.settle(merchantId, event.refund_id))) handled = "refund"
        } else if (event._tag === "Disputed") {
          yield* dispute(merchantId, event)
          handled = "dispute"
        }
        yield* seen
          .insert({
            id: key,
            merchant_id: merchantId,
            provider,
            event_id: event.event_id,
            type: event._tag,
            received_at: yield* nowOf(merchant)
          })
          .pipe(Effect.catchTag("UniqueViolation", () => Effect.void))
        return { event_id: event.event_id, duplicate: false, handled } satisfies Received as Received
      }).pipe(Effect.withSpan("ProcessorEvents.receive"))

    return { receive } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
