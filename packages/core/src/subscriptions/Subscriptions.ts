/**
 * A running subscription's lifecycle: cancel now or at period end and revoke it, pause and
 * resume, customer-initiated renewal, and finding the subscription of an invoice or a refund.
 * Price changes are {@link PriceChanges}', usage {@link Metering}'s and refunds {@link Refunds}'.
 *
 * @since 0.1.0
 */
import * as Charges from "../payments/Charges.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import * as Ports from "../kernel/Ports.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as FinalInvoice from "./FinalInvoice.js"
import * as MetricUsage from "../usage/MetricUsage.js"
import * as ProgressiveBilling from "../usage/ProgressiveBilling.js"
import * as RenewalPlan from "./RenewalPlan.js"
import * as KeptUsage from "./KeptUsage.js"
import * as ChangeQuote from "./ChangeQuote.js"
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, nowOf } from "../kernel/ServiceSupport.js"
import { mustBeLive } from "./SubscriptionStore.js"
import { loadSub, writes } from "./SubscriptionStore.js"
import type * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Refunds from "../refunds/Refunds.js"
import * as Renewals from "./Renewals.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "./Subscription.js"
import { periodIndex, scheduleOf } from "./SubscriptionTerms.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as Schedule from "../schedules/Schedule.js"

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
 * is for code, not for requests — the contract's `Requests.cancelCommand` decodes a request body).
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
    const { saveSub, schedule, subEvents, version } = writes(storage)
    const merchants = yield* Merchants.Merchants
    const refunds = yield* Refunds.Refunds
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const charges = yield* Charges.Charges
    const finalInvoice = FinalInvoice.bill(
      storage,
      yield* Ports.TaxCalculator,
      invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings),
      schedule,
      yield* Ports.PaymentGateway
    )

    const load = (merchantId: string, id: string) => loadSub(subs, merchantId, id)

    /**
     * The usage a subscription canceled now still owes, to `end` (a paused one's usage ends at
     * its pause): none before its first payment (`init`, `incomplete`: nothing was served).
     */
    const owedUsage = (
      merchantId: string,
      rec: Entities.SubscriptionRecord,
      end: number
    ): Effect.Effect<FinalInvoice.Final, Errors.ConcurrentUpdate> =>
      rec.subscription.status === "init" || rec.subscription.status === "incomplete"
        ? Effect.succeed({ usage: [] })
        : Effect.gen(function* () {
            const base = yield* version(merchantId, rec.subscription.price_version_id)
            // and the items billed by a billable metric: their metric's value of the period so far
            const metered = yield* MetricUsage.ofPeriod(storage)(merchantId, rec, end)
            // less what progressive invoices billed of the period already (issue 35)
            const early = yield* ProgressiveBilling.deductions(storage)(
              yield* Effect.orDie(merchants.get(merchantId)),
              rec,
              end,
              true
            )
            return {
              usage: [...KeptUsage.finalUsageLines(rec, base, end), ...MetricUsage.used(metered), ...early],
              base
            }
          })
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

    const cancel = Effect.fn("Subscriptions.cancel")(function* (merchantId: string, command: CancelCommand) {
      const subscriptionId = command.subscriptionId
      const reason = Option.getOrNull(command.reason)
      if (command.when === "end_of_period") {
        const sv = yield* load(merchantId, subscriptionId)
        if (sv.value.subscription.cancel_at_period_end) return sv.value.subscription
        // a create_prorations change's charges wait for the next invoice, which an end-of-period
        // cancel would never issue: they would be given away
        if (ChangeQuote.pendingNet(sv.value) > 0n)
          return yield* new Errors.SubscriptionActionRefused({
            subscriptionId,
            state: sv.value.subscription.status,
            action: "cancel at period end",
            reason:
              "its proration charges are billed by the next invoice, which an end-of-period cancel would not issue: cancel immediately, or after that invoice"
          })
        const { next } = yield* transitionSub(merchantId, subscriptionId, "request_cancel_at_period_end", (rec) => ({
          patch: {
            cancel_at_period_end: true,
            cancel_at: rec.subscription.current_period_end,
            cancel_reason: reason
          }
        }))
        return next.subscription
      }
      const merchant = yield* merchants.get(merchantId)
      const ended = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const sv = yield* load(merchantId, subscriptionId)
          const moved = Subscription.move(sv.value.subscription, "cancel", {
            cancel_at: dt(at),
            next_invoice_date: null,
            cancel_reason: reason ?? "canceled_by_merchant"
          })
          if (Result.isFailure(moved))
            return yield* new Errors.SubscriptionActionRefused({
              subscriptionId,
              state: sv.value.subscription.status,
              action: "cancel",
              reason: "the state machine has no such transition"
            })
          // pending proration lines and the usage the next invoice would have billed: billed now,
          // on a final invoice (a net charge charged, a net credit to the balance with its tax)
          const billed = yield* finalInvoice(
            merchant,
            { ...sv.value, subscription: moved.success.value },
            at,
            yield* owedUsage(merchantId, sv.value, sv.value.paused_at ?? at)
          )
          yield* saveSub(billed.next, sv.version, at, billed.invoiceId ? { sourceId: billed.invoiceId } : undefined)
          yield* subEvents(merchantId, billed.next, moved.success.events, at)
          return billed
        })
      )
      for (const kind of ["renewal", "dunning", "trial_notice", "incomplete_expiry"])
        yield* storage.workQueue.cancel(merchantId, kind, subscriptionId)
      const token = ended.next.payment_token
      if (Option.isSome(ended.tradeToCharge) && token !== null)
        yield* charges.chargeInvoiceTrade(merchantId, ended.tradeToCharge.value, token)
      return ended.next.subscription
    })

    const revokeCancel = Effect.fn("Subscriptions.revokeCancel")(function* (
      merchantId: string,
      subscriptionId: string
    ) {
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
    })

    const pause = Effect.fn("Subscriptions.pause")(function* (merchantId: string, subscriptionId: string) {
      const { next } = yield* transitionSub(merchantId, subscriptionId, "pause", (_, at) => ({
        record: { paused_at: at },
        patch: { next_invoice_date: null }
      }))
      yield* storage.workQueue.cancel(merchantId, "renewal", subscriptionId)
      yield* storage.workQueue.cancel(merchantId, "dunning", subscriptionId)
      return next.subscription
    })

    /**
     * Resumes a paused subscription: a new period starts now and is billed now. A schedule that
     * governs it keeps its cycles, and the dates of those still to come move with the new periods.
     */
    const resume = Effect.fn("Subscriptions.resume")(function* (merchantId: string, subscriptionId: string) {
      const pv = yield* version(
        merchantId,
        (yield* load(merchantId, subscriptionId)).value.subscription.price_version_id
      )
      const { at, merchant } = yield* transitionSub(merchantId, subscriptionId, "resume", (rec, at) => {
        const resumed = { ...rec, anchor: at, anchor_cycle: rec.subscription.cycle_index + 1 }
        const sc = rec.schedule ?? null
        const redate =
          Schedule.governs(sc) && rec.subscription.price_version_id === pv.price_version_id
            ? {
                schedule: Schedule.redated(
                  sc,
                  resumed.anchor_cycle,
                  (cycle) => BillingPeriod.period(scheduleOf(resumed, pv), periodIndex(resumed, cycle)),
                  at
                )
              }
            : {}
        return {
          record: { paused_at: null, anchor: at, anchor_cycle: resumed.anchor_cycle, ...redate },
          patch: { next_invoice_date: dt(at) }
        }
      })
      yield* schedule(merchant, "renewal", subscriptionId, at)
      yield* renewals.renew(merchantId, subscriptionId)
      return (yield* load(merchantId, subscriptionId)).value.subscription
    })

    /** Charges the next cycle now (customer-initiated renewal). */
    const renewNow = Effect.fn("Subscriptions.renewNow")(function* (merchantId: string, subscriptionId: string) {
      const sv = yield* load(merchantId, subscriptionId)
      yield* live(sv.value, "renew")
      if (sv.value.subscription.status === "past_due")
        return yield* new Errors.SubscriptionActionRefused({
          subscriptionId,
          state: "past_due",
          action: "renew",
          reason: "settle the open invoice first"
        })
      // a subscription ending at its period's end (a cancel then, its schedule's end) has no next
      // cycle to bill now: renewing would end it early (RenewalPlan.decide)
      const at = yield* nowOf(yield* merchants.get(merchantId))
      if (RenewalPlan.decide(sv.value, at, true)._tag === "NotDue")
        return yield* new Errors.SubscriptionActionRefused({
          subscriptionId,
          state: sv.value.subscription.status,
          action: "renew",
          reason: "it ends at its period's end, which it is paid for until: revoke the cancel first"
        })
      yield* renewals.renew(merchantId, subscriptionId, { force: true })
      return (yield* load(merchantId, subscriptionId)).value.subscription
    })

    /**
     * The subscription an invoice or a refund belongs to (a refund's through the invoice of its
     * trade): the list's search by `invoice_id` or `refund_id`. None when the merchant has no such
     * invoice or refund, or it belongs to no subscription.
     */
    const search = Effect.fn("Subscriptions.search")(function* (
      merchantId: string,
      by: { readonly invoiceId: string } | { readonly refundId: string }
    ) {
      const subscriptionId: Effect.Effect<string | null | undefined, unknown> =
        "invoiceId" in by
          ? Effect.map(invoices.get(merchantId, by.invoiceId), (found) =>
              Option.isSome(found) ? found.value.value.subscription_id : null
            )
          : Effect.flatMap(refunds.getRefund(merchantId, by.refundId), (refund) =>
              Effect.map(
                invoices.list(merchantId, {
                  filters: [{ column: "trade_id", op: "in", values: [refund.trade_id] }],
                  limit: 1
                }),
                (page) => page.list[0]?.subscription_id
              )
            )
      // a read that fails finds nothing, as an unknown id does
      const found = yield* Effect.option(subscriptionId)
      return Option.filter(Option.flatMap(found, Option.fromNullishOr), (id) => id !== "")
    })

    return {
      search,
      cancel,
      revokeCancel,
      pause,
      resume,
      renewNow
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
