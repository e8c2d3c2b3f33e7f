/**
 * A running subscription's lifecycle: cancel now or at period end and revoke it, pause and
 * resume, customer-initiated renewal; with price changes ({@link PriceChanges}), usage
 * ({@link Metering}) and refunds ({@link Refunds}) on the same service for the REST adapter.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, nowOf } from "../kernel/ServiceSupport.js"
import { mustBeLive } from "./SubscriptionStore.js"
import { loadSub, writes } from "./SubscriptionStore.js"
import type * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Metering from "../usage/Metering.js"
import * as PriceChanges from "./PriceChanges.js"
import * as Refunds from "../refunds/Refunds.js"
import * as Renewals from "./Renewals.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "./Subscription.js"

export type {
  /** @since 0.1.0 */
  ChangeCommand,
  /** @since 0.1.0 */
  Quote
} from "./PriceChanges.js"

export {
  /** @since 0.1.0 */
  MAX_USAGE_BATCH,
  /** @since 0.1.0 */
  MAX_USAGE_COUNT,
  /** @since 0.1.0 */
  type UsageEvent,
  /** @since 0.1.0 */
  usageOf
} from "../usage/Metering.js"

/**
 * Cancelling a subscription now, or at the end of its current period (revocable until then).
 *
 * @since 0.1.0
 */
export interface CancelCommand {
  readonly subscriptionId: Ids.SubscriptionId
  readonly when: "immediate" | "end_of_period"
  /** Kept on the subscription (`cancel_reason`); a cancellation now defaults to `canceled_by_merchant`. */
  readonly reason: Option.Option<string>
}

/**
 * A {@link CancelCommand} from its parts (immediate by default; a wrong id prefix throws: this
 * is for code, not for requests — `Requests.cancelCommand` decodes a request body).
 *
 * @since 0.1.0
 */
export const cancelOf = (
  subscriptionId: string,
  parts: { readonly when?: CancelCommand["when"] | undefined; readonly reason?: string | undefined } = {}
): CancelCommand => ({
  subscriptionId: Ids.SubscriptionId.make(subscriptionId),
  when: parts.when ?? "immediate",
  reason: Option.fromUndefinedOr(parts.reason)
})

/**
 * The subscriptions service.
 *
 * @since 0.1.0
 */
export class Subscriptions extends Context.Service<Subscriptions>()("@recur/core/Subscriptions", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const renewals = yield* Renewals.Renewals
    const refunds = yield* Refunds.Refunds
    const metering = yield* Metering.Metering
    const priceChanges = yield* PriceChanges.PriceChanges
    const { saveSub, schedule, subEvents } = writes(storage)
    const merchants = yield* Merchants.Merchants
    const subs = storage.repository(Entities.subscription)

    const load = (merchantId: string, id: string) => loadSub(subs, merchantId, id)
    const live = mustBeLive

    const transitionSub = (
      merchantId: string,
      subscriptionId: string,
      trigger: Lifecycle.SubscriptionTrigger,
      change: (
        rec: Entities.SubscriptionRecord,
        at: number
      ) => {
        readonly patch?: Partial<Omit<Subscription.Subscription, "status">>
        readonly record?: Partial<Omit<Entities.SubscriptionRecord, "subscription">>
      }
    ) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* load(merchantId, subscriptionId)
            const c = change(sv.value, at)
            const moved = Subscription.move(sv.value.subscription, trigger, c.patch ?? {})
            if (Result.isFailure(moved))
              return yield* new Errors.SubscriptionActionRefused({
                subscriptionId,
                state: sv.value.subscription.status,
                action: trigger.replace(/_/g, " "),
                reason: "the state machine has no such transition"
              })
            const next: Entities.SubscriptionRecord = { ...sv.value, ...c.record, subscription: moved.success.value }
            yield* saveSub(next, sv.version, at)
            yield* subEvents(merchantId, next, moved.success.events, at)
            return { merchant, next, at }
          })
        )
      })

    const cancel = (merchantId: string, command: CancelCommand) =>
      Effect.gen(function* () {
        const subscriptionId = command.subscriptionId
        const reason = Option.getOrNull(command.reason)
        if (command.when === "end_of_period") {
          const sv = yield* load(merchantId, subscriptionId)
          if (sv.value.subscription.cancel_at_period_end) return sv.value.subscription
          const { next } = yield* transitionSub(merchantId, subscriptionId, "request_cancel_at_period_end", (rec) => ({
            patch: {
              cancel_at_period_end: true,
              cancel_at: rec.subscription.current_period_end,
              cancel_reason: reason
            }
          }))
          return next.subscription
        }
        const { next } = yield* transitionSub(merchantId, subscriptionId, "cancel", (_, at) => ({
          patch: {
            cancel_at: dt(at),
            next_invoice_date: null,
            cancel_reason: reason ?? "canceled_by_merchant"
          }
        }))
        for (const kind of ["renewal", "dunning", "trial_notice", "incomplete_expiry"])
          yield* storage.workQueue.cancel(merchantId, kind, subscriptionId)
        return next.subscription
      }).pipe(Effect.withSpan("Subscriptions.cancel"))

    const revokeCancel = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const sv = yield* load(merchantId, subscriptionId)
        if (!sv.value.subscription.cancel_at_period_end) {
          return yield* new Errors.SubscriptionActionRefused({
            subscriptionId,
            state: sv.value.subscription.status,
            action: "revoke cancel",
            reason: "no cancellation is scheduled"
          })
        }
        const { next } = yield* transitionSub(merchantId, subscriptionId, "revoke_cancel", () => ({
          patch: { cancel_at_period_end: false, cancel_at: null, cancel_reason: null }
        }))
        return next.subscription
      }).pipe(Effect.withSpan("Subscriptions.revokeCancel"))

    const pause = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const { next } = yield* transitionSub(merchantId, subscriptionId, "pause", (_, at) => ({
          record: { paused_at: at },
          patch: { next_invoice_date: null }
        }))
        yield* storage.workQueue.cancel(merchantId, "renewal", subscriptionId)
        yield* storage.workQueue.cancel(merchantId, "dunning", subscriptionId)
        return next.subscription
      }).pipe(Effect.withSpan("Subscriptions.pause"))

    /** Resumes a paused subscription: a new period starts now and is billed now. */
    const resume = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const { at, merchant } = yield* transitionSub(merchantId, subscriptionId, "resume", (rec, at) => ({
          record: { paused_at: null, anchor: at, anchor_cycle: rec.subscription.cycle_index + 1 },
          patch: { next_invoice_date: dt(at) }
        }))
        yield* schedule(merchant, "renewal", subscriptionId, at)
        yield* renewals.renew(merchantId, subscriptionId)
        return (yield* load(merchantId, subscriptionId)).value.subscription
      }).pipe(Effect.withSpan("Subscriptions.resume"))

    /** Charges the next cycle now (customer-initiated renewal). */
    const renewNow = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const sv = yield* load(merchantId, subscriptionId)
        yield* live(sv.value, "renew")
        if (sv.value.subscription.status === "past_due")
          return yield* new Errors.SubscriptionActionRefused({
            subscriptionId,
            state: "past_due",
            action: "renew",
            reason: "settle the open invoice first"
          })
        yield* renewals.renew(merchantId, subscriptionId, { force: true })
        return (yield* load(merchantId, subscriptionId)).value.subscription
      }).pipe(Effect.withSpan("Subscriptions.renewNow"))

    return {
      previewChange: priceChanges.previewChange,
      changePrice: priceChanges.changePrice,
      revokePriceChange: priceChanges.revokePriceChange,
      cancel,
      revokeCancel,
      pause,
      resume,
      renewNow,
      upcomingInvoice: renewals.upcoming,
      recordUsage: metering.recordUsage,
      recordUsageBatch: metering.recordUsageBatch,
      usageSummary: metering.usageSummary,
      refund: refunds.refund,
      getRefund: refunds.getRefund,
      listRefunds: refunds.listRefunds
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
