/**
 * Payment methods: a live subscription's card replaced — checked and saved by the processor
 * (nothing charged), possibly after the cardholder's 3-D Secure challenge — and what follows:
 * a past-due subscription retried at once with it (`Dunning.retry`), an unpaid one's last
 * failed invoice reopened and charged (`Dunning.recoverUnpaid`).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { must, nowOf } from "../kernel/ServiceSupport.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Dunning from "./Dunning.js"
import type * as Payments from "./Payments.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"

/**
 * A card that could not be checked because the processor is unavailable (or refuses the
 * merchant's set-up): nothing changed, not the card's fault; the payer tries again later.
 */
const unavailableToSave = (outcome: Ports.UnavailableReason) =>
  Effect.andThen(
    Effect.logWarning(
      `the processor could not check a card (${outcome.reason}: ${outcome.code}); nothing changed`
    ).pipe(
      Effect.annotateLogs({ event: "recur.payment.processor_unavailable", reason: outcome.reason, code: outcome.code })
    ),
    Effect.fail(
      new Errors.InvalidRequest({
        reason:
          outcome.reason === "merchant_configuration"
            ? `this merchant cannot take payments now (${outcome.message}): the card was not checked and nothing was changed or charged`
            : "payments are temporarily unavailable: the card was not checked and nothing was changed or charged; try again in a few minutes"
      })
    )
  )

/**
 * The payment methods service.
 *
 * @since 0.1.0
 */
export class PaymentMethods extends Context.Service<PaymentMethods>()("@recur/core/PaymentMethods", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const dunning = yield* Dunning.Dunning
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const { saveSub, subEvents } = writes(storage)

    /**
     * Checks and saves a card with the gateway (nothing charged) and makes it the live
     * subscription's payment method (`update_payment_method`, with its event). A refused card
     * changes nothing (`InvalidParameter` naming `card_number`).
     */
    const replaceCard = Effect.fn("PaymentMethods.replaceCard")(function* (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource,
      returnUrl?: string
    ) {
      const merchantId = merchant.merchant_id
      const current = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )
      if (
        Result.isFailure(
          Lifecycle.transition(Lifecycle.subscription, current.value.subscription.status, "update_payment_method")
        )
      )
        return yield* new Errors.StateConflict({
          resource: "subscription",
          id: subscriptionId,
          state: current.value.subscription.status,
          reason: "only a live subscription's payment method can be replaced"
        })
      const source = Ports.sourceOf(payment)
      const malformed = Ports.malformedField(source)
      if (malformed !== undefined)
        return yield* new Errors.InvalidParameter({
          param: malformed,
          reason: malformed === "card_number" ? "is not a valid card number" : "is not a payment method id"
        })
      const saved = yield* gateway.saveCard({
        merchant_id: merchantId,
        customer_id: current.value.subscription.customer_id,
        source,
        now: yield* nowOf(merchant),
        ...(returnUrl !== undefined ? { return_url: returnUrl } : {})
      })
      return yield* useSaved(merchant, subscriptionId, source._tag === "Card" ? "card_number" : "payment_method", saved)
    })

    /**
     * What a card saving answered, applied to the live subscription: saved, the card becomes its
     * payment method (`update_payment_method`, with its event); waiting for 3-D Secure, where to
     * send the cardholder; refused, nothing changes (`InvalidParameter` naming `param`).
     */
    const useSaved = Effect.fn("PaymentMethods.useSaved")(function* (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      param: "card_number" | "payment_method",
      saved: Ports.SaveCardOutcome
    ) {
      const merchantId = merchant.merchant_id
      if (saved._tag === "Failed") return yield* new Errors.InvalidParameter({ param, reason: saved.message })
      if (saved._tag === "Unavailable") return yield* unavailableToSave(saved)
      if (saved._tag === "RequiresAction") return { _tag: "RequiresAction" as const, redirect_url: saved.redirect_url }
      const payment_method: Entities.PaymentMethod = {
        brand: saved.brand,
        last4: saved.last4,
        exp_month: saved.exp_month,
        exp_year: saved.exp_year
      }
      const rec = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          const moved = Lifecycle.transition(
            Lifecycle.subscription,
            sv.value.subscription.status,
            "update_payment_method"
          )
          if (Result.isFailure(moved))
            return yield* new Errors.StateConflict({
              resource: "subscription",
              id: subscriptionId,
              state: sv.value.subscription.status,
              reason: "only a live subscription's payment method can be replaced"
            })
          const next = { ...sv.value, payment_token: saved.token, payment_method }
          yield* saveSub(next, sv.version, at)
          yield* subEvents(merchantId, next, moved.success.events, at)
          return next
        })
      )
      return { _tag: "Saved" as const, rec, payment_method, token: saved.token }
    })

    /** A card that must be saved now (no cardholder to challenge): a 3-D Secure request refuses it. */
    const savedNow = <A extends { readonly _tag: string }, E, R>(
      param: "card_number" | "payment_method",
      replaced: Effect.Effect<A, E, R>
    ) =>
      Effect.flatMap(replaced, (r) =>
        r._tag === "RequiresAction"
          ? Effect.fail(
              new Errors.InvalidParameter({
                param,
                reason: "the card's issuer asks for authentication (3-D Secure), which needs the cardholder's browser"
              })
            )
          : Effect.succeed(r as Extract<A, { readonly _tag: "Saved" }>)
      )

    /**
     * Replaces a live subscription's payment method: the card is checked and saved by the
     * gateway (nothing charged), then becomes what renewals charge. On a `past_due` subscription
     * the open invoice is retried at once with it, on an `unpaid` one its last failed invoice is
     * reopened and charged — a success returns the subscription to `active` and reschedules its
     * renewals, with the same events as a successful dunning retry.
     * A refused card changes nothing (`InvalidParameter` naming `card_number`).
     */
    const updatePaymentMethod = Effect.fn("PaymentMethods.updatePaymentMethod")(function* (
      merchantId: string,
      subscriptionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource
    ) {
      const merchant = yield* merchants.get(merchantId)
      const source = Ports.sourceOf(payment)
      const replaced = yield* savedNow(
        source._tag === "Card" ? "card_number" : "payment_method",
        replaceCard(merchant, subscriptionId, payment)
      )
      return yield* afterReplaced(merchant, subscriptionId, replaced)
    })

    /**
     * A live subscription's new card, saved: a past-due subscription is retried at once with it,
     * an unpaid one's last failed invoice reopened and charged (see {@link updatePaymentMethod}).
     */
    const afterReplaced = (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      replaced: {
        readonly rec: Entities.SubscriptionRecord
        readonly payment_method: Entities.PaymentMethod
        readonly token: string
      }
    ) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        const { payment_method, rec, token } = replaced
        // a past-due subscription is retried now, with the new card; an unpaid one's last invoice is reopened
        const retried =
          rec.subscription.status === "past_due"
            ? yield* dunning.retry(merchantId, subscriptionId)
            : rec.subscription.status === "unpaid"
              ? yield* dunning.recoverUnpaid(merchant, subscriptionId, token)
              : Option.none<Payments.PaymentResult>()
        const after = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
          must(o, "subscription", subscriptionId)
        )
        return {
          subscription_id: subscriptionId,
          status: after.value.subscription.status,
          payment_method,
          retry: Option.match(retried, {
            onNone: () => null,
            onSome: (r) => ({ trade_id: r.trade.trade_id, trade_status: r.trade.trade_status })
          })
        }
      })

    /**
     * {@link updatePaymentMethod} with the cardholder at a page of ours (the portal): a card whose
     * issuer asks for 3-D Secure is challenged — the answer is where to send the cardholder, who
     * comes back to `returnUrl` (with the processor's `setup_intent`), where
     * {@link completePaymentMethod} finishes. Otherwise as `updatePaymentMethod`, `redirect_url` none.
     */
    const updatePaymentMethodOnSession = Effect.fn("PaymentMethods.updatePaymentMethodOnSession")(function* (
      merchantId: string,
      subscriptionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource,
      returnUrl: string
    ) {
      const merchant = yield* merchants.get(merchantId)
      const replaced = yield* replaceCard(merchant, subscriptionId, payment, returnUrl)
      if (replaced._tag === "RequiresAction") return { redirect_url: Option.some(replaced.redirect_url) }
      yield* afterReplaced(merchant, subscriptionId, replaced)
      return { redirect_url: Option.none<string>() }
    })

    /**
     * The cardholder is back from a card set-up's 3-D Secure challenge (`setupId`, the
     * processor's): the gateway is asked how it ended; saved, the card becomes the subscription's
     * as {@link updatePaymentMethod} does (a past-due one retried, an unpaid one's invoice
     * reopened); still waiting, where to send them again; failed, nothing changes
     * (`InvalidParameter`). A set-up made for another customer is refused.
     */
    const completePaymentMethod = Effect.fn("PaymentMethods.completePaymentMethod")(function* (
      merchantId: string,
      subscriptionId: string,
      setupId: string
    ) {
      const merchant = yield* merchants.get(merchantId)
      const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )
      if (gateway.completeSaveCard === undefined)
        return yield* new Errors.InvalidParameter({ param: "setup_intent", reason: "is not a card set-up" })
      const outcome = yield* gateway.completeSaveCard({
        merchant_id: merchantId,
        customer_id: sv.value.subscription.customer_id,
        setup_id: setupId
      })
      const replaced = yield* useSaved(merchant, subscriptionId, "payment_method", outcome)
      if (replaced._tag === "RequiresAction") return { redirect_url: Option.some(replaced.redirect_url) }
      yield* afterReplaced(merchant, subscriptionId, replaced)
      return { redirect_url: Option.none<string>() }
    })

    return {
      updatePaymentMethod,
      updatePaymentMethodOnSession,
      completePaymentMethod,
      replaceCard,
      useSaved
    } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
