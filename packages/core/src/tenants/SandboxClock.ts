/**
 * The sandbox clock: a sandbox merchant's frozen time moves only here, and everything that
 * falls due on the way (renewals, trial ends, dunning, webhooks) runs in time order before the
 * call returns — a month of billing replayed in one request.
 *
 * @since 0.1.0
 */
import { Context, Effect, FiberMap, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, knownMerchant, msOf } from "../kernel/ServiceSupport.js"
import { invalid } from "../kernel/Errors.js"
import * as Merchant from "./Merchant.js"
import * as Merchants from "./Merchants.js"
import * as Store from "../kernel/Store.js"
import * as Worker from "../engine/Worker.js"

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
     * Moves a sandbox merchant's frozen clock toward `to`, running everything that falls due on
     * the way, in time order. With `maxItems`, at most that many work items run: the clock then
     * stops at the instant it reached (`complete: false`) and a later call continues from there.
     * The clock never passes an instant whose due work has not run: if due work cannot run now
     * (claimed by another worker), it stops there too.
     */
    const step = Effect.fn("SandboxClock.step")(
      function* (
        merchantId: string,
        to: number,
        options: { readonly renewalBatch?: number; readonly maxItems?: number } = {}
      ) {
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
            if (msOf(current.value.frozen_time!) === t) return
            const next = new Merchant.Merchant({ ...current.value, frozen_time: dt(t) }, { disableChecks: true })
            yield* Effect.orDie(merchantsRepo.update(next, current.version))
          })
        const budget = options.maxItems ?? Number.POSITIVE_INFINITY
        const started = msOf(merchant.frozen_time)
        let ran = 0
        let complete = false
        for (;;) {
          const next = yield* storage.workQueue.nextDue(merchantId)
          const current = msOf((yield* merchants.get(merchantId)).frozen_time!)
          if (Option.isNone(next) || next.value > to) {
            yield* setClock(to)
            complete = true
            break
          }
          if (ran >= budget) break
          const at = Math.max(current, next.value)
          yield* setClock(at)
          const n = yield* worker.runDue({
            now: at,
            owner,
            lane: "frozen",
            merchantId,
            maxItems: budget - ran,
            ...(options.renewalBatch !== undefined ? { renewalBatch: options.renewalBatch } : {})
          })
          ran += n
          // due work that could not be claimed: the clock waits here for it
          if (n === 0) break
          // other requests (other merchants on the same database) get their turn between steps
          yield* Effect.yieldNow
        }
        if (!complete) {
          // stopped inside an instant (the bound, or work claimed elsewhere): show the instant
          // before it, whose due work is all done; the next call starts with what is left
          const current = msOf((yield* merchants.get(merchantId)).frozen_time!)
          const pending = yield* storage.workQueue.nextDue(merchantId)
          if (Option.isSome(pending) && pending.value <= current && current - 1 >= started) yield* setClock(current - 1)
        }
        return { merchant: yield* merchants.get(merchantId), complete, ran, requested: to }
        // the clock moves here: nothing inside may take "now" from the request's merchant snapshot
      },
      Effect.provideService(knownMerchant, undefined)
    )

    /** Background advances, one per merchant, stopped with the engine; and where each is going. */
    const running = yield* FiberMap.make<string, void, never>()
    const targets = new Map<string, number>()

    const refuseWhileAdvancing = (merchantId: string) =>
      Effect.suspend(() => {
        const target = targets.get(merchantId)
        return target === undefined
          ? Effect.void
          : Effect.fail(
              new Errors.StateConflict({
                resource: "merchant",
                id: merchantId,
                state: "advancing",
                reason: `its clock is advancing in the background to ${new Date(target).toISOString()}; its clock shows how far it got`
              })
            )
      })

    /**
     * Moves the clock toward `to` (see the type's docs): refused while a background advance of
     * the same merchant runs.
     */
    const advanceTo = Effect.fn("SandboxClock.advanceTo")(function* (
      merchantId: string,
      to: number,
      options: { readonly renewalBatch?: number; readonly maxItems?: number } = {}
    ) {
      return yield* Effect.andThen(refuseWhileAdvancing(merchantId), step(merchantId, to, options))
    })

    /**
     * Finishes an advance in the background, `chunk` work items at a time with a yield between
     * chunks (other requests on the same database get their turn), until the clock reaches `to`.
     * One per merchant: a second call while one runs does nothing. It lives as long as the
     * engine; a restart leaves the clock at an instant whose due work is done, and another
     * advance continues from there.
     */
    const continueInBackground = Effect.fn("SandboxClock.continueInBackground")(function* (
      merchantId: string,
      to: number,
      chunk = 200
    ) {
      return yield* Effect.suspend(() => {
        if (targets.has(merchantId)) return Effect.void
        targets.set(merchantId, to)
        const loop = Effect.gen(function* () {
          for (;;) {
            const r = yield* step(merchantId, to, { maxItems: chunk })
            if (r.complete || r.ran === 0) return
            yield* Effect.yieldNow
          }
        }).pipe(
          Effect.catchCause((cause) => Effect.logError(`background advance of ${merchantId} stopped`, cause)),
          Effect.ensuring(Effect.sync(() => targets.delete(merchantId)))
        )
        return Effect.asVoid(FiberMap.run(running, merchantId, loop, { onlyIfMissing: true }))
      })
    })

    /** Where a sandbox clock is, and where a background advance is taking it (if one runs). */
    const clockOf = Effect.fn("SandboxClock.clockOf")(function* (merchantId: string) {
      return yield* Effect.map(merchants.get(merchantId), (merchant) => ({
        merchant,
        target: Option.fromUndefinedOr(targets.get(merchantId))
      }))
    })

    /** {@link advanceTo} without a bound: everything due up to `to` runs before it returns. */
    const advanceClock = Effect.fn("SandboxClock.advanceClock")(function* (
      merchantId: string,
      to: number,
      options: { readonly renewalBatch?: number } = {}
    ) {
      return yield* Effect.map(advanceTo(merchantId, to, options), (r) => r.merchant)
    })

    return { advanceClock, advanceTo, continueInBackground, clockOf } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
