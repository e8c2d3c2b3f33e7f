/**
 * The facade's checkout and subscriptions groups: the same services and the same request
 * decoding (`@recur/contract`'s `Requests`) as the REST handlers of `/api/v1/session` and
 * `/api/v1/subscription`.
 *
 * @since 0.1.0
 */
import { BillingAnchors, CollectionRequests, CurrentUsage, RequestBodies, Requests } from "@recur/contract"
import {
  Billing,
  BillingPeriod,
  Checkout,
  CheckoutSession,
  Invoice,
  Lifecycle,
  Metering,
  PaymentMethods,
  type Ports,
  PriceChanges,
  Renewals,
  SentInvoices,
  SessionPayments,
  Subscription,
  Subscriptions,
  Trade,
  Usage
} from "@recur/core"
import { Effect, Option, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, inFilter, json, type Kit, named, page, pageJson } from "./Kit.js"
import { type PaymentJson, UsageBatchInput, UsageInput } from "./Types.js"

/** A decoded card or collected payment method, as the engine takes it. */
const paymentOf = (p: typeof RequestBodies.Payment.Type): Ports.CardInput | Ports.NewPaymentSource =>
  "payment_method" in p ? { _tag: "PaymentMethod", id: p.payment_method } : p

const payment = (r: Billing.PaymentResult): PaymentJson => {
  const common = {
    trade: json(Trade.Trade)(r.trade),
    subscription: Option.match(r.subscription, { onNone: () => null, onSome: json(Subscription.Subscription) }),
    redirect_url: Option.getOrNull(r.redirect_url)
  }
  switch (r.status) {
    case "failed":
      // a decline always says why (as the REST API's 402 does when the processor gave no reason)
      return {
        ...common,
        status: r.status,
        error: Option.getOrElse(r.error, () => ({ code: "card_declined", message: "The payment failed." }))
      }
    case "unavailable":
      return {
        ...common,
        status: r.status,
        error: Option.getOrElse(r.error, () => ({
          code: "processor_unavailable",
          message: "Payments are temporarily unavailable. Nothing was charged; try again in a few minutes."
        }))
      }
    default:
      return { ...common, status: r.status, error: null }
  }
}

/** `checkout`. @since 0.1.0 */
export const checkout = ({ run }: Kit<Services>): BillingClient["checkout"] => ({
  createSession: (merchantId, input) =>
    run(
      decode(RequestBodies.CreateSession, input).pipe(
        Effect.flatMap(BillingAnchors.anchoredSessionCommand),
        Effect.flatMap((command) => Checkout.Checkout.use((c) => c.createSession(merchantId, command))),
        Effect.map(json(CheckoutSession.CheckoutSession))
      )
    ),
  getSession: (merchantId, sessionId) =>
    run(
      id("session_id", sessionId).pipe(
        Effect.flatMap((s) => Checkout.Checkout.use((c) => c.getSession(merchantId, s))),
        Effect.map(json(CheckoutSession.CheckoutSession))
      )
    ),
  pay: (merchantId, sessionId, card) =>
    run(
      SessionPayments.SessionPayments.use((sessionPayments) =>
        Effect.all([id("session_id", sessionId), decode(RequestBodies.Payment, card)]).pipe(
          Effect.flatMap(([s, c]) => sessionPayments.paySession(merchantId, s, paymentOf(c))),
          Effect.map(payment)
        )
      )
    )
})

const Statuses = Schema.Array(Lifecycle.SubscriptionStatus).annotate({ identifier: "status" })
const CycleUnit = BillingPeriod.BillingCycleUnit.annotate({ identifier: "billing_cycle_unit" })

/** `subscriptions`. @since 0.1.0 */
export const subscriptions = ({ run }: Kit<Services>): BillingClient["subscriptions"] => {
  const subs = <A, E>(f: (s: Subscriptions.Subscriptions["Service"]) => Effect.Effect<A, E>) =>
    run(Subscriptions.Subscriptions.use(f))
  const lifecycle =
    (
      move: (
        s: Subscriptions.Subscriptions["Service"],
        merchantId: string,
        id: string
      ) => Effect.Effect<Subscription.Subscription, unknown>
    ) =>
    (merchantId: string, subscriptionId: string) =>
      subs((s) =>
        id("subscription_id", subscriptionId).pipe(
          Effect.flatMap((i) => move(s, merchantId, i)),
          Effect.map(json(Subscription.Subscription))
        )
      )
  return {
    list: (merchantId, filter = {}) =>
      run(
        Effect.gen(function* () {
          const p = yield* page(filter)
          const statuses = filter.status === undefined ? undefined : yield* named("status", Statuses, filter.status)
          const unit =
            filter.billing_cycle_unit === undefined
              ? undefined
              : yield* named("billing_cycle_unit", CycleUnit, filter.billing_cycle_unit)
          const billing = yield* Billing.Billing
          return yield* billing.listSubscriptions(merchantId, {
            ...p,
            filters: [
              ...inFilter("id", filter.subscription_ids),
              ...inFilter("status", statuses),
              ...inFilter("customer_id", filter.customer_id !== undefined ? [filter.customer_id] : undefined),
              ...inFilter("billing_cycle_unit", unit !== undefined ? [unit] : undefined)
            ]
          })
        }).pipe(Effect.map(pageJson(Subscription.Subscription)))
      ),
    get: (merchantId, subscriptionId) =>
      run(
        id("subscription_id", subscriptionId).pipe(
          Effect.flatMap((s) => Billing.Billing.use((b) => b.getSubscription(merchantId, s))),
          Effect.map(json(Subscription.Subscription))
        )
      ),
    previewChange: (merchantId, subscriptionId, input) =>
      run(
        PriceChanges.PriceChanges.use((priceChanges) =>
          decode(RequestBodies.ChangePrice, input).pipe(
            Effect.flatMap((i) => Requests.changeCommand(subscriptionId, i)),
            Effect.flatMap((c) => priceChanges.previewChange(merchantId, c))
          )
        )
      ),
    change: (merchantId, subscriptionId, input) =>
      run(
        PriceChanges.PriceChanges.use((priceChanges) =>
          decode(RequestBodies.ChangePrice, input).pipe(
            Effect.flatMap((i) => Requests.changeCommand(subscriptionId, i)),
            Effect.flatMap((c) => priceChanges.changePrice(merchantId, c))
          )
        )
      ),
    revokePriceChange: (merchantId, subscriptionId) =>
      run(
        id("subscription_id", subscriptionId).pipe(
          Effect.flatMap((i) => PriceChanges.PriceChanges.use((p) => p.revokePriceChange(merchantId, i)))
        )
      ),
    cancel: (merchantId, subscriptionId, input = {}) =>
      subs((s) =>
        decode(RequestBodies.Cancel, input).pipe(
          Effect.flatMap((i) => Requests.cancelCommand(subscriptionId, i)),
          Effect.flatMap((c) => s.cancel(merchantId, c)),
          Effect.map(json(Subscription.Subscription))
        )
      ),
    revokeCancel: lifecycle((s, m, i) => s.revokeCancel(m, i)),
    pause: lifecycle((s, m, i) => s.pause(m, i)),
    resume: lifecycle((s, m, i) => s.resume(m, i)),
    setCollection: (merchantId, subscriptionId, input) =>
      run(
        Effect.all([id("subscription_id", subscriptionId), decode(CollectionRequests.SetCollection, input)]).pipe(
          Effect.flatMap(([i, body]) => SentInvoices.SentInvoices.use((s) => s.setCollection(merchantId, i, body)))
        )
      ),
    renewNow: lifecycle((s, m, i) => s.renewNow(m, i)),
    updatePaymentMethod: (merchantId, subscriptionId, card) =>
      run(
        PaymentMethods.PaymentMethods.use((paymentMethods) =>
          Effect.all([id("subscription_id", subscriptionId), decode(RequestBodies.Payment, card)]).pipe(
            Effect.flatMap(([i, c]) => paymentMethods.updatePaymentMethod(merchantId, i, paymentOf(c)))
          )
        )
      ),
    upcomingInvoice: (merchantId, subscriptionId) =>
      run(
        Renewals.Renewals.use((renewals) =>
          id("subscription_id", subscriptionId).pipe(
            Effect.flatMap((i) => renewals.upcoming(merchantId, i)),
            Effect.map((o) => (Option.isSome(o) ? json(Invoice.UpcomingInvoice)(o.value) : null))
          )
        )
      ),
    currentUsage: (merchantId, subscriptionId) =>
      run(
        Metering.Metering.use((metering) =>
          id("subscription_id", subscriptionId).pipe(
            Effect.flatMap((i) => metering.currentUsage(merchantId, i)),
            Effect.map(CurrentUsage.currentUsageJson)
          )
        )
      ),
    usage: (merchantId, subscriptionId, cycleIndex) =>
      run(
        Metering.Metering.use((metering) =>
          id("subscription_id", subscriptionId).pipe(
            Effect.flatMap((i) => metering.usageSummary(merchantId, i, cycleIndex)),
            Effect.map(json(Usage.UsageSummary))
          )
        )
      ),
    recordUsage: (merchantId, subscriptionId, input) =>
      run(
        Metering.Metering.use((metering) =>
          decode(UsageInput, input).pipe(
            Effect.flatMap((i) => Requests.usageEvent(subscriptionId, i)),
            Effect.flatMap((e) => metering.recordUsage(merchantId, e))
          )
        )
      ),
    recordUsageBatch: (merchantId, records) =>
      run(
        Metering.Metering.use((metering) =>
          decode(UsageBatchInput, { records }).pipe(
            Effect.flatMap((i) => Requests.usageEvents(i.records)),
            Effect.flatMap((e) => metering.recordUsageBatch(merchantId, e))
          )
        )
      )
  }
}
