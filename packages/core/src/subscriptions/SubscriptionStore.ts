/**
 * The subscription's record in storage: loading it, saving it at the version read, its events
 * and scheduled work — the writes every subscription service makes; a save that changes a
 * customer's entitlements writes `v2.entitlements.updated` with it. Formerly part of
 * `internal/records`.
 */
import { Effect, Option, Result } from "effect"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import { entitlementStore } from "../entitlements/EntitlementStore.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { dt, emitAll, laneOf, must, nowOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import type * as Store from "../kernel/Store.js"
import * as Subscription from "./Subscription.js"
import * as Schedule from "../schedules/Schedule.js"

/** A subscription's record, or `NotFound`. */
export const loadSub = (subs: Store.Repository<Entities.SubscriptionRecord>, merchantId: string, id: string) =>
  Effect.flatMap(subs.get(merchantId, id), (o) => must(o, "subscription", id))

/** Storage helpers bound to one storage. */
export const writes = (storage: StorageService) => {
  const subs = storage.repository(Entities.subscription)
  const versions = storage.repository(Entities.priceVersion)
  const entitlements = entitlementStore(storage)
  return {
    /**
     * Saves a subscription read at version `expected`. Another writer in between (a concurrent
     * call on the same subscription) is a `ConcurrentUpdate`: the transaction rolls back, nothing
     * is written, and the call may be retried.
     */
    saveSub: (
      saved: Entities.SubscriptionRecord,
      expected: number,
      at: number,
      balanceSource?: CustomerBalance.SubscriptionSource
    ) =>
      Effect.gen(function* () {
        let rec = saved
        const prior = yield* subs.get(rec.merchant_id, rec.subscription.id)
        const subscription = new Subscription.Subscription(
          { ...rec.subscription, updated_at: dt(at) },
          { disableChecks: true }
        )
        // a subscription that ends (canceled at once, or by dunning) ends the schedule that governed it
        const sc = rec.schedule ?? null
        if (subscription.status === "canceled" && Schedule.governs(sc)) {
          const moved = Result.getOrThrow(Schedule.move(sc, "cancel", at, { canceled_at: dt(at) }))
          rec = { ...rec, schedule: moved.value }
          yield* emitAll(storage, moved.events, {
            merchant_id: rec.merchant_id,
            business_id: sc.id,
            schema: Schedule.SubscriptionSchedule,
            data: moved.value,
            at
          })
        }
        const version = yield* subs.update({ ...rec, subscription }, expected).pipe(
          Effect.catchTag("VersionConflict", () =>
            Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: rec.subscription.id }))
          ),
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        )
        // a change of its credit balance is mirrored into the customer's balance ledger, in this transaction
        yield* CustomerBalance.mirrorSubscription(
          storage,
          Option.getOrUndefined(prior)?.value,
          { ...rec, subscription },
          at,
          balanceSource
        )
        // a change of status or of an item's price that alters the customer's entitlements says so, in this transaction
        yield* entitlements.afterChange(
          rec.merchant_id,
          [{ before: Option.getOrUndefined(prior)?.value, after: { ...rec, subscription } }],
          at
        )
        return version
      }),
    /** The subscription's events, in order, in the caller's transaction. */
    subEvents: (
      merchant_id: string,
      rec: Entities.SubscriptionRecord,
      types: ReadonlyArray<Lifecycle.EventType>,
      at: number
    ) =>
      emitAll(storage, types, {
        merchant_id,
        business_id: rec.subscription.id,
        schema: Subscription.Subscription,
        data: rec.subscription,
        at
      }),
    /** Schedules work for a subject on the merchant's lane. */
    schedule: (merchant: Merchant.Merchant, kind: string, subject_id: string, due_at: number) =>
      storage.workQueue.schedule({
        lane: laneOf(merchant),
        merchant_id: merchant.merchant_id,
        kind,
        subject_id,
        due_at
      }),
    /** A price version the engine holds a reference to (missing is a defect). */
    version: (merchantId: string, id: string) =>
      Effect.flatMap(versions.get(merchantId, id), (o) => Effect.orDie(must(o, "price_version", id))).pipe(
        Effect.map((v) => v.value)
      )
  }
}

/** Succeeds when the subscription is live (trial, active, past_due); else `SubscriptionNotLive`. */
/**
 * A renewal paid after a trial ends the trial (`trial → active`, `renewal_succeeded`), in its own
 * transaction after the charge: the renewal's (`Renewals`) and a finalised draft's
 * (`InvoiceActions.finalize`) alike. A subscription no longer in `trial` (a decline moved it, a
 * concurrent call ended it) is left as it is.
 */
export const endTrialAfterPayment = (storage: StorageService, merchant: Merchant.Merchant, subscriptionId: string) =>
  storage.withTransaction(
    Effect.gen(function* () {
      const sv = Option.getOrUndefined(
        yield* Effect.orDie(storage.repository(Entities.subscription).get(merchant.merchant_id, subscriptionId))
      )
      if (sv === undefined || sv.value.subscription.status !== "trial") return
      const at = yield* nowOf(merchant)
      yield* writes(storage).saveSub(
        {
          ...sv.value,
          subscription: Lifecycle.must(Subscription.move(sv.value.subscription, "renewal_succeeded"))
        },
        sv.version,
        at
      )
    })
  )

export const mustBeLive = (rec: Entities.SubscriptionRecord, action: string) =>
  ["trial", "active", "past_due"].includes(rec.subscription.status)
    ? Effect.void
    : Effect.fail(
        new Errors.SubscriptionNotLive({
          subscriptionId: rec.subscription.id,
          state: rec.subscription.status,
          action
        })
      )
