/**
 * Dunning retries: a past-due subscription's open invoice charged again on the schedule of
 * its merchant's {@link DunningPolicy.Policy}.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import { nowOf } from "../kernel/ServiceSupport.js"
import { newTrade, submitTrade } from "./TradeStore.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { must } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Charges from "./Charges.js"
import * as Declines from "./Declines.js"
import * as Payments from "./Payments.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
import * as Trade from "./Trade.js"

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
 * Runs scheduled dunning retries.
 *
 * @since 0.1.0
 */
export class Dunning extends Context.Service<Dunning>()("@recur/core/Dunning", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const payments = yield* Payments.Payments
    const charges = yield* Charges.Charges
    const declines = yield* Declines.Declines
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, schedule, subEvents } = writes(storage)

    /** One retry of a past-due subscription's open invoice, with its saved card. */
    const retry = Effect.fn("Dunning.retry")(function* (merchantId: string, subscriptionId: string) {
      const merchant = yield* merchants.get(merchantId)
      const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )
      if (sv.value.subscription.status !== "past_due" || sv.value.payment_token === null)
        return Option.none<Payments.PaymentResult>()
      const open = (yield* Effect.orDie(
        invoices.list(merchantId, {
          limit: 100,
          filters: [
            { column: "subscription_id", op: "in", values: [subscriptionId] },
            { column: "biz_status", op: "in", values: ["retrying", "pending"] }
          ]
        })
      )).list
      const invoice = open.find((i) => i.trade_id !== null)
      if (!invoice) return Option.none<Payments.PaymentResult>()
      const tradeId = invoice.trade_id!
      const last = Option.getOrUndefined(yield* trades.get(merchantId, tradeId))
      if (
        last?.value.trade.trade_status === "payment_failed" &&
        last.value.trade.last_payment_error?.code === "authentication_required"
      ) {
        // the issuer wants the customer (3-D Secure): an off-session retry would only be declined
        // again; the invoice waits for them, the schedule goes on
        yield* declines.dunningWithoutCharge(merchantId, subscriptionId, tradeId)
        return Option.none<Payments.PaymentResult>()
      }
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const s = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
          yield* saveSub({ ...s.value, dunning_attempts: s.value.dunning_attempts + 1 }, s.version, at)
          const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
          // a declined charge, or one the processor could not take (nothing was charged)
          if (
            tv.value.trade.trade_status === "payment_failed" ||
            tv.value.trade.trade_status === "requires_payment_method"
          ) {
            yield* Effect.orDie(
              trades.update(
                {
                  ...tv.value,
                  attempts: tv.value.attempts + 1,
                  trade: Lifecycle.must(Trade.move(tv.value.trade, "submit_payment"))
                },
                tv.version
              )
            )
          }
          const iv = Option.getOrThrow(yield* invoices.get(merchantId, invoice.invoice_id))
          if (iv.value.biz_status === "retrying")
            yield* Effect.orDie(invoices.update(Lifecycle.must(Invoice.move(iv.value, "charge")), iv.version))
          yield* schedule(merchant, "charge", tradeId, at)
        })
      )
      return Option.some(yield* charges.chargeInvoiceTrade(merchantId, tradeId, sv.value.payment_token))
    })

    /** The failed invoice an unpaid subscription's recovery reopens: its latest cycle's. */
    const lastFailed = (merchantId: string, subscriptionId: string) =>
      Effect.map(
        Effect.orDie(
          invoices.list(merchantId, {
            limit: 100,
            filters: [
              { column: "subscription_id", op: "in", values: [subscriptionId] },
              { column: "biz_status", op: "in", values: ["failed"] }
            ]
          })
        ),
        (page) =>
          page.list.filter((i) => i.invoice_type !== "refund").sort((a, b) => b.cycle_index - a.cycle_index)[0] as
            | Invoice.Invoice
            | undefined
      )

    /**
     * Whether the customer can pay an invoice from its page: an open or retrying one with a trade,
     * or the failed invoice an unpaid subscription's recovery reopens.
     */
    const payable = Effect.fn("Dunning.payable")(function* (invoice: Invoice.Invoice) {
      if ((invoice.biz_status === "retrying" || invoice.biz_status === "open") && invoice.trade_id !== null) return true
      if (invoice.biz_status !== "failed" || invoice.subscription_id === null) return false
      const sv = yield* Effect.orDie(subs.get(invoice.merchant_id, invoice.subscription_id))
      if (Option.isNone(sv) || sv.value.value.subscription.status !== "unpaid") return false
      return (yield* lastFailed(invoice.merchant_id, invoice.subscription_id))?.invoice_id === invoice.invoice_id
    })

    /**
     * An unpaid subscription's way back: its last failed invoice is reopened with a new trade
     * (the closed one stays as history) and charged with `token`; success pays the invoice and
     * returns the subscription to `active` (`retry_succeeded`), as a dunning retry would.
     */
    const recoverUnpaid = (merchant: Merchant.Merchant, subscriptionId: string, token: string) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        const tradeId = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
              must(o, "subscription", subscriptionId)
            )
            if (sv.value.subscription.status !== "unpaid") return Option.none<string>()
            const last = yield* lastFailed(merchantId, subscriptionId)
            if (last === undefined) return Option.none<string>()
            const iv = Option.getOrThrow(yield* invoices.get(merchantId, last.invoice_id))
            const trade = yield* newTrade({
              merchant,
              amount: Result.getOrThrow(Money.parse(last.amount, last.currency)),
              customer_id: sv.value.subscription.customer_id,
              order_id: sv.value.subscription.order_id,
              payment_mode: "subscription",
              order_type: "renewal",
              session: Option.none(),
              line: null,
              tax: Result.getOrThrow(Money.parse(last.tax_amount, last.currency)),
              metadata: {},
              at
            })
            const moved = Invoice.move(iv.value, "reopen", { trade_id: trade.trade_id })
            // reopened by a concurrent payment between the two reads (PostgreSQL reads each
            // statement's own snapshot): a lost race, a `ConcurrentUpdate` rolled back — never a defect
            if (Result.isFailure(moved))
              return yield* Effect.die(new Errors.ConcurrentUpdate({ resource: "invoice", id: iv.value.invoice_id }))
            const reopened = moved.success.value
            yield* Effect.orDie(invoices.update(reopened, iv.version))
            yield* submitTrade(storage, { trade, invoice_id: reopened.invoice_id, subscription_id: subscriptionId, at })
            // a durable intent: if this process dies before the charge, a worker makes it
            yield* schedule(merchant, "charge", trade.trade_id, at)
            return Option.some(trade.trade_id)
          })
        )
        if (Option.isNone(tradeId)) return Option.none<Payments.PaymentResult>()
        return Option.some(yield* charges.chargeInvoiceTrade(merchantId, tradeId.value, token))
      })

    /**
     * The customer pays an open or retrying invoice with a card (the hosted invoice page's Pay
     * button): its trade is charged again, on-session, through the engine — a success pays the
     * invoice, brings a past-due subscription back and saves the card for what follows. The
     * latest failed invoice of an unpaid subscription is paid by making the card the
     * subscription's and reopening the invoice with it (as a new payment method does). Refused
     * (`StateConflict`) when the invoice is paid, refunded, another failed one, or a charge of it
     * is in flight.
     */
    const payInvoice = Effect.fn("Dunning.payInvoice")(function* (
      merchantId: string,
      invoiceId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource
    ) {
      const merchant = yield* merchants.get(merchantId)
      const source = Ports.sourceOf(payment)
      const malformed = Ports.malformedField(source)
      if (malformed === "card_number") return yield* new Errors.CardInvalid({ sessionId: invoiceId })
      if (malformed === "payment_method")
        return yield* new Errors.InvalidParameter({ param: "payment_method", reason: "is not a payment method id" })
      const refuse = (state: string, reason: string) =>
        new Errors.StateConflict({ resource: "invoice", id: invoiceId, state, reason })
      const found = yield* Effect.flatMap(invoices.get(merchantId, invoiceId), (o) => must(o, "invoice", invoiceId))
      if (found.value.biz_status === "failed") {
        // an unpaid subscription's last failed invoice: the card becomes the subscription's, and
        // the invoice is reopened and charged with it (the recovery a new payment method starts)
        if (!(yield* payable(found.value)) || found.value.subscription_id === null)
          return yield* refuse("failed", "only the latest failed invoice of an unpaid subscription can be paid")
        // a card whose issuer asks for 3-D Secure is challenged; the cardholder comes back to the
        // invoice's page, where `completeInvoiceCard` finishes
        const replaced = yield* replaceCard(
          merchant,
          found.value.subscription_id,
          source,
          found.value.hosted_invoice_url ?? undefined
        )
        if (replaced._tag === "RequiresAction") return yield* waitingFor(found.value, replaced.redirect_url)
        const paid = yield* recoverUnpaid(merchant, found.value.subscription_id, replaced.token)
        if (Option.isNone(paid)) return yield* refuse("failed", "the invoice could not be reopened")
        return paid.value
      }
      const tradeId = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* Effect.flatMap(invoices.get(merchantId, invoiceId), (o) => must(o, "invoice", invoiceId))
          const invoice = iv.value
          if ((invoice.biz_status !== "retrying" && invoice.biz_status !== "open") || invoice.trade_id === null)
            return yield* refuse(invoice.biz_status, "only an open or retrying invoice can be paid")
          const tv = yield* Effect.flatMap(trades.get(merchantId, invoice.trade_id), (o) =>
            must(o, "trade", invoice.trade_id!)
          )
          if (
            tv.value.trade.trade_status !== "payment_failed" &&
            tv.value.trade.trade_status !== "requires_payment_method"
          )
            return yield* refuse(invoice.biz_status, "a payment of this invoice is in progress")
          yield* trades
            .update(
              {
                ...tv.value,
                attempts: tv.value.attempts + 1,
                trade: Lifecycle.must(Trade.move(tv.value.trade, "submit_payment"))
              },
              tv.version
            )
            .pipe(
              Effect.catchTag("VersionConflict", () =>
                Effect.fail(refuse(invoice.biz_status, "a payment of this invoice is in progress"))
              ),
              Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
            )
          if (invoice.biz_status === "retrying")
            yield* Effect.orDie(invoices.update(Lifecycle.must(Invoice.move(invoice, "charge")), iv.version))
          return {
            tradeId: invoice.trade_id,
            attempt: tv.value.attempts + 1,
            trade: tv.value.trade,
            references: tv.value.charges ?? [],
            at
          }
        })
      )
      const outcome = yield* gateway.charge({
        trade_id: tradeId.tradeId,
        attempt: tradeId.attempt,
        merchant_id: merchantId,
        customer_id: tradeId.trade.customer_id,
        amount: Result.getOrThrow(Money.parse(tradeId.trade.amount, tradeId.trade.currency)),
        source,
        off_session: false,
        references: tradeId.references,
        // a processor's 3-D Secure page sends the payer back to the invoice's page
        ...(found.value.hosted_invoice_url !== null ? { return_url: found.value.hosted_invoice_url } : {})
      })
      return yield* Effect.orDie(payments.applyOutcome(merchantId, tradeId.tradeId, outcome))
    })

    /** A failed invoice's payment that waits for its card's 3-D Secure: where to send the cardholder. */
    const waitingFor = (invoice: Invoice.Invoice, redirectUrl: string) =>
      Effect.gen(function* () {
        const tv = yield* Effect.flatMap(trades.get(invoice.merchant_id, invoice.trade_id ?? ""), (o) =>
          must(o, "trade", invoice.trade_id ?? "")
        )
        // the payment's status (not a record's): the cardholder has to act
        const status = "requires_action" as Payments.PaymentResult["status"]
        return {
          status,
          trade: tv.value.trade,
          subscription: Option.none(),
          redirect_url: Option.some(redirectUrl),
          error: Option.none()
        } satisfies Payments.PaymentResult as Payments.PaymentResult
      })

    /**
     * The cardholder is back on a failed invoice's page from their new card's 3-D Secure challenge
     * (`setupId`, the processor's): saved, the card becomes the unpaid subscription's and the
     * invoice is reopened and charged with it, as {@link payInvoice} does; still waiting, where to
     * send them again; refused, nothing changes (`InvalidParameter`). Only the latest failed invoice of
     * an unpaid subscription (`StateConflict` otherwise).
     */
    const completeInvoiceCard = Effect.fn("Dunning.completeInvoiceCard")(function* (
      merchantId: string,
      invoiceId: string,
      setupId: string
    ) {
      const merchant = yield* merchants.get(merchantId)
      const found = yield* Effect.flatMap(invoices.get(merchantId, invoiceId), (o) => must(o, "invoice", invoiceId))
      const invoice = found.value
      if (invoice.biz_status !== "failed" || invoice.subscription_id === null || !(yield* payable(invoice)))
        return yield* new Errors.StateConflict({
          resource: "invoice",
          id: invoiceId,
          state: invoice.biz_status,
          reason: "only the latest failed invoice of an unpaid subscription can be paid"
        })
      if (gateway.completeSaveCard === undefined)
        return yield* new Errors.InvalidParameter({ param: "setup_intent", reason: "is not a card set-up" })
      const sv = yield* Effect.flatMap(subs.get(merchantId, invoice.subscription_id), (o) =>
        must(o, "subscription", invoice.subscription_id!)
      )
      const outcome = yield* gateway.completeSaveCard({
        merchant_id: merchantId,
        customer_id: sv.value.subscription.customer_id,
        setup_id: setupId
      })
      const replaced = yield* useSaved(merchant, invoice.subscription_id, "payment_method", outcome)
      if (replaced._tag === "RequiresAction") return yield* waitingFor(invoice, replaced.redirect_url)
      const paid = yield* recoverUnpaid(merchant, invoice.subscription_id, replaced.token)
      if (Option.isNone(paid))
        return yield* new Errors.StateConflict({
          resource: "invoice",
          id: invoiceId,
          state: "failed",
          reason: "the invoice could not be reopened"
        })
      return paid.value
    })

    /**
     * Checks and saves a card with the gateway (nothing charged) and makes it the live
     * subscription's payment method (`update_payment_method`, with its event). A refused card
     * changes nothing (`InvalidParameter` naming `card_number`).
     */
    const replaceCard = (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource,
      returnUrl?: string
    ) =>
      Effect.gen(function* () {
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
          ...(returnUrl !== undefined ? { return_url: returnUrl } : {})
        })
        return yield* useSaved(
          merchant,
          subscriptionId,
          source._tag === "Card" ? "card_number" : "payment_method",
          saved
        )
      })

    /**
     * What a card saving answered, applied to the live subscription: saved, the card becomes its
     * payment method (`update_payment_method`, with its event); waiting for 3-D Secure, where to
     * send the cardholder; refused, nothing changes (`InvalidParameter` naming `param`).
     */
    const useSaved = (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      param: "card_number" | "payment_method",
      saved: Ports.SaveCardOutcome
    ) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        if (saved._tag === "Failed") return yield* new Errors.InvalidParameter({ param, reason: saved.message })
        if (saved._tag === "Unavailable") return yield* unavailableToSave(saved)
        if (saved._tag === "RequiresAction")
          return { _tag: "RequiresAction" as const, redirect_url: saved.redirect_url }
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
    const updatePaymentMethod = Effect.fn("Dunning.updatePaymentMethod")(function* (
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
            ? yield* retry(merchantId, subscriptionId)
            : rec.subscription.status === "unpaid"
              ? yield* recoverUnpaid(merchant, subscriptionId, token)
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
    const updatePaymentMethodOnSession = Effect.fn("Dunning.updatePaymentMethodOnSession")(function* (
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
    const completePaymentMethod = Effect.fn("Dunning.completePaymentMethod")(function* (
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
      retry,
      payInvoice,
      updatePaymentMethod,
      updatePaymentMethodOnSession,
      completePaymentMethod,
      completeInvoiceCard,
      payable
    } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
