/**
 * Corrections of meter events (issue 35): an event voided, or amended — voided and replaced by a
 * new event under a new `transaction_id` (the producer's key of the replacement, so re-sending
 * an amendment changes nothing twice), keeping the original's customer, subscription and code.
 * Both are bound by the metric's late window as late events are (`LateEvents.place`: a closed
 * period more than `late_window_days` old is refused on `timestamp`), and both schedule the
 * re-rating of the closed periods they touch (`UsageAdjustments`).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import type { PropertyValue } from "./Aggregation.js"
import * as LateEvents from "./LateEvents.js"
import * as MeterEvents from "./MeterEvents.js"

/**
 * An amendment: the replacement's `transaction_id`, and its new `timestamp` (Unix ms) and
 * `properties` (each the original's when absent).
 *
 * @since 0.1.0
 */
export interface Amendment {
  readonly transaction_id: string
  readonly timestamp?: number | undefined
  readonly properties?: Readonly<Record<string, PropertyValue>> | undefined
}

/**
 * The meter corrections service.
 *
 * @example
 * const corrections = yield* MeterCorrections.MeterCorrections
 * yield* corrections.void(merchantId, "req-8812")
 * yield* corrections.amend(merchantId, "req-8813", { transaction_id: "req-8813-v2", properties: { tokens: 900 } })
 * @since 0.1.0
 */
export class MeterCorrections extends Context.Service<MeterCorrections>()("@recur/core/MeterCorrections", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const meter = yield* MeterEvents.MeterEvents
    const metrics = storage.repository(Entities.billableMetric)

    const eventOf = (merchantId: string, transactionId: string) =>
      Effect.flatMap(storage.meter.get(merchantId, transactionId), (o) =>
        Option.isSome(o)
          ? Effect.succeed(o.value)
          : Effect.fail(new Errors.NotFound({ resource: "meter_event", id: transactionId }))
      )

    /** Voids a live event within its late window, scheduling its closed period's re-rating. */
    const voidLive = (merchantId: string, event: Store.MeterEvent, now: number) =>
      Effect.gen(function* () {
        const metric = Option.getOrUndefined(yield* metrics.findBy(merchantId, "code", event.code))?.value
        const [placed] = yield* LateEvents.place(storage, merchantId, now, [
          {
            subscription_id: event.subscription_id,
            timestamp: event.timestamp,
            late_window_days: metric?.late_window_days ?? 35
          }
        ])
        if (placed!.at === "refused")
          return yield* new Errors.MeterEventRefused({ field: "timestamp", detail: placed!.detail })
        const voided = yield* storage.meter.void(merchantId, event.transaction_id, now)
        if (voided && placed!.at === "period")
          yield* LateEvents.schedule(
            storage,
            yield* merchants.get(merchantId),
            [{ subscription_id: placed!.subscription_id, period_start: placed!.period.start }],
            now
          )
        return voided
      })

    /**
     * Voids the event of `transactionId`: aggregations ignore it from now on, and a closed period
     * it counted in is re-rated. Voiding a voided event changes nothing (`voided: false`).
     * Refused: an unknown transaction id (`NotFound`), a period older than the metric's late
     * window (`MeterEventRefused` on `timestamp`).
     */
    const voidEvent = Effect.fn("MeterCorrections.void")(function* (merchantId: string, transactionId: string) {
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const now = yield* nowOf(merchant)
          const event = yield* eventOf(merchantId, transactionId)
          if (event.voided_at !== null) return { event, voided: false }
          const voided = yield* voidLive(merchantId, event, now)
          return { event: yield* eventOf(merchantId, transactionId), voided }
        })
      )
    })

    /**
     * Amends the event of `transactionId`: voids it and ingests its replacement under
     * `amendment.transaction_id` (the original's customer, subscription and code; its timestamp
     * and properties unless given), in one transaction; the closed periods of both are re-rated.
     * Sent again after it was done, it answers the replacement (`duplicate: true`). Refused: an
     * unknown transaction id (`NotFound`); a replacement id that is the original's or another
     * event's (`MeterEventRefused` on `transaction_id`); an original voided without this
     * replacement (`StateConflict`); either event's period older than the metric's late window
     * (`MeterEventRefused` on `timestamp`); whatever refuses the replacement's ingestion
     * (`MeterEvents.send`).
     */
    const amend = Effect.fn("MeterCorrections.amend")(function* (
      merchantId: string,
      transactionId: string,
      amendment: Amendment
    ) {
      const merchant = yield* merchants.get(merchantId)
      const replacementId = amendment.transaction_id
      if (typeof replacementId !== "string" || replacementId.length < 1 || replacementId.length > 255)
        return yield* new Errors.MeterEventRefused({ field: "transaction_id", detail: "must be 1 to 255 characters" })
      if (replacementId === transactionId)
        return yield* new Errors.MeterEventRefused({
          field: "transaction_id",
          detail: "names the replacement: it must differ from the amended event's"
        })
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const now = yield* nowOf(merchant)
          const original = yield* eventOf(merchantId, transactionId)
          const taken = yield* storage.meter.get(merchantId, replacementId)
          if (original.voided_at !== null) {
            if (Option.isSome(taken)) return { event: taken.value, amended: original, duplicate: true }
            return yield* new Errors.StateConflict({
              resource: "meter_event",
              id: transactionId,
              state: "voided",
              reason: "a voided event is not amended: send a new event"
            })
          }
          if (Option.isSome(taken))
            return yield* new Errors.MeterEventRefused({
              field: "transaction_id",
              detail: `is already the transaction id of another event`
            })
          yield* voidLive(merchantId, original, now)
          const sent = yield* meter.send(merchantId, {
            transaction_id: replacementId,
            customer_id: original.customer_id,
            subscription_id: original.subscription_id,
            code: original.code,
            timestamp: amendment.timestamp ?? original.timestamp,
            properties: amendment.properties ?? original.properties
          })
          return { event: sent.event, amended: yield* eventOf(merchantId, transactionId), duplicate: false }
        })
      )
    })

    return { void: voidEvent, amend } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
