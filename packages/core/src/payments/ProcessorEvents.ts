/**
 * What the engine does with a processor's webhook, once the gateway has checked it and said what
 * it means (`Ports.ProcessorEvent`): a payment that changed is reconciled exactly as the worker
 * reconciles an unknown outcome (the gateway is asked for the trade's state, so events arriving
 * late, twice or out of order change nothing twice); a pending refund that changed is asked about
 * again; a dispute is recorded on the trade through
 * its dispute machine (its invoice marked too), with `v2.trades.disputed` /
 * `v2.trades.dispute_updated` / `v2.trades.dispute_closed`; a refund made in the processor's
 * dashboard is recorded as a Recur refund once. Each event is acted on once: its id is kept
 * after it was handled (a crash before that only means handling it again, which changes
 * nothing); an event that cannot be read now is not kept, and the processor retries it.
 *
 * @since 0.1.0
 */
import { Context, Data, DateTime, Effect, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { emit, nowOf } from "../kernel/ServiceSupport.js"
import * as Invoice from "../invoices/Invoice.js"
import type * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Reconciliation from "./Reconciliation.js"
import * as Refunds from "../refunds/Refunds.js"
import type * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
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
 * An event that cannot be handled now: the processor did not answer while the engine read what
 * the event is about. Nothing was done and the event is not recorded as seen; the adapter that
 * received it asks the processor to send it again.
 *
 * @since 0.1.0
 */
export class EventNotReadable extends Data.TaggedError("EventNotReadable")<{
  readonly event_id: string
  readonly reason: string
}> {
  override get message() {
    return `event ${this.event_id} cannot be handled now (${this.reason}); send it again`
  }
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
    const reconciliation = yield* Reconciliation.Reconciliation
    const refunds = yield* Refunds.Refunds
    const seen = storage.repository(Entities.processorEvent)
    const trades = storage.repository(Entities.trade)

    /** The trade, when it is this merchant's. */
    const tradeOf = (merchantId: string, tradeId: string) => Effect.orDie(trades.get(merchantId, tradeId))

    const invoices = storage.repository(Entities.invoice)

    /** The machine's trigger that takes an open dispute to the reported state. */
    const closing: Record<Exclude<Ports.DisputeStatus, "open">, Lifecycle.TradeDisputeTrigger> = {
      won: "dispute_won",
      lost: "dispute_lost",
      warning_closed: "dispute_warning_closed",
      prevented: "dispute_prevented"
    }

    /**
     * Records a dispute's state on its trade and its invoice, with its amount, reason, the
     * processor's status and the evidence deadline (a repeated report, or one about an ended
     * dispute, changes nothing). False when the trade is not this merchant's.
     */
    const dispute = (merchantId: string, event: Extract<Ports.ProcessorEvent, { _tag: "Disputed" }>) =>
      storage.withTransaction(
        Effect.gen(function* () {
          const merchant = yield* merchants.get(merchantId)
          const tv = yield* tradeOf(merchantId, event.trade_id)
          if (Option.isNone(tv)) return false
          const at = yield* nowOf(merchant)
          let trade = tv.value.value.trade
          const triggers: Array<Lifecycle.TradeDisputeTrigger> = []
          const events: Array<Lifecycle.EventType> = []
          const record = (trigger: Lifecycle.TradeDisputeTrigger) =>
            new Trade.TradeDisputeRecord({
              dispute_id: event.dispute_id,
              amount: Money.format(event.amount),
              currency: event.amount.currency,
              reason: event.reason,
              opened_at: trade.dispute?.opened_at ?? DateTime.makeUnsafe(at),
              closed_at: trigger === "dispute_opened" || trigger === "dispute_updated" ? null : DateTime.makeUnsafe(at),
              processor_status: event.processor_status ?? null,
              evidence_due_by:
                event.evidence_due_by !== undefined && event.evidence_due_by !== null
                  ? DateTime.makeUnsafe(event.evidence_due_by)
                  : null
            })
          const move = (trigger: Lifecycle.TradeDisputeTrigger) => {
            const moved = Trade.moveDispute(trade, trigger, { dispute: record(trigger) })
            if (moved._tag === "Success") {
              trade = moved.success.value
              events.push(...moved.success.events)
              triggers.push(trigger)
            }
          }
          if (trade.dispute_status === "none") move("dispute_opened")
          if (trade.dispute_status === "open") {
            if (event.status !== "open") move(closing[event.status])
            else if (!triggers.includes("dispute_opened")) {
              // an update that changes what is kept (status, amount, reason, deadline) is one
              const before = trade.dispute
              const after = record("dispute_updated")
              if (
                before === null ||
                before.processor_status !== after.processor_status ||
                before.amount !== after.amount ||
                before.reason !== after.reason ||
                (before.evidence_due_by === null ? null : DateTime.toEpochMillis(before.evidence_due_by)) !==
                  (after.evidence_due_by === null ? null : DateTime.toEpochMillis(after.evidence_due_by))
              )
                move("dispute_updated")
            }
          }
          if (trade === tv.value.value.trade) return true
          // a concurrent change of the trade: the processor sends the event again on a non-2xx
          const conflict = () => Effect.fail(new Errors.ConcurrentUpdate({ resource: "trade", id: event.trade_id }))
          yield* trades
            .update({ ...tv.value.value, trade }, tv.value.version)
            .pipe(Effect.catchTag("VersionConflict", conflict), Effect.catchTag("UniqueViolation", Effect.die))
          // the invoice the charge paid is marked too, by the same machine
          const invoiceId = tv.value.value.invoice_id
          const iv = invoiceId !== null ? yield* Effect.orDie(invoices.get(merchantId, invoiceId)) : Option.none()
          if (Option.isSome(iv)) {
            let invoice = iv.value.value
            for (const trigger of triggers) {
              const moved = Invoice.moveDispute(invoice, trigger)
              if (moved._tag === "Success") invoice = moved.success.value
            }
            if (invoice !== iv.value.value)
              yield* invoices
                .update(invoice, iv.value.version)
                .pipe(Effect.catchTag("VersionConflict", conflict), Effect.catchTag("UniqueViolation", Effect.die))
          }
          for (const type of events)
            yield* emit(storage, {
              merchant_id: merchantId,
              type,
              business_id: trade.trade_id,
              schema: Trade.Trade,
              data: trade,
              at
            })
          return true
        })
      )

    /**
     * Acts on one processor event for a merchant: once per `(provider, event id)`. A trade of
     * another merchant (or none) is ignored. The event is recorded as seen only once it was
     * handled (each effect is idempotent: a delivery that fails midway, or two at once, change
     * nothing twice); one that cannot be handled now fails with {@link EventNotReadable} and is
     * not recorded, so the processor's retry is acted on.
     */
    const receive = Effect.fn("ProcessorEvents.receive")(function* (
      merchantId: string,
      provider: string,
      event: Ports.ProcessorEvent
    ) {
      const merchant = yield* merchants.get(merchantId)
      const key = `${provider}:${event.event_id}`
      if (Option.isSome(yield* Effect.orDie(seen.get(merchantId, key))))
        return { event_id: event.event_id, duplicate: true, handled: "ignored" } satisfies Received as Received
      if (event._tag === "Retry") return yield* new EventNotReadable({ event_id: event.event_id, reason: event.reason })
      let handled: Received["handled"] = "ignored"
      if (event._tag === "PaymentUpdated" || event._tag === "Refunded") {
        const trade = yield* tradeOf(merchantId, event.trade_id)
        if (Option.isSome(trade)) {
          // the same reconciliation as the worker's: the gateway's answer, applied once
          const result = yield* reconciliation.reconcileTrade(merchantId, event.trade_id)
          // the processor says the payment ended (or was refunded: it was paid), but its state
          // could not be read: retried
          if (
            result.status === "processing" &&
            (event._tag === "PaymentUpdated" ? event.settled === true : (event.processor_refunds ?? []).length > 0)
          )
            return yield* new EventNotReadable({
              event_id: event.event_id,
              reason: "the payment's outcome could not be read from the processor"
            })
          // refunds of another charge than the one that paid the trade (an extra payment) are not its
          const paidBy = result.trade.last_trans_id
          const ofTrade =
            event._tag === "Refunded" &&
            (event.charge_ids === undefined || paidBy === null || event.charge_ids.includes(paidBy))
          if (event._tag === "Refunded" && ofTrade)
            for (const made of event.processor_refunds ?? [])
              yield* refunds.recordProcessorRefund(merchantId, event.trade_id, made)
          handled = event._tag === "PaymentUpdated" ? "payment" : "refund"
        }
      } else if (event._tag === "RefundUpdated") {
        // a pending refund is asked about again; a settled one (or another merchant's) is left
        if (Option.isSome(yield* refunds.settle(merchantId, event.refund_id))) handled = "refund"
      } else if (event._tag === "Disputed") {
        // another merchant's trade (or none) is left alone
        if (yield* dispute(merchantId, event)) handled = "dispute"
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
    })

    return { receive } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
