/**
 * Refunds: part or all of a succeeded trade, never more than was paid even under concurrency
 * (the amount is reserved on the trade by its version), idempotent by request key, each with a
 * credit note against the invoice it pays back (`CreditNotes`); settled by the gateway's answer,
 * asked again while pending, and refunds the processor made itself recorded once. A downgrade's
 * refunds across the cycle's payments are `OwedRefunds`; the cycle's ledger is `CycleLedger`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as CreditNotes from "./CreditNotes.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as GiveBack from "../invoices/GiveBack.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Decimal from "../money/Decimal.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, emit, laneOf, nowOf } from "../kernel/ServiceSupport.js"
import { pageErrors } from "../kernel/Paging.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import type * as Invoicing from "../invoices/Invoicing.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Ports from "../kernel/Ports.js"
import * as Refund from "./Refund.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Trade from "../payments/Trade.js"

/**
 * A refund of a succeeded trade. Built from the API's request body by the contract's `Requests.refundCommand`,
 * or in code by {@link refundOf}.
 *
 * @since 0.1.0
 */
export interface RefundCommand {
  readonly tradeId: Ids.TradeId
  /** In the trade's currency, major units; none refunds all that is left. */
  readonly amount: Option.Option<Decimal.Decimal>
  readonly reason: Option.Option<string>
  /** Keys the refund: the same key again answers the refund it made, never a second one. */
  readonly requestKey: Option.Option<string>
}

/**
 * A {@link RefundCommand} from its parts (the amount as text, e.g. `"5.00"`; a malformed one
 * or a wrong id prefix throws: this is for code, not for requests).
 *
 * @example
 * yield* refunds.refund(merchantId, Refunds.refundOf(tradeId, { amount: "5.00", reason: "goodwill" }))
 * @since 0.1.0
 */
export const refundOf = (
  tradeId: string,
  parts: {
    readonly amount?: string | undefined
    readonly reason?: string | undefined
    readonly requestKey?: string | undefined
  } = {}
): RefundCommand => ({
  tradeId: Ids.TradeId.make(tradeId),
  amount: Option.map(Option.fromUndefinedOr(parts.amount), (a) => Result.getOrThrow(Decimal.parse(a))),
  reason: Option.fromUndefinedOr(parts.reason),
  requestKey: Option.fromUndefinedOr(parts.requestKey)
})

/**
 * The refunds service.
 *
 * @since 0.1.0
 */
export class Refunds extends Context.Service<Refunds>()("@recur/core/Refunds", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settings = yield* Settings.Settings
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, settings)
    const merchants = yield* Merchants.Merchants
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const trades = storage.repository(Entities.trade)
    const refunds = storage.repository(Entities.refund)

    /** The refund this request key made, if any. */
    const refundByKey = Effect.fn("Refunds.refundByKey")(function* (merchantId: string, requestKey: string) {
      const page = yield* Effect.orDie(
        refunds.list(merchantId, { limit: 1, filters: [{ column: "request_key", op: "in", values: [requestKey] }] })
      )
      return Option.map(Option.fromUndefinedOr(page.list[0]), (r) => r.refund)
    })

    /**
     * Asks the gateway to make a reserved refund and applies its answer: succeeded (the trade,
     * the invoice and a credit note), failed (the reservation given back), or pending (asked again
     * after `reconcileAfterMs` by the `refund_settle` work item, or when a processor's webhook
     * reports it).
     */
    const finish = (
      merchant: Merchant.Merchant,
      reserved: { readonly record: Refund.Refund; readonly amount: Money.Money },
      tradeId: string,
      reason: string | null,
      made?: Ports.RefundOutcome
    ) =>
      Effect.gen(function* () {
        // the gateway de-duplicates by refund_id, and reads a refund it named before by that
        // reference (never a second create), so asking again for a pending refund is safe; a
        // refund the processor already made (its dashboard) is not asked for again
        const before = yield* Effect.orDie(refunds.get(merchant.merchant_id, reserved.record.refund_id))
        const known = Option.isSome(before) ? before.value.value.reference : undefined
        const outcome =
          made ??
          (yield* Effect.gen(function* () {
            const paidBy = yield* Effect.orDie(trades.get(merchant.merchant_id, tradeId))
            return yield* gateway.refund({
              refund_id: reserved.record.refund_id,
              trade_id: tradeId,
              amount: reserved.amount,
              ...(Option.isSome(paidBy)
                ? { charges: { attempt: paidBy.value.value.attempts, references: paidBy.value.value.charges ?? [] } }
                : {}),
              ...(known !== undefined ? { reference: known } : {})
            })
          }))
        // the processor's id of the refund, kept: it is read by it from then on
        const named =
          outcome._tag === "Pending" || outcome._tag === "Succeeded" ? outcome.refund_transaction_id : undefined
        if (named !== undefined && named !== known && Option.isSome(before))
          yield* refunds.update({ ...before.value.value, reference: named }, before.value.version).pipe(
            // settled meanwhile by another run (a webhook): it wrote what it knew
            Effect.catchTag("VersionConflict", () => Effect.void),
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
          )
        if (outcome._tag === "Pending" || outcome._tag === "Unknown") {
          // accepted and not settled, or not answered (the refund may have been made): the amount
          // stays reserved and the refund is asked about again later (and when the processor's
          // webhook says so) — an unanswered call is never taken for a failure
          yield* storage.workQueue.schedule({
            lane: laneOf(merchant),
            merchant_id: merchant.merchant_id,
            kind: "refund_settle",
            subject_id: reserved.record.refund_id,
            due_at: (yield* nowOf(merchant)) + settings.reconcileAfterMs
          })
          return reserved.record
        }
        return yield* storage
          .withTransaction(
            Effect.gen(function* () {
              const at = yield* nowOf(merchant)
              const rv = Option.getOrThrow(yield* refunds.get(merchant.merchant_id, reserved.record.refund_id))
              if (rv.value.refund.refund_status !== "pending") return rv.value.refund
              const tv = Option.getOrThrow(yield* trades.get(merchant.merchant_id, tradeId))
              const t = tv.value.trade
              if (outcome._tag === "Failed") {
                const failed = Lifecycle.must(Refund.move(rv.value.refund, "failed", { finished_at: dt(at) }))
                yield* Effect.orDie(refunds.update({ ...rv.value, refund: failed }, rv.version))
                const back =
                  Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency)).amount - reserved.amount.amount
                yield* trades.update(
                  {
                    ...tv.value,
                    trade: new Trade.Trade(
                      { ...t, total_refunded_amount: Money.format(Money.make(back, t.currency)) },
                      { disableChecks: true }
                    )
                  },
                  tv.version
                )
                yield* emit(storage, {
                  merchant_id: merchant.merchant_id,
                  type: "v2.refunds.failed",
                  business_id: failed.refund_id,
                  schema: Refund.Refund,
                  data: failed,
                  at
                })
                return failed
              }
              const succeeded = Lifecycle.must(Refund.move(rv.value.refund, "succeeded", { finished_at: dt(at) }))
              // full is what succeeded, not what is reserved: a refund still in flight may yet fail
              // (no record of it: none succeeded while the trade shows no refund; older records
              // that show one count what is reserved, as they did)
              const settledBefore =
                tv.value.refunds_settled !== undefined
                  ? Result.getOrThrow(Money.parse(tv.value.refunds_settled, t.currency)).amount
                  : t.refund_status === Lifecycle.tradeRefund.initial
                    ? 0n
                    : Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency)).amount -
                      reserved.amount.amount
              const settled = settledBefore + reserved.amount.amount
              const full = settled >= Result.getOrThrow(Money.parse(t.amount, t.currency)).amount
              const refunded =
                t.refund_status === "refunded"
                  ? t
                  : Lifecycle.must(Trade.moveRefund(t, full ? "full_refund" : "partial_refund"))
              yield* trades.update(
                { ...tv.value, trade: refunded, refunds_settled: Money.format(Money.make(settled, t.currency)) },
                tv.version
              )
              // the credit note first, so the refund (and its event) names it
              const note =
                tv.value.invoice_id !== null
                  ? yield* CreditNotes.issue(storage, documents, {
                      merchant,
                      refund: succeeded,
                      invoiceId: tv.value.invoice_id,
                      trade: t,
                      amount: reserved.amount,
                      reason,
                      fixedTax: rv.value.tax_lines,
                      refundedBefore: Money.make(settledBefore, t.currency),
                      full,
                      at
                    })
                  : null
              const done =
                note === null
                  ? succeeded
                  : new Refund.Refund(
                      { ...succeeded, credit_note_id: note.invoice_id, credit_note_number: note.number },
                      { disableChecks: true }
                    )
              yield* Effect.orDie(refunds.update({ ...rv.value, refund: done }, rv.version))
              yield* emit(storage, {
                merchant_id: merchant.merchant_id,
                type: "v2.refunds.succeeded",
                business_id: done.refund_id,
                schema: Refund.Refund,
                data: done,
                at
              })
              return done
            })
          )
          .pipe(
            // a concurrent refund of the same trade committed first: re-read and apply again
            Effect.retry({ while: (e) => e._tag === "VersionConflict", times: 50 }),
            Effect.catchTag("VersionConflict", (e) => Effect.die(e)),
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
          )
      })

    /**
     * Refunds part or all of a succeeded trade; never more than was paid, even under concurrency,
     * nor more than its subscription cycle still holds. `owed`: a downgrade's owed refund paying out
     * (already counted in what the cycle gave back).
     */
    const refund = Effect.fn("Refunds.refund")(function* (
      merchantId: string,
      command: RefundCommand,
      owed: { readonly tax_lines: ReadonlyArray<Invoicing.TaxLine> | null } | null = null,
      made?: Ports.RefundOutcome
    ) {
      const tradeId = command.tradeId
      const reason = Option.getOrNull(command.reason)
      const merchant = yield* merchants.get(merchantId)
      const reserved = yield* storage
        .withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            if (Option.isSome(command.requestKey)) {
              // the same request again (a client retry after a crash): the refund it created, not a second one
              const earlier = yield* refundByKey(merchantId, command.requestKey.value)
              if (Option.isSome(earlier))
                return {
                  record: earlier.value,
                  amount: Result.getOrThrow(Money.parse(earlier.value.refund_amount, earlier.value.currency)),
                  earlier: true
                }
            }
            const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) =>
              Option.match(o, {
                onNone: () => Effect.fail(new Errors.TradeNotFound({ tradeId })),
                onSome: Effect.succeed
              })
            )
            const t = tv.value.trade
            if (t.trade_status !== "succeeded")
              return yield* new Errors.TradeNotRefundable({ tradeId, state: t.trade_status })
            const paid = Result.getOrThrow(Money.parse(t.amount, t.currency))
            const refunded = Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency))
            let left = GiveBack.refundable(paid, refunded)
            // the invoice's own ledger, whose tax lines the credit note carries in proportion
            let ledger: GiveBack.PaidInvoice | undefined
            // a subscription cycle's payment: never more than the cycle, nor its invoice, still
            // holds after what refunds, credits and owed refunds already gave back (a downgrade's
            // own refunds are that owed money, already counted)
            if (owed === null && tv.value.subscription_id !== null && tv.value.invoice_id !== null) {
              const inv = yield* invoices.get(merchantId, tv.value.invoice_id)
              const sv = yield* subs.get(merchantId, tv.value.subscription_id)
              if (
                Option.isSome(inv) &&
                Option.isSome(sv) &&
                CycleLedger.PAYING.includes(inv.value.value.invoice_type)
              ) {
                const c = yield* CycleLedger.collectedBy(
                  storage,
                  merchantId,
                  sv.value.value,
                  inv.value.value.cycle_index
                )
                ledger = c.invoices.find((i) => i.invoice_id === inv.value.value.invoice_id)
                const cycleHeld = c.paid.amount - c.givenBack.amount
                const itsHeld = ledger ? ledger.paid.amount - ledger.givenBack.amount : cycleHeld
                const held = itsHeld < cycleHeld ? itsHeld : cycleHeld
                if (c.paid.currency === t.currency && held < left.amount)
                  left = Money.make(held > 0n ? held : 0n, t.currency)
                // a change of the subscription meanwhile (a downgrade's credit) fails its version check
                yield* subs.update(sv.value.value, sv.value.version).pipe(
                  Effect.catchTag("VersionConflict", () =>
                    Effect.fail(
                      new Errors.ConcurrentUpdate({ resource: "subscription", id: sv.value.value.subscription.id })
                    )
                  ),
                  Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
                )
              }
            }
            // a one-off invoice's payment: less what credit notes gave to the balance from it; its
            // row is written at the version read, so a credit note at once fails one of the two
            if (owed === null && tv.value.subscription_id === null && tv.value.invoice_id !== null) {
              const inv = yield* invoices.get(merchantId, tv.value.invoice_id)
              if (Option.isSome(inv) && Invoice.isStandalone(inv.value.value.invoice_type)) {
                const held = left.amount - Invoice.postCredited(inv.value.value).amount
                if (held < left.amount) left = Money.make(held > 0n ? held : 0n, t.currency)
                yield* invoices.update(inv.value.value, inv.value.version).pipe(
                  Effect.catchTag("VersionConflict", () =>
                    Effect.fail(new Errors.ConcurrentUpdate({ resource: "invoice", id: inv.value.value.invoice_id }))
                  ),
                  Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
                )
              }
            }
            let amount = left
            if (Option.isSome(command.amount)) {
              const parsed = Money.parse(Decimal.format(command.amount.value), t.currency, { allowNegative: true })
              if (Result.isFailure(parsed))
                return yield* new Errors.RefundRefused({
                  tradeId,
                  reason: "precision",
                  detail: parsed.failure.message
                })
              amount = parsed.success
            }
            if (amount.amount <= 0n)
              return yield* new Errors.RefundRefused({
                tradeId,
                reason: "not_positive",
                detail: "must be greater than 0"
              })
            if (amount.amount > left.amount)
              return yield* new Errors.RefundRefused({
                tradeId,
                reason: "above_refundable",
                detail: `at most ${Money.format(left)} can still be refunded`
              })
            const refund_id = yield* Ids.make(Ids.prefixes.refund)
            // reserve the amount on the trade: a concurrent refund fails its version check
            yield* trades
              .update(
                {
                  ...tv.value,
                  trade: new Trade.Trade(
                    {
                      ...t,
                      total_refunded_amount: Money.format(Money.make(refunded.amount + amount.amount, t.currency))
                    },
                    { disableChecks: true }
                  )
                },
                tv.version
              )
              .pipe(
                Effect.catchTag("VersionConflict", () =>
                  Effect.fail(new Errors.ConcurrentUpdate({ resource: "trade", id: t.trade_id }))
                ),
                Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
              )
            const record = new Refund.Refund({
              refund_id,
              trade_id: t.trade_id,
              invoice_id: tv.value.invoice_id,
              refund_amount: Money.format(amount),
              currency: t.currency,
              refund_status: Lifecycle.refund.initial,
              reason,
              created_at: dt(at),
              finished_at: null
            })
            yield* Effect.orDie(
              refunds.insert({
                merchant_id: merchantId,
                refund: record,
                request_key: Option.getOrNull(command.requestKey),
                // the credit note's taxes, fixed now: a downgrade's share, or this invoice's ledger
                tax_lines:
                  owed !== null
                    ? owed.tax_lines !== null
                      ? CycleLedger.storedLines(owed.tax_lines)
                      : null
                    : ledger !== undefined
                      ? CycleLedger.storedLines(
                          GiveBack.refundedTax(ledger.tax_lines, ledger.paid, ledger.givenBack, amount)
                        )
                      : null
              })
            )
            return { record, amount, earlier: false }
          })
        )
        .pipe(
          // another refund or change of the same subscription committed first: nothing has left
          // the engine yet (the gateway is asked after), so the reservation is made again on what
          // the subscription holds now — a lost race is a retry, not a conflict
          Effect.retry({
            while: (e) =>
              e._tag === "ConcurrentUpdate" &&
              // a refund the processor already made: a lost race over the trade is retried too
              // (the retry finds the other delivery's refund by its key)
              (e.resource === "subscription" || (made !== undefined && e.resource === "trade")),
            times: 20
          })
        )
      if (reserved.earlier && reserved.record.refund_status !== "pending") return reserved.record
      return yield* finish(merchant, reserved, tradeId, reason, made)
    })

    const getRefund = Effect.fn("Refunds.getRefund")(function* (merchantId: string, refundId: string) {
      return yield* Effect.flatMap(refunds.get(merchantId, refundId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.NotFound({ resource: "refund", id: refundId })),
          onSome: (v) => Effect.succeed(v.value.refund)
        })
      )
    })

    const listRefunds = Effect.fn("Refunds.listRefunds")(function* (merchantId: string, query: Store.ListQuery) {
      return yield* Effect.map(pageErrors(refunds.list(merchantId, query)), (p) => ({
        has_more: p.has_more,
        list: p.list.map((r) => r.refund)
      }))
    })

    /**
     * Asks again about a pending refund (the `refund_settle` work item, a processor's webhook) and
     * applies the answer; a refund already settled is left as it is.
     */
    const settle = Effect.fn("Refunds.settle")(function* (merchantId: string, refundId: string) {
      const merchant = yield* merchants.get(merchantId)
      const found = yield* Effect.orDie(refunds.get(merchantId, refundId))
      if (Option.isNone(found) || found.value.value.refund.refund_status !== "pending")
        return Option.none<Refund.Refund>()
      const record = found.value.value.refund
      const amount = Result.getOrThrow(Money.parse(record.refund_amount, record.currency))
      return Option.some(yield* finish(merchant, { record, amount }, record.trade_id, record.reason))
    })

    /**
     * Records a refund the processor made outside Recur (a refund in its dashboard) as a Recur
     * refund of the trade — its refund record, its credit note, `v2.refunds.succeeded`,
     * `v2.invoice.refunded` and the trade's refund status — once, keyed by the processor's refund
     * id (`processor:<id>`), even when the event is delivered twice or concurrently; never
     * beyond what the trade (and its subscription cycle) still holds: what is beyond is not
     * recorded. None when there was nothing left to record it against.
     */
    const recordProcessorRefund = Effect.fn("Refunds.recordProcessorRefund")(function* (
      merchantId: string,
      tradeId: string,
      made: Ports.ProcessorRefund
    ) {
      const outcome = Ports.RefundOutcome.Succeeded({ refund_transaction_id: made.refund_id })
      const command = (amount: Option.Option<Decimal.Decimal>): RefundCommand => ({
        tradeId: Ids.TradeId.make(tradeId),
        amount,
        reason: Option.some(made.reason ?? "refunded at the payment processor"),
        requestKey: Option.some(`processor:${made.refund_id}`)
      })
      const exact = refund(
        merchantId,
        command(Option.some(Result.getOrThrow(Decimal.parse(Money.format(made.amount))))),
        null,
        outcome
      )
      return yield* exact.pipe(
        // more than the trade still holds: what it holds is recorded, the rest was never ours
        Effect.catchTag("RefundRefused", (e) =>
          e.reason === "above_refundable" ? refund(merchantId, command(Option.none()), null, outcome) : Effect.fail(e)
        ),
        Effect.map(Option.some),
        Effect.catchTags({
          RefundRefused: () => Effect.succeed(Option.none<Refund.Refund>()),
          TradeNotRefundable: () => Effect.succeed(Option.none<Refund.Refund>()),
          TradeNotFound: () => Effect.succeed(Option.none<Refund.Refund>())
        })
      )
    })

    return {
      refund: Effect.fn("Refunds.refund")(function* (merchantId: string, command: RefundCommand) {
        return yield* refund(merchantId, command)
      }),
      /**
       * Pays out part of a downgrade's owed refund (`OwedRefunds`): already counted in what the
       * cycle gave back, so not held to it again; its credit note states `tax_lines` (the quote's
       * share) when given.
       */
      refundOwed: Effect.fn("Refunds.refundOwed")(function* (
        merchantId: string,
        command: RefundCommand,
        tax_lines: ReadonlyArray<Invoicing.TaxLine> | null
      ) {
        return yield* refund(merchantId, command, { tax_lines })
      }),
      refundByKey,
      recordProcessorRefund,
      getRefund,
      listRefunds,
      settle
    } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
