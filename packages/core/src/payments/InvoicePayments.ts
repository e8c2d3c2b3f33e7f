/**
 * Invoice payments: the customer pays an open, retrying or (an unpaid subscription's latest)
 * failed invoice from its hosted page — charged on session through the engine
 * (`Payments.applyOutcome`), or with a new card that becomes the subscription's
 * (`PaymentMethods`) and reopens the invoice (`Dunning.recoverUnpaid`), possibly after the
 * card's 3-D Secure challenge.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import { must, nowOf } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Dunning from "./Dunning.js"
import * as PaymentMethods from "./PaymentMethods.js"
import * as Payments from "./Payments.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
import * as Trade from "./Trade.js"
import { newTrade, submitTrade } from "./TradeStore.js"

/**
 * The invoice payments service.
 *
 * @since 0.1.0
 */
export class InvoicePayments extends Context.Service<InvoicePayments>()("@recur/core/InvoicePayments", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const payments = yield* Payments.Payments
    const dunning = yield* Dunning.Dunning
    const paymentMethods = yield* PaymentMethods.PaymentMethods
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)

    /**
     * The customer pays an open or retrying invoice with a card (the hosted invoice page's Pay
     * button): its trade is charged again, on-session, through the engine — a success pays the
     * invoice, brings a past-due subscription back and saves the card for what follows. The
     * latest failed invoice of an unpaid subscription is paid by making the card the
     * subscription's and reopening the invoice with it (as a new payment method does). Refused
     * (`StateConflict`) when the invoice is paid, refunded, another failed one, or a charge of it
     * is in flight.
     */
    const payInvoice = Effect.fn("InvoicePayments.payInvoice")(function* (
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
      // a one-off invoice (no subscription) is paid with the card given, failed or open alike
      const oneOff = Invoice.isStandalone(found.value.invoice_type)
      if (found.value.biz_status === "failed" && !oneOff) {
        // an unpaid subscription's last failed invoice: the card becomes the subscription's, and
        // the invoice is reopened and charged with it (the recovery a new payment method starts)
        if (!(yield* dunning.payable(found.value)) || found.value.subscription_id === null)
          return yield* refuse("failed", "only the latest failed invoice of an unpaid subscription can be paid")
        // a card whose issuer asks for 3-D Secure is challenged; the cardholder comes back to the
        // invoice's page, where `completeInvoiceCard` finishes
        const replaced = yield* paymentMethods.replaceCard(
          merchant,
          found.value.subscription_id,
          source,
          found.value.hosted_invoice_url ?? undefined
        )
        if (replaced._tag === "RequiresAction") return yield* waitingFor(found.value, replaced.redirect_url)
        const paid = yield* dunning.recoverUnpaid(merchant, found.value.subscription_id, replaced.token)
        if (Option.isNone(paid)) return yield* refuse("failed", "the invoice could not be reopened")
        return paid.value
      }
      const tradeId = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* Effect.flatMap(invoices.get(merchantId, invoiceId), (o) => must(o, "invoice", invoiceId))
          const invoice = iv.value
          if (invoice.biz_status === "uncollectible" && Invoice.isIssued(invoice)) {
            // written off, its trade closed: a new trade for what it owes, charged on session; the
            // invoice stays uncollectible until the charge succeeds (`uncollectible → paid`)
            const old =
              invoice.trade_id === null
                ? undefined
                : Option.getOrUndefined(yield* trades.get(merchantId, invoice.trade_id))
            // one charge in flight per invoice: a payment on its page still waiting for its answer
            // (sent, or its payer's 3-D Secure challenge) is not doubled by another card
            if (old?.value.trade.trade_status === "processing")
              return yield* refuse(invoice.biz_status, "a payment of this invoice is in progress")
            const trade = yield* newTrade({
              merchant,
              amount: Result.getOrThrow(Money.parse(invoice.amount, invoice.currency)),
              customer_id: invoice.customer_id,
              order_id: invoice.order_id,
              payment_mode: invoice.subscription_id === null ? "onetime_payment" : "subscription",
              order_type: old?.value.trade.order_type ?? (invoice.subscription_id === null ? "one_time" : "renewal"),
              session: Option.none(),
              line: null,
              tax: Result.getOrThrow(Money.parse(invoice.tax_amount, invoice.currency, { allowNegative: true })),
              metadata: {},
              at
            })
            yield* invoices
              .update(
                new Invoice.Invoice({ ...invoice, trade_id: trade.trade_id }, { disableChecks: true }),
                iv.version
              )
              .pipe(
                Effect.catchTag("VersionConflict", () =>
                  Effect.fail(refuse(invoice.biz_status, "a payment of this invoice is in progress"))
                ),
                Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
              )
            const submitted = yield* submitTrade(storage, {
              trade,
              invoice_id: invoice.invoice_id,
              subscription_id: invoice.subscription_id,
              at
            })
            return { tradeId: trade.trade_id, attempt: 1, trade: submitted, references: [], at }
          }
          const payable =
            invoice.biz_status === "retrying" ||
            invoice.biz_status === "open" ||
            (oneOff && invoice.biz_status === "failed") ||
            // a one-off invoice whose charge the processor could not take (its trade waits for a card)
            (oneOff && invoice.biz_status === "pending")
          if (!payable || invoice.trade_id === null)
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
          if (invoice.biz_status === "retrying" || (oneOff && invoice.biz_status === "open"))
            yield* Effect.orDie(invoices.update(Lifecycle.must(Invoice.move(invoice, "charge")), iv.version))
          else if (oneOff && invoice.biz_status === "failed")
            yield* Effect.orDie(invoices.update(Lifecycle.must(Invoice.move(invoice, "reopen")), iv.version))
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
        now: tradeId.at,
        // a processor's 3-D Secure page sends the payer back to the invoice's page
        ...(found.value.hosted_invoice_url !== null ? { return_url: found.value.hosted_invoice_url } : {})
      })
      return yield* Effect.orDie(payments.applyOutcome(merchantId, tradeId.tradeId, outcome, { onSession: true }))
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
    const completeInvoiceCard = Effect.fn("InvoicePayments.completeInvoiceCard")(function* (
      merchantId: string,
      invoiceId: string,
      setupId: string
    ) {
      const merchant = yield* merchants.get(merchantId)
      const found = yield* Effect.flatMap(invoices.get(merchantId, invoiceId), (o) => must(o, "invoice", invoiceId))
      const invoice = found.value
      if (invoice.biz_status !== "failed" || invoice.subscription_id === null || !(yield* dunning.payable(invoice)))
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
      const replaced = yield* paymentMethods.useSaved(merchant, invoice.subscription_id, "payment_method", outcome)
      if (replaced._tag === "RequiresAction") return yield* waitingFor(invoice, replaced.redirect_url)
      const paid = yield* dunning.recoverUnpaid(merchant, invoice.subscription_id, replaced.token)
      if (Option.isNone(paid))
        return yield* new Errors.StateConflict({
          resource: "invoice",
          id: invoiceId,
          state: "failed",
          reason: "the invoice could not be reopened"
        })
      return paid.value
    })

    return { payInvoice, completeInvoiceCard } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
