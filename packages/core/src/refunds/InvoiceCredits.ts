/**
 * Credit notes without a refund (issue 34): a paid subscription invoice credited to the
 * customer's balance. The credit note is a numbered document of the credit-note series
 * (`INV-CN-…`, a `refund` invoice against the original) with its line and the original's taxes in
 * proportion (`CreditNotes.draft`, as a refund's); no money moves. The amount is held as the
 * subscription's share of the customer balance (its next invoice applies it; a subscription that
 * no longer bills passes it to the customer's subscription that renews next, else the ledger
 * keeps it) and counted as given back from that cycle (`credited`), so that refunds and credits
 * together never give back more than the invoice collected.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { allocate } from "../customers/CustomerBalances.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as Invoice from "../invoices/Invoice.js"
import { invoiceDocuments, newInvoice, taxLinesOf } from "../invoices/InvoiceDocuments.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { dt, emit, emitAll, msOf, nowOf } from "../kernel/ServiceSupport.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import { underMinimum } from "../payments/Charges.js"
import * as Trade from "../payments/Trade.js"
import * as CreditNotes from "./CreditNotes.js"
import * as Refunds from "./Refunds.js"

/**
 * A credit note's request: the invoice, a decimal `amount` in its currency (at most what it
 * still holds), how it is given (`credit_balance`) and why.
 *
 * @since 0.1.0
 */
export interface CreditNoteCommand {
  readonly invoice_id: string
  readonly amount?: string | undefined
  readonly method?: string | undefined
  readonly reason?: string | undefined
  /** Keys a refund (method `refund`): the same key again answers the refund it made. */
  readonly request_key?: string | undefined
}

/**
 * What a credit note request made: the credit note (none for a refund the processor has not
 * confirmed yet, or refused) and, for `method: refund`, the refund's status.
 *
 * @since 0.1.0
 */
export interface CreditNoteOutcome {
  readonly credit_note: Invoice.Invoice | null
  readonly refundState: string | null
}

const LIVE = new Set(["trial", "active", "past_due", "paused", "unpaid"])
const REDUCIBLE = new Set<Invoice.Invoice["biz_status"]>(["open", "retrying", "failed", "uncollectible"])
const MAX_REASON = 500

/**
 * The credit-note service.
 *
 * @since 0.1.0
 */
export class InvoiceCredits extends Context.Service<InvoiceCredits>()("@recur/core/InvoiceCredits", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settings = yield* Settings.Settings
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, settings)
    const merchants = yield* Merchants.Merchants
    const invoices = storage.repository(Entities.invoice)
    const subs = storage.repository(Entities.subscription)
    const refunds = yield* Refunds.Refunds
    const gateway = yield* Ports.PaymentGateway

    /** A credit note of `original` from its draft: numbered in the credit-note series, stored, settled. */
    const settledNote = (
      merchant: Parameters<typeof documents.issueOne>[0],
      original: Invoice.Invoice,
      draft: Parameters<typeof newInvoice>[0]["draft"],
      at: number
    ) =>
      Effect.gen(function* () {
        const note = yield* documents.issueOne(
          merchant,
          yield* newInvoice({
            merchant_id: original.merchant_id,
            draft,
            trade_id: null,
            subscription_id: original.subscription_id,
            price_id: original.price_id,
            price_version_id: original.price_version_id,
            customer_id: original.customer_id,
            order_id: original.order_id,
            trigger: "settle_without_charge",
            at
          })
        )
        yield* Effect.orDie(invoices.insert(note))
        return note
      })

    /**
     * Issues a credit note of a paid subscription invoice to the customer's balance (in one
     * transaction: the document, the balance entry, `v2.credit_note.created`). Refused, changing
     * nothing: a method other than `credit_balance` (a refund is the trade's refund), an
     * invoice that is not a paid subscription charge, an amount not above zero, finer than the
     * currency or above what the invoice still holds after its refunds and credits.
     */
    const toBalance = Effect.fn("InvoiceCredits.toBalance")(function* (merchantId: string, cmd: CreditNoteCommand) {
      if (cmd.amount === undefined)
        return yield* new Errors.InvalidParameter({ param: "amount", reason: "is required" })
      const reason = (cmd.reason ?? "credit note").trim()
      if (reason === "" || reason.length > MAX_REASON)
        return yield* new Errors.InvalidParameter({ param: "reason", reason: `must be 1 to ${MAX_REASON} characters` })
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* Effect.flatMap(invoices.get(merchantId, cmd.invoice_id), (o) =>
            Option.isSome(o)
              ? Effect.succeed(o.value)
              : Effect.fail(new Errors.NotFound({ resource: "invoice", id: cmd.invoice_id }))
          )
          const original = iv.value
          if (Invoice.isStandalone(original.invoice_type))
            return yield* oneOffToBalance(merchantId, iv, cmd, reason, at)
          if (
            !CycleLedger.PAYING.includes(original.invoice_type) ||
            original.paid_at === null ||
            original.subscription_id === null
          )
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: original.invoice_id,
              state: original.biz_status,
              reason: "only a paid subscription or one-off invoice can be credited to the balance"
            })
          const amount = yield* Effect.fromResult(Money.parse(cmd.amount!, original.currency)).pipe(
            Effect.mapError(
              () =>
                new Errors.InvalidParameter({
                  param: "amount",
                  reason: `must be a decimal amount in ${original.currency} with at most its decimals`
                })
            )
          )
          if (amount.amount <= 0n)
            return yield* new Errors.InvalidParameter({ param: "amount", reason: "must be above 0" })
          const sv = yield* Effect.flatMap(subs.get(merchantId, original.subscription_id), (o) =>
            Option.isSome(o)
              ? Effect.succeed(o.value)
              : Effect.fail(new Errors.NotFound({ resource: "subscription", id: original.subscription_id! }))
          )
          // what it still holds: its own paid less given back, and never more than its cycle holds
          const c = yield* CycleLedger.collectedBy(storage, merchantId, sv.value, original.cycle_index)
          const ledger = c.invoices.find((i) => i.invoice_id === original.invoice_id)
          const cycleHeld = c.paid.amount - c.givenBack.amount
          const itsHeld = ledger ? ledger.paid.amount - ledger.givenBack.amount : cycleHeld
          const held = itsHeld < cycleHeld ? itsHeld : cycleHeld
          if (amount.amount > held)
            return yield* new Errors.InvalidParameter({
              param: "amount",
              reason: `is above what the invoice still holds after its refunds and credits (${Money.format(
                Money.make(held > 0n ? held : 0n, original.currency)
              )} ${original.currency})`
            })
          const draft = CreditNotes.draft({
            amount,
            cycle_index: original.cycle_index,
            original_invoice_id: original.invoice_id,
            reason,
            tax: {
              lines: taxLinesOf(original),
              paid: ledger?.paid ?? c.paid,
              refundedBefore: ledger?.givenBack ?? c.givenBack
            }
          })
          const note = yield* settledNote(merchant, original, draft, at)
          // counted as given back from its cycle; held as the subscription's share while it bills
          const live = LIVE.has(sv.value.subscription.status)
          const credited = CycleLedger.withCredited(sv.value, original.cycle_index, amount, original.invoice_id)
          const share = Result.getOrThrow(
            Money.parse(sv.value.subscription.credit_balance, original.currency, { allowNegative: true })
          )
          const source = { sourceType: "credit_note" as const, sourceId: note.invoice_id, description: reason }
          yield* writes(storage).saveSub(
            live
              ? {
                  ...credited,
                  subscription: new Subscription.Subscription(
                    {
                      ...credited.subscription,
                      credit_balance: Money.format(Money.make(share.amount + amount.amount, original.currency))
                    },
                    { disableChecks: true }
                  )
                }
              : credited,
            sv.version,
            at,
            source
          )
          if (!live)
            yield* allocate(storage, {
              merchantId,
              customerId: original.customer_id,
              amount,
              ...source,
              at
            })
          yield* emit(storage, {
            merchant_id: merchantId,
            type: "v2.credit_note.created",
            business_id: note.invoice_id,
            schema: Invoice.Invoice,
            data: note,
            at
          })
          return note
        })
      )
    })

    /** The credit note's amount in the invoice's currency: above zero, at most its decimals. */
    const amountOf = (cmd: CreditNoteCommand, currency: string) =>
      Effect.gen(function* () {
        if (cmd.amount === undefined)
          return yield* new Errors.InvalidParameter({ param: "amount", reason: "is required" })
        const amount = yield* Effect.fromResult(Money.parse(cmd.amount, currency)).pipe(
          Effect.mapError(
            () =>
              new Errors.InvalidParameter({
                param: "amount",
                reason: `must be a decimal amount in ${currency} with at most its decimals`
              })
          )
        )
        if (amount.amount <= 0n)
          return yield* new Errors.InvalidParameter({ param: "amount", reason: "must be above 0" })
        return amount
      })

    const reasonOf = (cmd: CreditNoteCommand) =>
      Effect.gen(function* () {
        const reason = (cmd.reason ?? "credit note").trim()
        if (reason === "" || reason.length > MAX_REASON)
          return yield* new Errors.InvalidParameter({
            param: "reason",
            reason: `must be 1 to ${MAX_REASON} characters`
          })
        return reason
      })

    const above = (param: string, what: string, left: bigint, currency: string) =>
      new Errors.InvalidParameter({
        param,
        reason: `is above what ${what} (${Money.format(Money.make(left > 0n ? left : 0n, currency))} ${currency})`
      })

    /** Writes an invoice at its version (a concurrent writer's change is a `ConcurrentUpdate`). */
    const saveInvoice = (next: Invoice.Invoice, version: number) =>
      invoices.update(next, version).pipe(
        Effect.catchTags({
          VersionConflict: () => Effect.fail(new Errors.ConcurrentUpdate({ resource: "invoice", id: next.invoice_id })),
          UniqueViolation: (e) => Effect.die(e)
        })
      )

    /** Issues and inserts a credit note against `original` for `amount`, its taxes in proportion. */
    const issueNote = (
      merchant: Merchant.Merchant,
      original: Invoice.Invoice,
      amount: Money.Money,
      reason: string,
      tax: { readonly paid: Money.Money; readonly before: Money.Money },
      at: number
    ) =>
      Effect.gen(function* () {
        const draft = CreditNotes.draft({
          amount,
          cycle_index: original.cycle_index,
          original_invoice_id: original.invoice_id,
          reason,
          tax: { lines: taxLinesOf(original), paid: tax.paid, refundedBefore: tax.before }
        })
        const note = yield* settledNote(merchant, original, draft, at)
        yield* emit(storage, {
          merchant_id: original.merchant_id,
          type: "v2.credit_note.created",
          business_id: note.invoice_id,
          schema: Invoice.Invoice,
          data: note,
          at
        })
        return note
      })

    /**
     * A paid one-off invoice credited to the customer's balance (in the caller's transaction):
     * bounded by what its trade collected less its refunds and earlier credit notes; the invoice
     * counts it (`post_payment_credit_notes_amount`) and the customer's balance holds it
     * (`allocate`: the share of its subscription that renews next, else the ledger alone, which
     * its next one-off invoice applies).
     */
    const oneOffToBalance = (
      merchantId: string,
      iv: Store.Versioned<Invoice.Invoice>,
      cmd: CreditNoteCommand,
      reason: string,
      at: number
    ) =>
      Effect.gen(function* () {
        const original = iv.value
        if (original.paid_at === null || Lifecycle.invoiceStatusOf(original.biz_status) !== "paid")
          return yield* new Errors.StateConflict({
            resource: "invoice",
            id: original.invoice_id,
            state: original.biz_status,
            reason: "only a paid invoice can be credited to the balance (an unpaid one is reduced: reduce_invoice)"
          })
        const amount = yield* amountOf(cmd, original.currency)
        const charged = Money.make(
          Result.getOrThrow(Money.parse(original.amount, original.currency)).amount -
            Invoice.preCredited(original).amount,
          original.currency
        )
        let refunded = 0n
        if (original.trade_id !== null) {
          const tv = yield* storage.repository(Entities.trade).get(merchantId, original.trade_id)
          if (Option.isSome(tv))
            refunded = Result.getOrThrow(
              Money.parse(tv.value.value.trade.total_refunded_amount, original.currency)
            ).amount
        }
        const before = refunded + Invoice.postCredited(original).amount
        const left = charged.amount - before
        if (amount.amount > left)
          return yield* above(
            "amount",
            "the invoice still holds after its refunds and credits",
            left,
            original.currency
          )
        const merchant = yield* merchants.get(merchantId)
        const note = yield* issueNote(
          merchant,
          original,
          amount,
          reason,
          { paid: charged, before: Money.make(before, original.currency) },
          at
        )
        yield* saveInvoice(
          new Invoice.Invoice(
            {
              ...original,
              post_payment_credit_notes_amount: Money.format(
                Money.make(Invoice.postCredited(original).amount + amount.amount, original.currency)
              )
            },
            { disableChecks: true }
          ),
          iv.version
        )
        yield* allocate(storage, {
          merchantId,
          customerId: original.customer_id,
          amount,
          sourceType: "credit_note",
          sourceId: note.invoice_id,
          description: reason,
          at
        })
        return note
      })

    /**
     * A credit note that reduces what an issued, unpaid invoice still owes (`open`, `retrying`,
     * `failed`, `uncollectible`), in one transaction: the numbered credit note (its taxes in
     * proportion to the invoice's), the invoice's `pre_payment_credit_notes_amount` (its lines
     * and amount stay as issued), its trade's amount to collect lowered to what remains (the page's
     * Pay, the next retry and a sent invoice charge that); reduced to zero, the invoice is settled
     * (`credited_in_full`, `v2.invoice.paid`), its trade closed, its dunning stopped and a past-due
     * subscription whose latest cycle it bills back to `active`. Never more than remains.
     */
    const reduce = Effect.fn("InvoiceCredits.reduce")(function* (merchantId: string, cmd: CreditNoteCommand) {
      const reason = yield* reasonOf(cmd)
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* Effect.flatMap(invoices.get(merchantId, cmd.invoice_id), (o) =>
            Option.isSome(o)
              ? Effect.succeed(o.value)
              : Effect.fail(new Errors.NotFound({ resource: "invoice", id: cmd.invoice_id }))
          )
          const invoice = iv.value
          if (!REDUCIBLE.has(invoice.biz_status) || !Invoice.isIssued(invoice) || invoice.invoice_type === "refund")
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: invoice.invoice_id,
              state: invoice.biz_status,
              reason:
                invoice.biz_status === "pending"
                  ? "a charge of it is in flight: wait for its answer"
                  : invoice.biz_status === "draft"
                    ? "a draft is edited, not credited"
                    : "only an issued unpaid invoice (open, retrying, failed or uncollectible) can be reduced"
            })
          const amount = yield* amountOf(cmd, invoice.currency)
          const total = Result.getOrThrow(Money.parse(invoice.amount, invoice.currency))
          const credited = Invoice.preCredited(invoice)
          const remaining = Invoice.amountRemaining(invoice)
          if (amount.amount > remaining.amount)
            return yield* above("amount", "the invoice still owes", remaining.amount, invoice.currency)
          const trades = storage.repository(Entities.trade)
          const tv =
            invoice.trade_id === null
              ? undefined
              : Option.getOrUndefined(yield* Effect.orDie(trades.get(merchantId, invoice.trade_id)))
          // a payment waiting for the customer (3-D Secure) is for the amount it was asked: it ends first
          if (tv !== undefined && tv.value.trade.trade_status === "processing")
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: invoice.invoice_id,
              state: invoice.biz_status,
              reason: "a payment of it is in progress: wait for its answer"
            })
          const left = Money.make(remaining.amount - amount.amount, invoice.currency)
          // what remains is still charged: never an amount under the processor's minimum charge
          if (yield* underMinimum(gateway, merchantId, left))
            return yield* new Errors.InvalidParameter({
              param: "amount",
              reason: `would leave ${Money.format(left)} ${invoice.currency} to pay, under the processor's minimum charge: credit all that remains (${Money.format(remaining)}) or less`
            })
          const note = yield* issueNote(merchant, invoice, amount, reason, { paid: total, before: credited }, at)
          const patch = {
            pre_payment_credit_notes_amount: Money.format(Money.make(credited.amount + amount.amount, invoice.currency))
          }
          const saveTrade = (next: Trade.Trade) =>
            trades.update({ ...tv!.value, trade: next }, tv!.version).pipe(
              Effect.catchTags({
                VersionConflict: () =>
                  Effect.fail(new Errors.ConcurrentUpdate({ resource: "trade", id: next.trade_id })),
                UniqueViolation: (e) => Effect.die(e)
              })
            )
          if (left.amount > 0n) {
            yield* saveInvoice(new Invoice.Invoice({ ...invoice, ...patch }, { disableChecks: true }), iv.version)
            if (
              tv !== undefined &&
              tv.value.trade.trade_status !== "succeeded" &&
              tv.value.trade.trade_status !== "closed"
            )
              yield* saveTrade(
                new Trade.Trade({ ...tv.value.trade, amount: Money.format(left) }, { disableChecks: true })
              )
            return note
          }
          // nothing remains: settled through its machine, nothing charged
          const moved = Result.getOrThrow(
            Invoice.move(invoice, "credited_in_full", {
              ...patch,
              paid_at: dt(at),
              dunning:
                invoice.dunning === null
                  ? null
                  : new Invoice.InvoiceDunning({ ...invoice.dunning, next_action: "none", next_retry_at: null })
            })
          )
          yield* saveInvoice(moved.value, iv.version)
          yield* emitAll(storage, moved.events, {
            merchant_id: merchantId,
            business_id: invoice.invoice_id,
            schema: Invoice.Invoice,
            data: moved.value,
            at
          })
          if (tv !== undefined) {
            const closed = Trade.move(tv.value.trade, "close", {
              amount: Money.format(left),
              closed_at: dt(at),
              closed_reason: "invoice_credited"
            })
            if (Result.isSuccess(closed)) yield* saveTrade(closed.success.value)
          }
          if (invoice.subscription_id !== null) {
            const sv = Option.getOrUndefined(yield* Effect.orDie(subs.get(merchantId, invoice.subscription_id)))
            // as a payment of it: a past-due or unpaid subscription is active again, its renewals resume
            const s = sv?.value.subscription
            if (sv !== undefined && s !== undefined && (s.status === "past_due" || s.status === "unpaid")) {
              const back = Lifecycle.must(Subscription.move(s, "retry_succeeded"))
              yield* writes(storage).saveSub({ ...sv.value, subscription: back, dunning_attempts: 0 }, sv.version, at)
              yield* storage.workQueue.cancel(merchantId, "dunning", s.id)
              if (s.next_invoice_date !== null)
                yield* writes(storage).schedule(merchant, "renewal", s.id, Math.max(msOf(s.next_invoice_date), at))
            }
          }
          return note
        })
      )
    })

    /**
     * A refund to the card, through the refund service (`Refunds.refund`, as the merchant's
     * refund request): of the invoice's trade, keyed by the request's key; the answer is the
     * refund's credit note (none while the processor has not confirmed it).
     */
    const refund = Effect.fn("InvoiceCredits.refund")(function* (merchantId: string, cmd: CreditNoteCommand) {
      const reason = yield* reasonOf(cmd)
      const invoice = yield* Effect.flatMap(invoices.get(merchantId, cmd.invoice_id), (o) =>
        Option.isSome(o)
          ? Effect.succeed(o.value.value)
          : Effect.fail(new Errors.NotFound({ resource: "invoice", id: cmd.invoice_id }))
      )
      if (invoice.trade_id === null || invoice.paid_at === null || invoice.invoice_type === "refund")
        return yield* new Errors.StateConflict({
          resource: "invoice",
          id: invoice.invoice_id,
          state: invoice.biz_status,
          reason: "only a paid invoice charged to a card can be refunded"
        })
      yield* amountOf(cmd, invoice.currency)
      const made = yield* refunds
        .refund(
          merchantId,
          Refunds.refundOf(invoice.trade_id, {
            amount: cmd.amount,
            reason,
            requestKey: cmd.request_key
          })
        )
        .pipe(
          Effect.catchTags({
            RefundRefused: (e) => Effect.fail(new Errors.InvalidParameter({ param: "amount", reason: e.detail })),
            TradeNotRefundable: (e) =>
              Effect.fail(
                new Errors.StateConflict({
                  resource: "invoice",
                  id: invoice.invoice_id,
                  state: invoice.biz_status,
                  reason: `its payment cannot be refunded (${e.state})`
                })
              ),
            TradeNotFound: () => Effect.fail(new Errors.NotFound({ resource: "trade", id: invoice.trade_id! }))
          })
        )
      const note =
        made.credit_note_id === null
          ? null
          : Option.getOrNull(Option.map(yield* invoices.get(merchantId, made.credit_note_id), (v) => v.value))
      return { credit_note: note, refundState: made.refund_status } satisfies CreditNoteOutcome
    })

    /**
     * Issues a credit note of an invoice by its `method`: `credit_balance` (the default; a paid
     * invoice credited to the customer's balance), `reduce_invoice` (an unpaid issued invoice owes
     * less) or `refund` (its payment refunded to the card). Answers the credit note (none for a
     * refund the processor has not confirmed, or refused: its `refundState` says). Bad input
     * changes nothing.
     */
    const create = Effect.fn("InvoiceCredits.create")(function* (merchantId: string, cmd: CreditNoteCommand) {
      const method = cmd.method ?? "credit_balance"
      const issued = (credit_note: Invoice.Invoice): CreditNoteOutcome => ({ credit_note, refundState: null })
      switch (method) {
        case "credit_balance":
          return issued(yield* toBalance(merchantId, cmd))
        case "reduce_invoice":
          return issued(yield* reduce(merchantId, cmd))
        case "refund":
          return yield* refund(merchantId, cmd)
        default:
          return yield* new Errors.InvalidParameter({
            param: "method",
            reason: "must be credit_balance, reduce_invoice or refund"
          })
      }
    })

    return { create } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
