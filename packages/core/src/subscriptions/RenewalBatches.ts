/**
 * Renewals in batches: many due subscriptions of one merchant billed together with the result
 * of renewing each alone ({@link Renewals.renew}, the same {@link RenewalPlan}): one transaction
 * bills them all, the gateway charges each, one transaction records the successes; whatever
 * the batch does not cover goes through `renew` and `Payments.applyOutcome` one by one.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Collection from "../invoices/Collection.js"
import { dt, emitMany, laneOf, nowOf, pending as pendingEvent } from "../kernel/ServiceSupport.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import { underMinimum } from "../payments/Charges.js"
import { renewalTrade, tradeSucceeded } from "../payments/TradeStore.js"
import { taxRenewal } from "./RenewalPlan.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Payments from "../payments/Payments.js"
import * as Ports from "../kernel/Ports.js"
import * as RenewalPlan from "./RenewalPlan.js"
import * as Renewals from "./Renewals.js"
import * as Schedule from "../schedules/Schedule.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Price from "../catalog/Price.js"
import type * as UsageAlert from "../usage/UsageAlert.js"
import * as Store from "../kernel/Store.js"
import * as Tax from "../taxes/Tax.js"
import * as Trade from "../payments/Trade.js"

const isPlainBill = (d: RenewalPlan.Decision) => d._tag === "Bill" && !d.continuous

/**
 * The batch-renewal service.
 *
 * @since 0.1.0
 */
export class RenewalBatches extends Context.Service<RenewalBatches>()("@recur/core/RenewalBatches", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings)
    const gateway = yield* Ports.PaymentGateway
    const taxes = yield* Ports.TaxCalculator
    const merchants = yield* Merchants.Merchants
    const payments = yield* Payments.Payments
    const renewals = yield* Renewals.Renewals
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const versions = storage.repository(Entities.priceVersion)
    const customers = storage.repository(Entities.customer)
    const taxed_ = taxRenewal(taxes, storage)

    /** The stored record of a batch renewal's trade: its first attempt, tied to the invoice and subscription. */
    const tradeRecordOf = (
      d: { readonly rec: Entities.SubscriptionRecord; readonly invoice: Invoice.Invoice },
      trade: Trade.Trade,
      reference?: string
    ): Entities.TradeRecord => ({
      trade,
      attempts: 1,
      invoice_id: d.invoice.invoice_id,
      subscription_id: d.rec.subscription.id,
      // the processor's reference of the charge, read by id from then on (a refund, a retrieve)
      ...(reference !== undefined ? { charges: [{ attempt: 1, reference }] } : {})
    })

    /**
     * Renews many due subscriptions of one merchant together, with the result of renewing each
     * alone: one transaction bills them all (invoices, trades, next periods, charge intents,
     * outbox events), the gateway charges each, and one transaction records the charges that
     * succeeded. What the batch does not cover goes through `renew` and `applyOutcome` one by
     * one: a trial, a cancellation or fixed term ending, a scheduled price change, a schedule in force, an amount of
     * zero or under the processor's minimum charge, a sent invoice (`send_invoice`), a subscription without a saved card, items billed by a
     * billable metric, a cycle already billed, a charge that did not
     * simply succeed, and everything when a batch transaction fails (a concurrent change).
     * Returns the subscriptions it finished; the others failed and their work is tried again.
     */
    const renewMany = Effect.fn("RenewalBatches.renewMany")(function* (
      merchantId: string,
      subscriptionIds: ReadonlyArray<string>,
      options: { readonly concurrency?: number } = {}
    ) {
      yield* Effect.annotateCurrentSpan({ size: subscriptionIds.length })

      const merchant = yield* merchants.get(merchantId)
      const concurrency = Math.max(1, options.concurrency ?? 1)
      const alone = new Set<string>()
      const billed = yield* storage
        .withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const found = yield* subs.getMany(merchantId, subscriptionIds)
            const plain: Array<Store.Versioned<Entities.SubscriptionRecord>> = []
            for (const id of subscriptionIds) {
              const sv = found.get(id)
              const s = sv?.value.subscription
              const batchable =
                sv !== undefined &&
                s !== undefined &&
                s.status === "active" &&
                // a merchant's renewal drafts (a grace period) are written by `renew`, one by one
                merchant.invoice_draft_grace_seconds === 0 &&
                sv.value.scheduled_price_version_id === null &&
                // an item's scheduled version renews alone, with its price_changed event
                !sv.value.extra_items.some((x) => (x.scheduled_version ?? null) !== null) &&
                (sv.value.pending_items ?? null) === null &&
                // items billed by a billable metric renew alone: `renew` aggregates their metrics
                !sv.value.extra_items.some((x) => Price.isMetricBased(x.version)) &&
                // a subscription under a schedule renews alone: its phase step is `renew`'s
                !Schedule.governs(sv.value.schedule ?? null) &&
                sv.value.payment_token !== null &&
                isPlainBill(RenewalPlan.decide(sv.value, at))
              if (batchable) plain.push(sv)
              else alone.add(id)
            }
            // a subscription with invoice items pending on its next invoice renews alone (`renew`
            // bills and marks them)
            const withItems = yield* plain.length === 0
              ? Effect.succeed({ list: [], has_more: false })
              : Effect.orDie(
                  storage.repository(Entities.invoiceItem).list(merchantId, {
                    limit: 100,
                    filters: [
                      { column: "subscription_id", op: "in", values: plain.map((sv) => sv.value.subscription.id) },
                      { column: "status", op: "in", values: ["pending"] }
                    ]
                  })
                )
            for (const i of withItems.list) if (i.subscription_id !== null) alone.add(i.subscription_id)
            if (withItems.has_more) for (const sv of plain) alone.add(sv.value.subscription.id)
            // a subscription usage alerts or progressive billing watch renews alone: `renew` deducts
            // what was invoiced early and schedules the check that resolves its alerts (issue 35)
            const watched =
              plain.length === 0
                ? new Map<string, Store.Versioned<UsageAlert.UsageBilling>>()
                : yield* storage.repository(Entities.usageBilling).getMany(
                    merchantId,
                    plain.map((sv) => sv.value.subscription.id)
                  )
            for (const w of watched.values()) if (w.value.watched) alone.add(w.value.subscription_id)
            // a customer with credit beyond the subscription's own share renews alone: `renew`
            // takes what its invoice needs from that credit (SharedCredit)
            const balances = yield* storage
              .repository(Entities.customerBalance)
              .getMany(merchantId, [
                ...new Set(plain.map((sv) => `${sv.value.subscription.customer_id}:${sv.value.currency}`))
              ])
            for (const sv of plain) {
              const row = balances.get(`${sv.value.subscription.customer_id}:${sv.value.currency}`)
              const own = Money.parse(sv.value.subscription.credit_balance, sv.value.currency, { allowNegative: true })
              if (row !== undefined && (Result.isFailure(own) || row.value.balance > own.success.amount))
                alone.add(sv.value.subscription.id)
            }
            for (let n = plain.length - 1; n >= 0; n--)
              if (alone.has(plain[n]!.value.subscription.id)) plain.splice(n, 1)
            // where each customer is taxed, read at once for the batch
            const customerRecs = yield* customers.getMany(merchantId, [
              ...new Set(plain.map((sv) => sv.value.subscription.customer_id))
            ])
            const addressOf = (customerId: string) => {
              const a = customerRecs.get(customerId)?.value.address
              return a ? Tax.addressOf(a.country, a.province) : null
            }
            const prices = yield* versions.getMany(merchantId, [
              ...new Set(plain.map((sv) => sv.value.subscription.price_version_id))
            ])
            const drafts: Array<{
              readonly rec: Entities.SubscriptionRecord
              readonly before: Entities.SubscriptionRecord
              readonly version: number
              readonly trade: Trade.Trade
              readonly invoice: Invoice.Invoice
              readonly next: number | null
            }> = []
            for (const sv of plain) {
              const rec = sv.value
              const s = rec.subscription
              const pv = prices.get(s.price_version_id)?.value
              // a sent invoice (collection method `send_invoice`) is issued by `renew`, alone
              const collection = Collection.effective(
                rec.collection ?? null,
                customerRecs.get(s.customer_id)?.value.collection ?? null
              )
              if (pv === undefined || collection.collection_method === "send_invoice") {
                alone.add(s.id)
                continue
              }
              // the same computation as `renew` (RenewalPlan), for the plain case
              const planned = RenewalPlan.bill(rec, pv, pv, [])
              if (Result.isFailure(planned)) {
                alone.add(s.id)
                continue
              }
              const b = planned.success
              const taxed = yield* taxed_(merchantId, rec, b, addressOf(s.customer_id))
              // nothing to charge, or under the processor's minimum (carried): renewed alone
              if (taxed.total.amount <= 0n || (yield* underMinimum(gateway, merchantId, taxed.total))) {
                alone.add(s.id)
                continue
              }
              const { next, periodEnd } = RenewalPlan.advance(rec, pv, b, taxed, at)
              const trade = yield* renewalTrade(merchant, s, taxed, at)
              const invoice = yield* Renewals.renewalInvoice({
                merchantId,
                subscription: s,
                rec,
                next,
                periodEnd,
                pv,
                draft: taxed,
                trade,
                at
              })
              drafts.push({ version: sv.version, trade, invoice, next: periodEnd, rec: next, before: rec })
            }
            // numbered in order, from the merchant's gapless counter, in this transaction
            const issued = yield* documents.issue(
              merchant,
              drafts.map((d) => d.invoice)
            )
            const inserted = new Set((yield* invoices.insertMany(issued)).map((i) => i.invoice_id))
            // a cycle already billed (a retried run) keeps its invoice; the numbers taken for the
            // skipped drafts would leave a hole, so the whole batch rolls back and goes one by one
            if (inserted.size < drafts.length)
              return yield* Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: "renewal batch" }))
            const done = drafts.map((d, i) => ({ ...d, invoice: issued[i]! }))
            if (done.length === 0) return []
            yield* Effect.orDie(
              trades.insertMany(
                done.map((d) => tradeRecordOf(d, Lifecycle.must(Trade.move(d.trade, "submit_payment"))))
              )
            )
            yield* Effect.orDie(subs.updateMany(done.map((d) => ({ value: d.rec, expectedVersion: d.version }))))
            // credit a renewal used is mirrored into the customer's balance ledger
            for (const d of done)
              yield* CustomerBalance.mirrorSubscription(storage, d.before, d.rec, at, {
                sourceType: "applied_to_invoice",
                sourceId: d.invoice.invoice_id
              })
            const lane = laneOf(merchant)
            yield* storage.workQueue.scheduleMany([
              ...done.flatMap((d) =>
                d.next === null
                  ? []
                  : [
                      {
                        lane,
                        merchant_id: merchantId,
                        kind: "renewal",
                        subject_id: d.rec.subscription.id,
                        due_at: d.next
                      }
                    ]
              ),
              // durable intents: if this process dies before a charge, a worker makes it
              ...done.map((d) => ({
                lane,
                merchant_id: merchantId,
                kind: "charge",
                subject_id: d.trade.trade_id,
                due_at: at
              }))
            ])
            yield* emitMany(
              storage,
              merchantId,
              done.map((d) =>
                pendingEvent({
                  type: "v2.trades.created",
                  business_id: d.trade.trade_id,
                  schema: Trade.Trade,
                  data: d.trade,
                  at
                })
              )
            )
            return done
          })
        )
        .pipe(
          Effect.catchCause((cause) =>
            Effect.as(Effect.logWarning("renewal batch fell back to one by one", cause), []).pipe(
              Effect.tap(() =>
                Effect.sync(() => {
                  for (const id of subscriptionIds) alone.add(id)
                })
              )
            )
          )
        )
      const finished = new Set<string>(billed.map((d) => d.rec.subscription.id))
      // charge each at the gateway; a charge that did not simply succeed is applied alone
      const chargedAt = yield* nowOf(merchant)
      const outcomes = yield* Effect.forEach(
        billed,
        (d) =>
          Effect.map(
            gateway.charge({
              trade_id: d.trade.trade_id,
              attempt: 1,
              merchant_id: merchantId,
              amount: Result.getOrThrow(Money.parse(d.trade.amount, d.trade.currency)),
              source: { _tag: "Token", token: d.rec.payment_token! },
              off_session: true,
              now: chargedAt
            }),
            (outcome) => ({ d, outcome })
          ),
        { concurrency: Math.max(concurrency, 16) }
      )
      const succeeded = outcomes.filter((o) => o.outcome._tag === "Succeeded")
      const one = new Set(outcomes.filter((o) => o.outcome._tag !== "Succeeded"))
      if (succeeded.length > 0) {
        const recorded = yield* storage
          .withTransaction(
            Effect.gen(function* () {
              const at = yield* nowOf(merchant)
              // the trades and invoices are as the first transaction wrote them (version 1): anything
              // that moved since (a concurrent reconcile) fails the versioned update, and then every
              // outcome of the batch is applied alone. A charge that returned another card is applied
              // alone too (it updates the subscription).
              const paid: Array<{
                readonly o: (typeof succeeded)[number]
                readonly next: Trade.Trade
                readonly paid: Invoice.Invoice
              }> = []
              for (const o of succeeded) {
                const outcome = o.outcome as Extract<Ports.ChargeOutcome, { _tag: "Succeeded" }>
                const token = Option.getOrNull(outcome.token)
                if (token !== null && token !== o.d.rec.payment_token) {
                  one.add(o)
                  continue
                }
                paid.push({
                  o,
                  // the batch wrote it processing (version 1): it moves from there
                  next: tradeSucceeded(
                    Lifecycle.must(Trade.move(o.d.trade, "submit_payment")),
                    "succeeded",
                    outcome,
                    at
                  ),
                  paid: Lifecycle.must(Invoice.move(o.d.invoice, "paid", { paid_at: dt(at) }))
                })
              }
              // a VersionConflict here is a failure (not a defect): the batch's outcomes go alone
              yield* trades.updateMany(
                paid.map((p) => ({
                  value: tradeRecordOf(
                    p.o.d,
                    p.next,
                    (p.o.outcome as Extract<Ports.ChargeOutcome, { _tag: "Succeeded" }>).reference
                  ),
                  expectedVersion: 1
                }))
              )
              yield* invoices.updateMany(paid.map((p) => ({ value: p.paid, expectedVersion: 1 })))
              yield* storage.workQueue.cancelMany(
                paid.flatMap((p) =>
                  ["charge", "reconcile"].map((kind) => ({
                    merchant_id: merchantId,
                    kind,
                    subject_id: p.next.trade_id
                  }))
                )
              )
              yield* emitMany(
                storage,
                merchantId,
                paid.flatMap((p) => [
                  pendingEvent({
                    type: "v2.trades.succeeded",
                    business_id: p.next.trade_id,
                    schema: Trade.Trade,
                    data: p.next,
                    at
                  }),
                  pendingEvent({
                    type: "v2.invoice.paid",
                    business_id: p.paid.invoice_id,
                    schema: Invoice.Invoice,
                    data: p.paid,
                    at
                  })
                ])
              )
            })
          )
          .pipe(Effect.result)
        if (Result.isFailure(recorded)) for (const o of succeeded) one.add(o)
      }
      yield* Effect.forEach(
        one,
        (o) =>
          payments.applyOutcome(merchantId, o.d.trade.trade_id, o.outcome).pipe(
            Effect.catchCause((cause) =>
              // the charge intent stays scheduled: a worker makes or reconciles the charge again
              Effect.logError(`renewal charge of ${o.d.trade.trade_id} not recorded`, cause)
            )
          ),
        { concurrency, discard: true }
      )
      yield* Effect.forEach(
        alone,
        (id) =>
          renewals.renew(merchantId, id).pipe(
            Effect.matchCauseEffect({
              onFailure: (cause) => Effect.logError(`work item renewal ${id} failed`, cause),
              onSuccess: () => Effect.sync(() => finished.add(id))
            })
          ),
        { concurrency, discard: true }
      )
      return finished
    })

    return { renewMany } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
