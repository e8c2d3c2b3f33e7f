/**
 * Refunds: part or all of a succeeded trade, never more than was paid even under concurrency
 * (the amount is reserved on the trade by its version), idempotent by request key, each with a
 * `refund` invoice against the invoice it pays back; and the refund of a downgrade's credit
 * across the cycle's payments.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Decimal from "../money/Decimal.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, emit, laneOf, msOf, nowOf } from "../kernel/ServiceSupport.js"
import { pageErrors } from "../kernel/Paging.js"
import { invoiceDocuments, newInvoice, taxLinesOf } from "../invoices/InvoiceDocuments.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { must } from "../kernel/ServiceSupport.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Ports from "../kernel/Ports.js"
import * as Refund from "./Refund.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Trade from "../payments/Trade.js"

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

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

/** The invoices that collect a cycle's money: its cycle invoice and any upgrade charged in it. */
const PAYING: ReadonlyArray<Invoice.Invoice["invoice_type"]> = ["initial", "renewal", "upgrade"]

/**
 * What a subscription's cycle `cycleIndex` collected and has given back (see
 * `Invoicing.Collected`), from its paid invoices' own totals and tax lines, the refunds of their
 * trades, and what the record says was credited or is still owed from that cycle.
 *
 * @since 0.1.0
 */
export const collectedBy = (
  storage: Store.Storage["Service"],
  merchantId: string,
  rec: Entities.SubscriptionRecord,
  cycleIndex: number
) =>
  Effect.gen(function* () {
    const currency = rec.currency
    const money = (text: string) => Result.getOrThrow(Money.parse(text, currency, { allowNegative: true })).amount
    const cycle = (yield* Effect.orDie(
      storage.repository(Entities.invoice).list(merchantId, {
        limit: 100,
        filters: [
          { column: "subscription_id", op: "in", values: [rec.subscription.id] },
          { column: "cycle_index", op: "in", values: [cycleIndex] }
        ]
      })
    )).list.filter((i) => PAYING.includes(i.invoice_type) && i.paid_at !== null && i.currency === currency)
    let paid = 0n
    let exclusive = 0n
    let refunded = 0n
    const tax_lines: Array<Invoicing.TaxLine> = []
    const invoices: Array<Invoicing.PaidInvoice> = []
    const movedOf = (pick: (m: Entities.SubscriptionRecord["moved"][number]) => string, invoiceId: string) =>
      rec.moved
        .filter((m) => m.cycle_index === cycleIndex && pick(m) === invoiceId)
        .reduce((a, m) => a + money(m.amount), 0n)
    // what the record says was given back from one invoice: credited from it, refunds owed from
    // it, an upgrade's credit moved out of it
    const against = (invoiceId: string) =>
      movedOf((m) => m.from_invoice_id, invoiceId) +
      rec.credited
        .filter((c) => c.cycle_index === cycleIndex && c.invoice_id === invoiceId)
        .reduce((a, c) => a + money(c.amount), 0n) +
      rec.owed_refunds
        .filter((o) => o.cycle_index === cycleIndex)
        .flatMap((o) => o.shares ?? [])
        .filter((sh) => sh.invoice_id === invoiceId)
        .reduce((a, sh) => a + money(sh.amount), 0n)
    // the newest first: the order a give-back takes from them (an upgrade's before the cycle's)
    const newestFirst = [...cycle].sort(
      (a, b) => msOf(b.created_at) - msOf(a.created_at) || compareKeys(b.invoice_id, a.invoice_id)
    )
    for (const inv of newestFirst) {
      const lines = taxLinesOf(inv)
      const excl = lines.reduce((a, t) => (t.inclusive ? a : a + t.amount.amount), 0n)
      // customer credit applied to it: its lines and exclusive tax, less what was charged
      const applied = inv.lines.reduce((a, l) => a + money(l.amount), 0n) + excl - money(inv.amount)
      const itsPaid = money(inv.amount) + (applied > 0n ? applied : 0n)
      paid += itsPaid
      exclusive += excl
      tax_lines.push(...lines)
      let itsRefunds = 0n
      if (inv.trade_id !== null) {
        const tv = yield* storage.repository(Entities.trade).get(merchantId, inv.trade_id)
        if (Option.isSome(tv)) itsRefunds = money(tv.value.value.trade.total_refunded_amount)
      }
      refunded += itsRefunds
      invoices.push({
        invoice_id: inv.invoice_id,
        trade_id: inv.trade_id,
        // an upgrade's credit moved into it paid for it too
        paid: Money.make(itsPaid + movedOf((m) => m.to_invoice_id, inv.invoice_id), currency),
        // its own taxes: an upgrade's negative lines are the tax its credit gave back of the
        // invoices it moved from, counted in their ledgers
        tax_lines: lines.filter((t) => t.amount.amount > 0n),
        givenBack: Money.make(itsRefunds + against(inv.invoice_id), currency)
      })
    }
    const credited = rec.credited.filter((c) => c.cycle_index === cycleIndex).reduce((a, c) => a + money(c.amount), 0n)
    const owed = rec.owed_refunds.filter((o) => o.cycle_index === cycleIndex).reduce((a, o) => a + money(o.owed), 0n)
    return {
      paid: Money.make(paid, currency),
      exclusiveTax: Money.make(exclusive, currency),
      tax_lines,
      givenBack: Money.make(refunded + credited + owed, currency),
      invoices
    } satisfies Invoicing.Collected
  })

/**
 * Tax lines as stored with a share or a refund (the invoice's tax line shape).
 *
 * @since 0.1.0
 */
export const storedLines = (lines: ReadonlyArray<Invoicing.TaxLine>): Array<Invoice.InvoiceTaxLine> =>
  lines.map(
    ({ taxable, amount, ...rate }) =>
      new Invoice.InvoiceTaxLine(
        { ...rate, taxable_amount: Money.format(taxable), amount: Money.format(amount) },
        { disableChecks: true }
      )
  )

/** Stored tax lines as money. */
const linesOf = (stored: ReadonlyArray<Invoice.InvoiceTaxLine>, currency: string): Array<Invoicing.TaxLine> =>
  stored.map(({ taxable_amount, amount, ...rate }) => ({
    ...rate,
    taxable: Result.getOrThrow(Money.parse(taxable_amount, currency, { allowNegative: true })),
    amount: Result.getOrThrow(Money.parse(amount, currency, { allowNegative: true }))
  }))

/**
 * A give-back's shares as an owed refund entry stores them.
 *
 * @since 0.1.0
 */
export const storedShares = (shares: ReadonlyArray<Invoicing.Share>): Array<Entities.OwedShare> =>
  shares.map((sh) => ({
    invoice_id: sh.invoice_id,
    trade_id: sh.trade_id,
    amount: Money.format(sh.amount),
    tax_lines: storedLines(sh.tax_lines)
  }))

/**
 * A record with `amount` more credited from cycle `cycleIndex` (the ledger `collectedBy` reads).
 *
 * @since 0.1.0
 */
export const withCredited = (
  rec: Entities.SubscriptionRecord,
  cycleIndex: number,
  amount: Money.Money,
  invoiceId: string | null = null
): Entities.SubscriptionRecord => {
  if (amount.amount <= 0n) return rec
  const same = (c: Entities.SubscriptionRecord["credited"][number]) =>
    c.cycle_index === cycleIndex && (c.invoice_id ?? null) === invoiceId
  const before = rec.credited.find(same)
  const total = (before ? Result.getOrThrow(Money.parse(before.amount, amount.currency)).amount : 0n) + amount.amount
  return {
    ...rec,
    credited: [
      ...rec.credited.filter((c) => !same(c)),
      { cycle_index: cycleIndex, amount: Money.format(Money.make(total, amount.currency)), invoice_id: invoiceId }
    ]
  }
}

/**
 * A record with an upgrade's credit `shares` moved from the invoices they came from into the
 * upgrade's invoice `toInvoiceId` (the ledger `collectedBy` reads).
 *
 * @since 0.1.0
 */
export const withMoved = (
  rec: Entities.SubscriptionRecord,
  cycleIndex: number,
  shares: ReadonlyArray<Invoicing.Share>,
  toInvoiceId: string
): Entities.SubscriptionRecord =>
  shares.length === 0
    ? rec
    : {
        ...rec,
        moved: [
          ...rec.moved,
          ...shares.map((sh) => ({
            cycle_index: cycleIndex,
            from_invoice_id: sh.invoice_id,
            to_invoice_id: toInvoiceId,
            amount: Money.format(sh.amount)
          }))
        ]
      }

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
    const { saveSub } = writes(storage)

    /** The refund this request key made, if any. */
    const refundByKey = (merchantId: string, requestKey: string) =>
      Effect.map(
        Effect.orDie(
          refunds.list(merchantId, { limit: 1, filters: [{ column: "request_key", op: "in", values: [requestKey] }] })
        ),
        (page) => Option.fromUndefinedOr(page.list[0])
      )

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
              const done = Lifecycle.must(Refund.move(rv.value.refund, "succeeded", { finished_at: dt(at) }))
              yield* Effect.orDie(refunds.update({ ...rv.value, refund: done }, rv.version))
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
              yield* emit(storage, {
                merchant_id: merchant.merchant_id,
                type: "v2.refunds.succeeded",
                business_id: done.refund_id,
                schema: Refund.Refund,
                data: done,
                at
              })
              if (tv.value.invoice_id !== null) {
                const iv = Option.getOrThrow(yield* invoices.get(merchant.merchant_id, tv.value.invoice_id))
                const original = iv.value
                const moved = Invoice.move(original, full ? "full_refund" : "partial_refund", {
                  refund_order_id: done.refund_id
                })
                if (Result.isSuccess(moved)) {
                  const updated = moved.success.value
                  yield* invoices.update(updated, iv.version)
                  yield* emit(storage, {
                    merchant_id: merchant.merchant_id,
                    type: "v2.invoice.refunded",
                    business_id: updated.invoice_id,
                    schema: Invoice.Invoice,
                    data: updated,
                    at
                  })
                }
                const draft = Invoicing.refund({
                  amount: reserved.amount,
                  cycle_index: original.cycle_index,
                  original_invoice_id: original.invoice_id,
                  reason: reason ?? "refund",
                  tax:
                    rv.value.tax_lines !== null
                      ? { fixed: linesOf(rv.value.tax_lines, t.currency) }
                      : {
                          lines: taxLinesOf(original),
                          paid: Result.getOrThrow(Money.parse(t.amount, t.currency)),
                          refundedBefore: Money.make(settledBefore, t.currency)
                        }
                })
                const refundInvoice = yield* newInvoice({
                  merchant_id: merchant.merchant_id,
                  draft,
                  trade_id: t.trade_id,
                  subscription_id: original.subscription_id,
                  price_id: original.price_id,
                  price_version_id: original.price_version_id,
                  customer_id: original.customer_id,
                  order_id: original.order_id,
                  trigger: "settle_without_charge",
                  at
                })
                yield* Effect.orDie(
                  invoices.insert(
                    yield* documents.issueOne(
                      merchant,
                      new Invoice.Invoice(
                        { ...refundInvoice, refund_order_id: done.refund_id },
                        { disableChecks: true }
                      )
                    )
                  )
                )
              }
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
                  record: earlier.value.refund,
                  amount: Result.getOrThrow(
                    Money.parse(earlier.value.refund.refund_amount, earlier.value.refund.currency)
                  ),
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
            let left = Invoicing.refundable(paid, refunded)
            // the invoice's own ledger, whose tax lines the credit note carries in proportion
            let ledger: Invoicing.PaidInvoice | undefined
            // a subscription cycle's payment: never more than the cycle, nor its invoice, still
            // holds after what refunds, credits and owed refunds already gave back (a downgrade's
            // own refunds are that owed money, already counted)
            if (owed === null && tv.value.subscription_id !== null && tv.value.invoice_id !== null) {
              const inv = yield* invoices.get(merchantId, tv.value.invoice_id)
              const sv = yield* subs.get(merchantId, tv.value.subscription_id)
              if (Option.isSome(inv) && Option.isSome(sv) && PAYING.includes(inv.value.value.invoice_type)) {
                const c = yield* collectedBy(storage, merchantId, sv.value.value, inv.value.value.cycle_index)
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
                      ? storedLines(owed.tax_lines)
                      : null
                    : ledger !== undefined
                      ? storedLines(Invoicing.refundedTax(ledger.tax_lines, ledger.paid, ledger.givenBack, amount))
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
     * Refunds `owed` (a downgrade's negative net) from the payments of the cycle, the newest
     * first (an upgrade's charge before the cycle's invoice), never more than each still holds;
     * what the cycle's payments cannot cover (a charge not collected) becomes customer credit.
     */
    /**
     * Pays out what one downgrade owes from the cycle's payments, newest first, each keyed by
     * `${key}:${trade}` so that a rerun after a crash takes the refunds already made instead of
     * making them again; answers what no payment could take (the caller credits it).
     */
    const refundCycle = (
      merchantId: string,
      subscriptionId: string,
      entry: {
        readonly key: string
        readonly cycle_index: number
        readonly owed: Money.Money
        readonly shares?: ReadonlyArray<Entities.OwedShare> | undefined
      }
    ) =>
      Effect.gen(function* () {
        const { owed } = entry
        /** What the trade still holds (0 unless it succeeded). */
        const holdsOf = (tradeId: string) =>
          Effect.gen(function* () {
            const t = (yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) =>
              Effect.orDie(must(o, "trade", tradeId))
            )).value.trade
            if (t.trade_status !== "succeeded") return 0n
            return Invoicing.refundable(
              Result.getOrThrow(Money.parse(t.amount, t.currency)),
              Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency))
            ).amount
          })
        /** One refund of `take` from a trade, keyed so that a rerun takes the one already made. */
        const pay = (tradeId: string, take: bigint, tax_lines: ReadonlyArray<Invoicing.TaxLine> | null) =>
          refund(
            merchantId,
            {
              tradeId: Ids.TradeId.make(tradeId),
              amount: Option.some(Decimal.make(take, Money.exponentOf(owed.currency))),
              reason: Option.some("proration"),
              requestKey: Option.some(`${entry.key}:${tradeId}`)
            },
            { tax_lines }
          )
        const earlierOf = (tradeId: string) =>
          Effect.map(refundByKey(merchantId, `${entry.key}:${tradeId}`), (o) =>
            Option.map(o, (r) => Result.getOrThrow(Money.parse(r.refund.refund_amount, owed.currency)).amount)
          )
        // the quote's shares: each refunded from its invoice's trade with the tax the quote stated;
        // what a trade cannot take (credit applied to the invoice) is credited against that invoice
        // only settled refunds count as paid out: one still pending (or unanswered) keeps the
        // entry for a later run; a failed one gave nothing back, so its amount is credited instead
        let unsettled = false
        const counted = (r: Refund.Refund, take: bigint) => {
          if (r.refund_status === "pending") unsettled = true
          return r.refund_status === "failed" ? 0n : take
        }
        if (entry.shares !== undefined) {
          const leftovers: Array<{ readonly invoice_id: string | null; readonly amount: bigint }> = []
          for (const share of entry.shares) {
            const whole = Result.getOrThrow(Money.parse(share.amount, owed.currency))
            const earlier = share.trade_id !== null ? yield* earlierOf(share.trade_id) : Option.none<bigint>()
            let take = 0n
            if (Option.isSome(earlier)) take = earlier.value
            else if (share.trade_id !== null) {
              const holds = yield* holdsOf(share.trade_id)
              take = holds < whole.amount ? holds : whole.amount
            }
            if (take > 0n && share.trade_id !== null)
              take = counted(
                yield* pay(
                  share.trade_id,
                  take,
                  Invoicing.partOf(linesOf(share.tax_lines, owed.currency), Money.make(take, owed.currency), whole)
                ),
                take
              )
            if (whole.amount - take > 0n) leftovers.push({ invoice_id: share.invoice_id, amount: whole.amount - take })
          }
          return { leftovers, unsettled }
        }
        const cycle = (yield* Effect.orDie(
          invoices.list(merchantId, {
            limit: 100,
            filters: [
              { column: "subscription_id", op: "in", values: [subscriptionId] },
              { column: "cycle_index", op: "in", values: [entry.cycle_index] }
            ]
          })
        )).list
        const paying = cycle
          .filter((i) => i.trade_id !== null && PAYING.includes(i.invoice_type))
          // newest first; ids sort in creation order within one instant
          .sort((a, b) => msOf(b.created_at) - msOf(a.created_at) || compareKeys(b.invoice_id, a.invoice_id))
        let left = owed.amount
        for (const inv of paying) {
          if (left <= 0n) break
          const earlier = yield* earlierOf(inv.trade_id!)
          let take: bigint
          if (Option.isSome(earlier)) take = earlier.value
          else {
            const holds = yield* holdsOf(inv.trade_id!)
            take = holds < left ? holds : left
          }
          if (take <= 0n) continue
          // a pending refund found by its key is asked again (the gateway de-duplicates by refund id)
          left -= counted(yield* pay(inv.trade_id!, take, null), take)
        }
        return { leftovers: left > 0n ? [{ invoice_id: null, amount: left }] : [], unsettled }
      })

    /**
     * Settles every refund a subscription's downgrades still owe: refunds from the cycle's
     * payments, the rest to the credit balance, and the entry removed in the same transaction
     * as that credit — so a crash at any point leaves the entry for the next run, and no run
     * refunds or credits twice. Run by the change itself and by the `refund_owed` work item.
     */
    const settleOwed = Effect.fn("Refunds.settleOwed")(function* (merchantId: string, subscriptionId: string) {
      const merchant = yield* merchants.get(merchantId)
      const first = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        Effect.orDie(must(o, "subscription", subscriptionId))
      )
      for (const pending of first.value.owed_refunds) {
        const owed = Result.getOrThrow(Money.parse(pending.owed, first.value.currency))
        const { leftovers, unsettled } = yield* refundCycle(merchantId, subscriptionId, { ...pending, owed })
        if (unsettled) {
          // a refund of it has not settled yet: the entry stays, and is looked at again later
          yield* storage.workQueue.schedule({
            lane: laneOf(merchant),
            merchant_id: merchantId,
            kind: "refund_owed",
            subject_id: subscriptionId,
            due_at: (yield* nowOf(merchant)) + settings.reconcileAfterMs
          })
          continue
        }
        const left = leftovers.reduce((a, l) => a + l.amount, 0n)
        yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
              Effect.orDie(must(o, "subscription", subscriptionId))
            )
            // another run settled it meanwhile
            if (!sv.value.owed_refunds.some((e) => e.key === pending.key)) return
            const credit = Result.getOrThrow(
              Money.parse(sv.value.subscription.credit_balance, owed.currency, { allowNegative: true })
            )
            yield* saveSub(
              {
                ...leftovers.reduce(
                  (r, l) => withCredited(r, pending.cycle_index, Money.make(l.amount, owed.currency), l.invoice_id),
                  sv.value
                ),
                owed_refunds: sv.value.owed_refunds.filter((e) => e.key !== pending.key),
                subscription:
                  left > 0n
                    ? new Subscription.Subscription(
                        {
                          ...sv.value.subscription,
                          credit_balance: Money.format(Money.make(credit.amount + left, owed.currency))
                        },
                        { disableChecks: true }
                      )
                    : sv.value.subscription
              },
              sv.version,
              at
            )
          })
        )
      }
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
      recordProcessorRefund,
      getRefund,
      listRefunds,
      settleOwed,
      settle
    } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
