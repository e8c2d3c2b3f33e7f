/**
 * What a merchant does to an invoice after it is built: finalise a draft (a renewal's invoice in
 * the merchant's grace period: numbered, then charged or settled), void an unpaid one (nothing
 * owed; an issued one keeps its number and its document says VOID), or mark it uncollectible
 * (owed but written off; dunning stops). Each through the invoice machine, its event in the same
 * transaction; a past-due subscription whose invoice is closed this way returns to `active`
 * through the subscription machine (docs/decisions.md, "Issue 34 — Invoice drafts, void and write-off").
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Charges from "../payments/Charges.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import * as Collection from "./Collection.js"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "./Invoice.js"
import { invoiceDocuments } from "./InvoiceDocuments.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as PendingItems from "./PendingItems.js"
import type * as Payments from "../payments/Payments.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Trade from "../payments/Trade.js"
import { dt, emitAll, msOf, must, nowOf } from "../kernel/ServiceSupport.js"
import { renewalTrade, submitTrade } from "../payments/TradeStore.js"
import { endTrialAfterPayment, writes } from "../subscriptions/SubscriptionStore.js"

/** The issued, unpaid states a merchant may void or write off (a charge in flight may not be). */
const UNPAID_ISSUED: ReadonlyArray<Lifecycle.InvoiceStatus> = ["open", "retrying", "failed"]

/**
 * The invoice actions service.
 *
 * @since 0.1.0
 */
export class InvoiceActions extends Context.Service<InvoiceActions>()("@recur/core/InvoiceActions", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const charges = yield* Charges.Charges
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings)
    const invoices = storage.repository(Entities.invoice)
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const customers = storage.repository(Entities.customer)
    const { saveSub, schedule } = writes(storage)

    const read = (merchantId: string, invoiceId: string) =>
      Effect.flatMap(Effect.orDie(invoices.get(merchantId, invoiceId)), (o) => must(o, "invoice", invoiceId))

    const refused = (invoice: Invoice.Invoice, reason: string) =>
      new Errors.StateConflict({ resource: "invoice", id: invoice.invoice_id, state: invoice.biz_status, reason })

    /** Writes a moved invoice (a concurrent writer's change is a `ConcurrentUpdate`, rolled back). */
    const save = (moved: Lifecycle.Moved<Invoice.Invoice>, version: number, at: number) =>
      Effect.gen(function* () {
        yield* invoices.update(moved.value, version).pipe(
          Effect.catchTags({
            VersionConflict: () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "invoice", id: moved.value.invoice_id })),
            UniqueViolation: (e) => Effect.die(e)
          })
        )
        yield* emitAll(storage, moved.events, {
          merchant_id: moved.value.merchant_id,
          business_id: moved.value.invoice_id,
          schema: Invoice.Invoice,
          data: moved.value,
          at
        })
      })

    /**
     * Whether a charge of the invoice is in flight: its trade is `processing` (sent to the
     * processor, or waiting for the payer's 3-D Secure challenge). Such an invoice is neither
     * voided nor written off until the charge is answered (as Stripe refuses to void an invoice
     * with a payment in progress): the money may be taken yet.
     */
    const chargeInFlight = (invoice: Invoice.Invoice) =>
      Effect.gen(function* () {
        if (invoice.trade_id === null) return false
        const tv = Option.getOrUndefined(yield* Effect.orDie(trades.get(invoice.merchant_id, invoice.trade_id)))
        return tv !== undefined && tv.value.trade.trade_status === "processing"
      })

    /**
     * An invoice closed without payment (voided or written off): its open trade closed, its
     * dunning retries cancelled, and a past-due subscription whose latest cycle it bills returned
     * to `active` (its renewals go on as scheduled).
     */
    const closeUnpaid = (merchantId: string, invoice: Invoice.Invoice, reason: string, at: number) =>
      Effect.gen(function* () {
        // a sent invoice's due date and reminders: nothing more to look at
        yield* storage.workQueue.cancel(merchantId, Collection.DUE_WORK_KIND, invoice.invoice_id)
        if (invoice.trade_id !== null) {
          const tv = Option.getOrUndefined(yield* Effect.orDie(trades.get(merchantId, invoice.trade_id)))
          const closed = tv && Trade.move(tv.value.trade, "close", { closed_at: dt(at), closed_reason: reason })
          if (tv && closed && Result.isSuccess(closed))
            yield* Effect.orDie(trades.update({ ...tv.value, trade: closed.success.value }, tv.version))
        }
        if (invoice.subscription_id === null) return
        const sv = Option.getOrUndefined(yield* Effect.orDie(subs.get(merchantId, invoice.subscription_id)))
        if (sv === undefined || sv.value.subscription.status !== "past_due") return
        if (invoice.collection_method === "send_invoice" && invoice.due_date !== null) {
          // a sent invoice moved the subscription when it drives its dunning: the open sent
          // invoice due first (SentInvoices.due); a later one past due starts its own afterwards
          const dueAt = msOf(invoice.due_date)
          const earlier = (yield* Effect.orDie(
            invoices.list(merchantId, {
              limit: 100,
              filters: [
                { column: "subscription_id", op: "in", values: [invoice.subscription_id] },
                { column: "biz_status", op: "in", values: ["open"] }
              ]
            })
          )).list.some(
            (o) =>
              o.invoice_id !== invoice.invoice_id &&
              o.collection_method === "send_invoice" &&
              o.due_date !== null &&
              msOf(o.due_date) < dueAt
          )
          if (earlier || dueAt > at) return
        } else if (sv.value.subscription.cycle_index !== invoice.cycle_index) return
        yield* storage.workQueue.cancel(merchantId, "dunning", invoice.subscription_id)
        const moved = Lifecycle.must(Subscription.move(sv.value.subscription, "latest_invoice_closed"))
        yield* saveSub({ ...sv.value, subscription: moved, dunning_attempts: 0 }, sv.version, at)
      })

    /**
     * The customer credit a voided invoice applied goes back: to its subscription's share, or — a
     * one-off invoice — to the customer's balance held by no subscription, as a positive
     * `applied_to_invoice` entry naming the invoice. Nothing was owed, so nothing was used (a debit
     * carried into it is forgiven with it).
     */
    const returnCredit = (merchantId: string, invoice: Invoice.Invoice, at: number) =>
      Effect.gen(function* () {
        const credit = Result.getOrThrow(
          Money.parse(invoice.credit_applied ?? "0", invoice.currency, { allowNegative: true })
        )
        if (credit.amount <= 0n) return
        const back = {
          sourceType: "applied_to_invoice" as const,
          sourceId: invoice.invoice_id,
          description: "returned: the invoice was voided"
        }
        const sv =
          invoice.subscription_id === null
            ? undefined
            : Option.getOrUndefined(yield* Effect.orDie(subs.get(merchantId, invoice.subscription_id)))
        // a one-off invoice (or one whose subscription is gone): back to the customer's balance,
        // held by no subscription — one ledger entry reversing the one that applied it
        if (sv === undefined) {
          yield* CustomerBalance.record(storage, {
            merchantId,
            customerId: invoice.customer_id,
            currency: invoice.currency,
            amount: credit.amount,
            ...back,
            at
          })
          return
        }
        const s = sv.value.subscription
        const balance = Result.getOrThrow(Money.parse(s.credit_balance, invoice.currency, { allowNegative: true }))
        yield* saveSub(
          {
            ...sv.value,
            subscription: new Subscription.Subscription(
              { ...s, credit_balance: Money.format(Money.make(balance.amount + credit.amount, invoice.currency)) },
              { disableChecks: true }
            )
          },
          sv.version,
          at,
          back
        )
      })

    /**
     * Voids an invoice: a draft (it never takes a number), or an issued unpaid one (`open`,
     * `retrying`, `failed`, `uncollectible`): nothing is owed, its number stays used, its page and
     * PDF say VOID (`v2.invoice.voided`); the credit it applied returns to the subscription's balance. A paid invoice is refunded instead, a charge in flight
     * (`pending`, or its trade `processing`: a page payment waiting for 3-D Secure) waits for its
     * answer: `StateConflict`, nothing changed.
     *
     * @example
     * yield* actions.voidInvoice(merchantId, "inv_…")
     */
    const voidInvoice = Effect.fn("InvoiceActions.voidInvoice")(function* (merchantId: string, invoiceId: string) {
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* read(merchantId, invoiceId)
          const i = iv.value
          const allowed =
            i.biz_status === "draft" || i.biz_status === "uncollectible" || UNPAID_ISSUED.includes(i.biz_status)
          if (!allowed || (i.biz_status === "open" && !Invoice.isIssued(i)))
            return yield* refused(
              i,
              i.biz_status === "pending"
                ? "a charge of it is in flight: wait for its answer"
                : "only a draft or an issued unpaid invoice can be voided (a paid one is refunded)"
            )
          if (yield* chargeInFlight(i)) return yield* refused(i, "a charge of it is in flight: wait for its answer")
          const moved = Result.getOrThrow(Invoice.move(i, "void", { dunning: null }))
          yield* save(moved, iv.version, at)
          yield* returnCredit(merchantId, i, at)
          if (i.biz_status !== "draft") yield* closeUnpaid(merchantId, i, "invoice_voided", at)
          else {
            yield* storage.workQueue.cancel(merchantId, "invoice_finalize", invoiceId)
            // a draft billed nothing: the invoice items it took are pending again
            yield* PendingItems.release(storage, merchantId, invoiceId)
          }
          return Invoice.viewOf(moved.value)
        })
      )
    })

    /**
     * Marks an issued unpaid invoice (`open`, `retrying`, `failed`) uncollectible: still owed but
     * given up; dunning stops (its retries cancelled). It can still be paid or voided later
     * (`v2.invoice.marked_uncollectible`). Anything else, or a charge of it in flight, is a
     * `StateConflict`, nothing changed.
     *
     * @example
     * yield* actions.markUncollectible(merchantId, "inv_…")
     */
    const markUncollectible = Effect.fn("InvoiceActions.markUncollectible")(function* (
      merchantId: string,
      invoiceId: string
    ) {
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* read(merchantId, invoiceId)
          const i = iv.value
          if (!UNPAID_ISSUED.includes(i.biz_status) || !Invoice.isIssued(i))
            return yield* refused(
              i,
              "only an issued unpaid invoice (open, retrying or failed) can be marked uncollectible"
            )
          if (yield* chargeInFlight(i)) return yield* refused(i, "a charge of it is in flight: wait for its answer")
          const moved = Result.getOrThrow(
            Invoice.move(i, "mark_uncollectible", {
              dunning:
                i.dunning === null
                  ? null
                  : new Invoice.InvoiceDunning({ ...i.dunning, next_action: "none", next_retry_at: null })
            })
          )
          yield* save(moved, iv.version, at)
          yield* closeUnpaid(merchantId, i, "invoice_uncollectible", at)
          return Invoice.viewOf(moved.value)
        })
      )
    })

    /**
     * Finalises a draft: takes its number from the gapless counters and its parties' snapshot
     * (`InvoiceDocuments.issue`), then, as a renewal does, opens its trade and charges the card
     * on file — or settles it when nothing is owed (`v2.invoice.finalized`, then `v2.invoice.paid`
     * when settled). One transaction: a concurrent finalisation (the worker at the end of the
     * grace period and a request at once) loses on the invoice's version and rolls its number
     * back, so there is one number and one charge. `whenDraft`: a non-draft is answered as it is
     * (the worker's retry), else it is a `StateConflict`.
     */
    const finalizeWith = (merchantId: string, invoiceId: string, whenDraft: boolean) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const prepared = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const iv = yield* read(merchantId, invoiceId)
            const i = iv.value
            if (i.biz_status !== "draft") {
              if (whenDraft)
                return {
                  invoice: i,
                  charge: Option.none<{ tradeId: string; token: string; trialOf: string | null }>()
                }
              return yield* refused(i, "only a draft can be finalised")
            }
            const sv =
              i.subscription_id === null
                ? undefined
                : Option.getOrUndefined(yield* subs.get(merchantId, i.subscription_id))
            const total = Result.getOrThrow(Money.parse(i.amount, i.currency))
            const tax = Result.getOrThrow(Money.parse(i.tax_amount, i.currency, { allowNegative: true }))
            const trade =
              total.amount > 0n && sv !== undefined
                ? yield* renewalTrade(merchant, sv.value.subscription, { total, tax }, at)
                : null
            // the subscription's collection in force now: under `send_invoice` the draft is sent
            // as a sent renewal is (open, due `days_until_due` from now), not charged — the one the
            // draft showed is replaced by it (issue 34: finalisation's reading wins)
            const customer =
              sv === undefined
                ? undefined
                : Option.getOrUndefined(
                    yield* Effect.orDie(customers.get(merchantId, sv.value.subscription.customer_id))
                  )?.value
            const inForce = Collection.effective(sv?.value.collection ?? null, customer?.collection ?? null)
            const dueAt = trade !== null && sv !== undefined ? Collection.dueAt(inForce, at) : null
            const finalized = Result.getOrThrow(
              Invoice.move(i, "finalize", {
                collection_method: dueAt !== null ? "send_invoice" : "charge_automatically",
                automatically_finalizes_at: null
              })
            )
            if (trade !== null && sv !== undefined && dueAt !== null) {
              const [sent] = yield* documents.issue(merchant, [
                SentInvoices.asSent(
                  new Invoice.Invoice({ ...finalized.value, trade_id: trade.trade_id }, { disableChecks: true }),
                  dueAt
                )
              ])
              yield* save({ value: sent!, events: finalized.events }, iv.version, at)
              yield* SentInvoices.send(storage, merchant, {
                trade,
                invoice: sent!,
                subscriptionId: sv.value.subscription.id,
                at
              })
              if (sv.value.subscription.status === "trial")
                yield* saveSub(
                  {
                    ...sv.value,
                    subscription: Lifecycle.must(Subscription.move(sv.value.subscription, "renewal_succeeded"))
                  },
                  sv.version,
                  at
                )
              return { invoice: sent!, charge: Option.none() }
            }
            const collected = Result.getOrThrow(
              Invoice.move(
                finalized.value,
                trade ? "charge" : "settle_without_charge",
                trade ? { trade_id: trade.trade_id } : { paid_at: dt(at) }
              )
            )
            const [issued] = yield* documents.issue(merchant, [collected.value])
            yield* save({ value: issued!, events: [...finalized.events, ...collected.events] }, iv.version, at)
            if (sv !== undefined && trade === null && sv.value.subscription.status === "trial")
              yield* saveSub(
                {
                  ...sv.value,
                  subscription: Lifecycle.must(Subscription.move(sv.value.subscription, "renewal_succeeded"))
                },
                sv.version,
                at
              )
            if (trade === null || sv === undefined) return { invoice: issued!, charge: Option.none() }
            yield* submitTrade(storage, {
              trade,
              invoice_id: i.invoice_id,
              subscription_id: sv.value.subscription.id,
              at
            })
            if (sv.value.payment_token === null) return { invoice: issued!, charge: Option.none() }
            // a durable intent: if this process dies before the charge, a worker makes it
            yield* schedule(merchant, "charge", trade.trade_id, at)
            return {
              invoice: issued!,
              charge: Option.some({
                tradeId: trade.trade_id,
                token: sv.value.payment_token,
                // a trial's first renewal: paid, it ends the trial (as the renewal does)
                trialOf: sv.value.subscription.status === "trial" ? sv.value.subscription.id : null
              })
            }
          })
        )
        const result: Option.Option<Payments.PaymentResult> = Option.isSome(prepared.charge)
          ? Option.some(
              yield* charges.chargeInvoiceTrade(merchantId, prepared.charge.value.tradeId, prepared.charge.value.token)
            )
          : Option.none()
        if (
          Option.isSome(prepared.charge) &&
          Option.isSome(result) &&
          result.value.status === "succeeded" &&
          prepared.charge.value.trialOf !== null
        )
          yield* endTrialAfterPayment(storage, merchant, prepared.charge.value.trialOf)
        return { invoice: prepared.invoice, result }
      })

    /**
     * Finalises a draft on the merchant's request: see {@link finalizeWith};
     * the invoice as it stands after its charge.
     *
     * @example
     * yield* actions.finalize(merchantId, "inv_…")
     */
    const finalize = Effect.fn("InvoiceActions.finalize")(function* (merchantId: string, invoiceId: string) {
      yield* finalizeWith(merchantId, invoiceId, false)
      return Invoice.viewOf((yield* read(merchantId, invoiceId)).value)
    })

    /** The worker's finalisation at the end of the grace period: a draft no longer a draft is left alone. */
    const finalizeDue = Effect.fn("InvoiceActions.finalizeDue")(function* (merchantId: string, invoiceId: string) {
      return (yield* finalizeWith(merchantId, invoiceId, true)).result
    })

    return { voidInvoice, markUncollectible, finalize, finalizeDue } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
