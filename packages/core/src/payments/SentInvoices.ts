/**
 * Sent invoices (collection method `send_invoice`, issue 34 item 5): a subscription's collection
 * setting, and what happens when a sent invoice is past its due date — the subscription enters
 * dunning as after a failed charge (`past_due`, `v2.invoice.overdue` with an email), a reminder at
 * each of the merchant's dunning retry days, then the merchant's `dunning_final_state`. Nothing
 * is charged off session: the customer pays on the invoice's hosted page (`InvoicePayments`),
 * which brings the subscription back to `active` (`Payments.applyOutcome`).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result, Schema } from "effect"
import * as Collection from "../invoices/Collection.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { dt, emit, laneOf, msOf, must, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import type * as Lifecycle from "../kernel/Lifecycle.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as NotificationOutbox from "../notifications/NotificationOutbox.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as DunningPolicy from "./DunningPolicy.js"
import * as Trade from "./Trade.js"

const DAY = 86_400_000

/**
 * A subscription's collection setting as the API answers it: its own (`collection_method` null:
 * its customer's) and the one in force.
 *
 * @since 0.1.0
 */
export interface CollectionState {
  readonly subscription_id: string
  readonly collection_method: Collection.CollectionMethod | null
  readonly days_until_due: number | null
  readonly effective_collection_method: Collection.CollectionMethod
  readonly effective_days_until_due: number | null
}

/**
 * Schedules a sent invoice's due date (and later its reminders), in the caller's transaction.
 *
 * @since 0.1.0
 */
export const scheduleDue = (storage: StorageService, merchant: Merchant.Merchant, invoiceId: string, at: number) =>
  storage.workQueue.schedule({
    lane: laneOf(merchant),
    merchant_id: merchant.merchant_id,
    kind: Collection.DUE_WORK_KIND,
    subject_id: invoiceId,
    due_at: at
  })

/**
 * An invoice as sent: `collection_method` `send_invoice`, due at `dueAt` (Unix ms).
 *
 * @since 0.1.0
 */
export const asSent = (invoice: Invoice.Invoice, dueAt: number): Invoice.Invoice =>
  new Invoice.Invoice({ ...invoice, collection_method: "send_invoice", due_date: dt(dueAt) }, { disableChecks: true })

/**
 * Sends an issued, open invoice (numbered, `collection_method` `send_invoice`, with its due date),
 * in the caller's transaction: its trade waits in `requires_payment_method` for the customer's
 * card on the invoice's page (`v2.trades.created`), `v2.invoice.sent` (the `invoice_issued`
 * email), and its due date is looked at by the worker (`invoice_due`). Nothing is charged. The one
 * sending a renewal, a finalised draft and a one-off invoice share.
 *
 * @since 0.1.0
 */
export const send = (
  storage: StorageService,
  merchant: Merchant.Merchant,
  input: {
    readonly trade: Trade.Trade
    readonly invoice: Invoice.Invoice
    readonly subscriptionId: string | null
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const { at, invoice, trade } = input
    yield* Effect.orDie(
      storage.repository(Entities.trade).insert({
        trade,
        attempts: 0,
        invoice_id: invoice.invoice_id,
        subscription_id: input.subscriptionId
      })
    )
    yield* emit(storage, {
      merchant_id: merchant.merchant_id,
      type: "v2.trades.created",
      business_id: trade.trade_id,
      schema: Trade.Trade,
      data: trade,
      at
    })
    yield* emit(storage, {
      merchant_id: merchant.merchant_id,
      type: "v2.invoice.sent",
      business_id: invoice.invoice_id,
      schema: Invoice.Invoice,
      data: invoice,
      at
    })
    if (invoice.due_date !== null) yield* scheduleDue(storage, merchant, invoice.invoice_id, msOf(invoice.due_date))
  })

/**
 * The sent-invoices service.
 *
 * @since 0.1.0
 */
export class SentInvoices extends Context.Service<SentInvoices>()("@recur/core/SentInvoices", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const subs = storage.repository(Entities.subscription)
    const customers = storage.repository(Entities.customer)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, subEvents } = writes(storage)

    const stateOf = (rec: Entities.SubscriptionRecord, customer: Entities.CustomerRecord | undefined) => {
      const own = rec.collection ?? null
      const inForce = Collection.effective(own, customer?.collection ?? null)
      return {
        subscription_id: rec.subscription.id,
        collection_method: own?.collection_method ?? null,
        days_until_due: own?.days_until_due ?? null,
        effective_collection_method: inForce.collection_method,
        effective_days_until_due: inForce.days_until_due
      } satisfies CollectionState
    }

    /**
     * Sets how a subscription's invoices are collected from its next invoice on (an invoice
     * already issued keeps its own): `send_invoice` with `days_until_due` (1 to 365),
     * `charge_automatically`, or null to follow its customer's setting. Refused with
     * `InvalidParameter` naming the field (nothing changes), and for a canceled subscription.
     */
    const setCollection = Effect.fn("SentInvoices.setCollection")(function* (
      merchantId: string,
      subscriptionId: string,
      input: { readonly collection_method: string | null; readonly days_until_due?: number | null | undefined }
    ) {
      const merchant = yield* merchants.get(merchantId)
      let setting: Collection.Collection | null = null
      if (input.collection_method !== null) {
        const parsed = Collection.parse({
          collection_method: input.collection_method,
          days_until_due: input.days_until_due
        })
        if (parsed instanceof Errors.InvalidParameter) return yield* parsed
        setting = parsed ?? null
      } else if (input.days_until_due != null)
        return yield* new Errors.InvalidParameter({
          param: "days_until_due",
          reason: "only with collection_method send_invoice"
        })
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          if (sv.value.subscription.status === "canceled")
            return yield* new Errors.SubscriptionActionRefused({
              subscriptionId,
              state: "canceled",
              action: "collection_method",
              reason: "the subscription has ended"
            })
          const next: Entities.SubscriptionRecord = { ...sv.value, collection: setting }
          yield* saveSub(next, sv.version, at)
          const customer = Option.getOrUndefined(
            yield* Effect.orDie(customers.get(merchantId, next.subscription.customer_id))
          )?.value
          return stateOf(next, customer)
        })
      )
    })

    /** A subscription's collection setting, its own and the one in force. */
    const collectionOf = Effect.fn("SentInvoices.collectionOf")(function* (merchantId: string, subscriptionId: string) {
      yield* merchants.get(merchantId)
      const sv = yield* Effect.flatMap(Effect.orDie(subs.get(merchantId, subscriptionId)), (o) =>
        must(o, "subscription", subscriptionId)
      )
      const customer = Option.getOrUndefined(
        yield* Effect.orDie(customers.get(merchantId, sv.value.subscription.customer_id))
      )?.value
      return stateOf(sv.value, customer)
    })

    /** The past-due email of a reminder (no webhook event: `v2.invoice.overdue` is sent once, at the due date). */
    const remind = (merchantId: string, invoice: Invoice.Invoice, at: number) =>
      NotificationOutbox.record(storage, merchantId, [
        { type: "v2.invoice.overdue", data: Schema.encodeSync(Invoice.Invoice)(invoice), at }
      ])

    /**
     * A sent invoice's due date or one of its reminders (the `invoice_due` work item): nothing
     * when it was paid (or voided) meanwhile. Unpaid at its due date, its subscription becomes
     * `past_due` (`v2.subscription.past_due`) and the invoice `v2.invoice.overdue` (an email); at
     * each later day of the merchant's dunning schedule (offsets from the day dunning started: the
     * due date, or later when an earlier sent invoice drove dunning until it was paid) a
     * reminder, and at the last one the merchant's `dunning_final_state` (`unpaid`, or
     * `canceled`), as card dunning ends. One invoice drives: the open sent invoice due first; a
     * later one looks again each day meanwhile. No card is charged.
     */
    const due = Effect.fn("SentInvoices.due")(function* (merchantId: string, invoiceId: string) {
      const merchant = yield* merchants.get(merchantId)
      const policy = DunningPolicy.policyOf(merchant, yield* Effect.service(DunningPolicy.DefaultPolicy))
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = Option.getOrUndefined(yield* Effect.orDie(invoices.get(merchantId, invoiceId)))
          if (iv === undefined) return
          const invoice = iv.value
          if (
            invoice.biz_status !== "open" ||
            invoice.collection_method !== "send_invoice" ||
            invoice.due_date === null
          )
            return
          const dueAt = msOf(invoice.due_date)
          if (at < dueAt) return yield* scheduleDue(storage, merchant, invoiceId, dueAt)
          const sv =
            invoice.subscription_id !== null
              ? Option.getOrUndefined(yield* Effect.orDie(subs.get(merchantId, invoice.subscription_id)))
              : undefined
          const overdue = () =>
            emit(storage, {
              merchant_id: merchantId,
              type: "v2.invoice.overdue",
              business_id: invoiceId,
              schema: Invoice.Invoice,
              data: invoice,
              at
            })
          if (sv === undefined) {
            // no subscription to move (a one-off invoice): `v2.invoice.overdue` at the due date,
            // then a reminder on each of the merchant's dunning days after it
            const step = policy.retryAfterMs.filter((o) => o <= at - dueAt).length
            if (step === 0) yield* overdue()
            else yield* remind(merchantId, invoice, at)
            const later = policy.retryAfterMs[step]
            if (later !== undefined) yield* scheduleDue(storage, merchant, invoiceId, dueAt + later)
            return
          }
          const rec = sv.value
          const status = rec.subscription.status
          const offsets = policy.retryAfterMs
          if (status === "active" || status === "trial") {
            // the due date: dunning starts as after a failed charge
            const moved = Result.getOrThrow(Subscription.move(rec.subscription, "renewal_failed"))
            const next: Entities.SubscriptionRecord = { ...rec, subscription: moved.value, dunning_attempts: 0 }
            yield* overdue()
            if (offsets.length === 0) return yield* finish(merchant, next, sv.version, moved.events, at)
            yield* saveSub(next, sv.version, at)
            yield* subEvents(merchantId, next, moved.events, at)
            // each step is timed from the one before: on time, the merchant's days after the due
            // date; entered late (another invoice drove dunning until it was paid), from now
            return yield* scheduleDue(storage, merchant, invoiceId, at + offsets[0]!)
          }
          if (status !== "past_due" && status !== "unpaid") return
          // one invoice drives the subscription's dunning: the open sent invoice due first; a
          // later one past due meanwhile looks again a day later (after the first is paid, the
          // subscription is active and its own dunning starts)
          const overdueOpen = (yield* Effect.orDie(
            invoices.list(merchantId, {
              limit: 100,
              filters: [
                { column: "subscription_id", op: "in", values: [rec.subscription.id] },
                { column: "biz_status", op: "in", values: ["open"] }
              ]
            })
          )).list.filter((i) => i.collection_method === "send_invoice" && i.due_date !== null)
          const driver = overdueOpen.sort((a, b) => msOf(a.due_date!) - msOf(b.due_date!))[0]
          if (driver !== undefined && driver.invoice_id !== invoiceId)
            return yield* scheduleDue(storage, merchant, invoiceId, at + DAY)
          if (status === "unpaid") return
          const attempts = rec.dunning_attempts + 1
          const next: Entities.SubscriptionRecord = { ...rec, dunning_attempts: attempts }
          if (attempts >= offsets.length) {
            // the schedule's last day: the merchant's final state (a canceled subscription's
            // email says so; an unpaid one's is reminded once more)
            if (policy.finalState !== "canceled") yield* remind(merchantId, invoice, at)
            return yield* finish(merchant, next, sv.version, [], at)
          }
          yield* saveSub(next, sv.version, at)
          yield* remind(merchantId, invoice, at)
          yield* scheduleDue(storage, merchant, invoiceId, at + offsets[attempts]! - offsets[attempts - 1]!)
        })
      )

      /** The end of a sent invoice's dunning: the subscription in the merchant's final state. */
      function finish(
        merchant: Merchant.Merchant,
        rec: Entities.SubscriptionRecord,
        version: number,
        before: ReadonlyArray<Lifecycle.EventType>,
        at: number
      ) {
        return Effect.gen(function* () {
          const canceled = policy.finalState === "canceled"
          const moved = Result.getOrThrow(
            Subscription.move(
              rec.subscription,
              canceled ? "retries_exhausted_cancel" : "retries_exhausted",
              canceled ? { cancel_reason: "payment_failed", cancel_at: dt(at), next_invoice_date: null } : {}
            )
          )
          const next: Entities.SubscriptionRecord = { ...rec, subscription: moved.value }
          yield* saveSub(next, version, at)
          yield* subEvents(merchant.merchant_id, next, [...before, ...moved.events], at)
          if (canceled) yield* storage.workQueue.cancel(merchant.merchant_id, "renewal", rec.subscription.id)
        })
      }
    })

    return { setCollection, collectionOf, due } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
