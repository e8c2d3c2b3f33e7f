/**
 * The sandbox clock: a sandbox merchant's frozen time moves only here, and everything that
 * falls due on the way (renewals, trial ends, dunning, webhooks) runs in time order before the
 * call returns — a month of billing replayed in one request.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import * as Entities from "./Entities.js"
import * as Errors from "./Errors.js"
import * as Ids from "./Ids.js"
import { dt, knownMerchant, msOf } from "./internal/engine.js"
import { invalid } from "./internal/records.js"
import * as Merchant from "./Merchant.js"
import * as Merchants from "./Merchants.js"
import * as Store from "./Store.js"
import * as Worker from "./Worker.js"

/**
 * The sandbox clock service.
 *
 * @since 0.1.0
 */
export class SandboxClock extends Context.Service<SandboxClock>()("@recur/core/SandboxClock", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const worker = yield* Worker.Worker
    const merchantsRepo = storage.repository(Entities.merchant)

    /**
     * Moves a sandbox merchant's frozen clock forward to `to`, running everything that falls
     * due on the way, in time order, before it returns.
     */
    const advanceClock = (merchantId: string, to: number, options: { readonly renewalBatch?: number } = {}) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        if (merchant.frozen_time === null)
          return yield* new Errors.StateConflict({
            resource: "merchant",
            id: merchantId,
            state: "live_clock",
            reason: "only a sandbox merchant with a frozen clock can advance it"
          })
        if (to < msOf(merchant.frozen_time)) return yield* invalid("frozen_time", "cannot move the clock backwards")
        const owner = `advance-${yield* Ids.make("wrk")}`
        const setClock = (t: number) =>
          Effect.gen(function* () {
            const current = Option.getOrThrow(yield* merchantsRepo.get(merchantId, merchantId))
            const next = new Merchant.Merchant({ ...current.value, frozen_time: dt(t) }, { disableChecks: true })
            yield* Effect.orDie(merchantsRepo.update(next, current.version))
          })
        for (;;) {
          const next = yield* storage.workQueue.nextDue(merchantId)
          const current = msOf((yield* merchants.get(merchantId)).frozen_time!)
          if (Option.isNone(next) || next.value > to) break
          yield* setClock(Math.max(current, next.value))
          const ran = yield* worker.runDue({
            now: Math.max(current, next.value),
            owner,
            lane: "frozen",
            merchantId,
            ...(options.renewalBatch !== undefined ? { renewalBatch: options.renewalBatch } : {})
          })
          if (ran === 0) break
        }
        yield* setClock(to)
        return yield* merchants.get(merchantId)
        // the clock moves here: nothing inside may take "now" from the request's merchant snapshot
      }).pipe(Effect.provideService(knownMerchant, undefined), Effect.withSpan("SandboxClock.advanceClock"))

    return { advanceClock } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
