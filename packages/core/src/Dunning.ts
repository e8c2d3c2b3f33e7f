/**
 * Dunning retries: a past-due subscription's open invoice charged again on the schedule of
 * its merchant's {@link DunningPolicy.Policy}.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "./Entities.js"
import * as Errors from "./Errors.js"
import * as Invoice from "./Invoice.js"
import { nowOf } from "./internal/engine.js"
import { must, newTrade, submitTrade, writes } from "./internal/records.js"
import * as Lifecycle from "./Lifecycle.js"
import type * as Merchant from "./Merchant.js"
import * as Merchants from "./Merchants.js"
import * as Money from "./Money.js"
import * as Payments from "./Payments.js"
import * as Ports from "./Ports.js"
import * as Store from "./Store.js"
import * as Trade from "./Trade.js"

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
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, schedule, subEvents } = writes(storage)

    /** One retry of a past-due subscription's open invoice, with its saved card. */
    const retry = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
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
        yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const s = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
            yield* saveSub({ ...s.value, dunning_attempts: s.value.dunning_attempts + 1 }, s.version, at)
            const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
            if (tv.value.trade.trade_status === "payment_failed") {
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
        return Option.some(yield* payments.chargeInvoiceTrade(merchantId, tradeId, sv.value.payment_token))
      }).pipe(Effect.withSpan("Dunning.retry"))

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
    const payable = (invoice: Invoice.Invoice) =>
      Effect.gen(function* () {
        if ((invoice.biz_status === "retrying" || invoice.biz_status === "open") && invoice.trade_id !== null)
          return true
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
            const reopened = Lifecycle.must(Invoice.move(iv.value, "reopen", { trade_id: trade.trade_id }))
            yield* Effect.orDie(invoices.update(reopened, iv.version))
            yield* submitTrade(storage, { trade, invoice_id: reopened.invoice_id, subscription_id: subscriptionId, at })
            // a durable intent: if this process dies before the charge, a worker makes it
            yield* schedule(merchant, "charge", trade.trade_id, at)
            return Option.some(trade.trade_id)
          })
        )
        if (Option.isNone(tradeId)) return Option.none<Payments.PaymentResult>()
        return Option.some(yield* payments.chargeInvoiceTrade(merchantId, tradeId.value, token))
      })

    /**
     * The customer pays an open or retrying invoice with a card (the hosted invoice page's Pay
     * button): its trade is charged again, on-session, through the engine — a success pays the
     * invoice, brings a past-due subscription back and saves the card for what follows. The
     * latest failed invoice of an unpaid subscription is paid by making the card the
     * subscription's and reopening the invoice with it (as a new payment method does). Refused
     * (409) when the invoice is paid, refunded, another failed one, or a charge of it is in flight.
     */
    const payInvoice = (merchantId: string, invoiceId: string, payment: Ports.CardInput | Ports.NewPaymentSource) =>
      Effect.gen(function* () {
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
          const replaced = yield* replaceCard(merchant, found.value.subscription_id, source)
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
            if (tv.value.trade.trade_status !== "payment_failed")
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
      }).pipe(Effect.withSpan("Dunning.payInvoice"))

    /**
     * Checks and saves a card with the gateway (nothing charged) and makes it the live
     * subscription's payment method (`update_payment_method`, with its event). A refused card
     * changes nothing (400 on `card_number`).
     */
    const replaceCard = (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource
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
          source
        })
        if (saved._tag === "Failed")
          return yield* new Errors.InvalidParameter({
            param: source._tag === "Card" ? "card_number" : "payment_method",
            reason: saved.message
          })
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
        return { rec, payment_method, token: saved.token }
      })

    /**
     * Replaces a live subscription's payment method: the card is checked and saved by the
     * gateway (nothing charged), then becomes what renewals charge. On a `past_due` subscription
     * the open invoice is retried at once with it, on an `unpaid` one its last failed invoice is
     * reopened and charged — a success returns the subscription to `active` and reschedules its
     * renewals, with the same events as a successful dunning retry.
     * A refused card changes nothing (400 on `card_number`).
     */
    const updatePaymentMethod = (
      merchantId: string,
      subscriptionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource
    ) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const { payment_method, rec, token } = yield* replaceCard(merchant, subscriptionId, payment)
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
      }).pipe(Effect.withSpan("Dunning.updatePaymentMethod"))

    return { retry, payInvoice, updatePaymentMethod, payable } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
