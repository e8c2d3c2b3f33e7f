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
import { emit, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as CreditNotes from "./CreditNotes.js"

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
}

const LIVE = new Set(["trial", "active", "past_due", "paused", "unpaid"])
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

    /**
     * Issues a credit note of a paid subscription invoice to the customer's balance (in one
     * transaction: the document, the balance entry, `v2.credit_note.created`). Refused, changing
     * nothing: a method other than `credit_balance` (a refund is the trade's refund), an
     * invoice that is not a paid subscription charge, an amount not above zero, finer than the
     * currency or above what the invoice still holds after its refunds and credits.
     */
    const create = Effect.fn("InvoiceCredits.create")(function* (merchantId: string, cmd: CreditNoteCommand) {
      const method = cmd.method ?? "credit_balance"
      if (method !== "credit_balance")
        return yield* new Errors.InvalidParameter({
          param: "method",
          reason:
            method === "refund"
              ? "a refund to the card is a refund of the invoice's trade (its credit note follows)"
              : "must be credit_balance"
        })
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
          if (
            !CycleLedger.PAYING.includes(original.invoice_type) ||
            original.paid_at === null ||
            original.subscription_id === null
          )
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: original.invoice_id,
              state: original.biz_status,
              reason: "only a paid subscription invoice can be credited to the balance"
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
          const note = yield* documents.issueOne(
            merchant,
            yield* newInvoice({
              merchant_id: merchantId,
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

    return { create } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
