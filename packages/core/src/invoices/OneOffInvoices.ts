/**
 * One-off invoices: a customer's pending invoice items (`InvoiceItems`) billed on an invoice of
 * their own (`invoice_type` `one_off`), outside any subscription — built with the code that
 * builds every invoice (`Invoicing.total`, tax at the customer's address through the
 * `TaxCalculator` port, `InvoiceDocuments` for its gapless number), its items marked invoiced in
 * the transaction that issues it (an item is billed by one invoice only), then charged off
 * session to the card on file through the engine's charge path (`Charges.chargeInvoiceTrade`,
 * `Payments.applyOutcome`). A customer without a card gets the invoice `open`, paid on its
 * hosted page; a declined one is `failed` and payable there too (no dunning: no subscription).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import * as SharedCredit from "../customers/SharedCredit.js"
import type { Metadata } from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { emit, laneOf, must, nowOf } from "../kernel/ServiceSupport.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import { cardOnFile } from "../payments/CardOnFile.js"
import { minimumFor, underMinimum } from "../payments/Charges.js"
import * as Charges from "../payments/Charges.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import * as Trade from "../payments/Trade.js"
import { newTrade, submitTrade } from "../payments/TradeStore.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import { withTax } from "../taxes/TaxRates.js"
import * as Collection from "./Collection.js"
import * as Invoice from "./Invoice.js"
import { invoiceDocuments, newInvoice } from "./InvoiceDocuments.js"
import * as InvoiceItem from "./InvoiceItem.js"
import * as Invoicing from "./Invoicing.js"
import * as PendingItems from "./PendingItems.js"

/**
 * A one-off invoice to create: the customer whose pending items it bills (all of them, oldest
 * first, up to {@link InvoiceItem.MAX_ITEMS_PER_INVOICE}), in `currency` when they are in several.
 *
 * @since 0.1.0
 */
export interface CreateOneOffInvoice {
  readonly customer_id: string
  readonly currency?: string | undefined
  readonly metadata?: Metadata | undefined
  /** This invoice's collection, overriding the customer's (`days_until_due` with `send_invoice`). */
  readonly collection_method?: string | undefined
  readonly days_until_due?: number | null | undefined
}

/**
 * The untaxed draft of a one-off invoice of `items` (all in `currency`): their lines totalled by
 * `Invoicing.total`, as every invoice is (the tax step adds the tax at the customer's address).
 *
 * @since 0.1.0
 */
export const draftOf = (currency: string, items: ReadonlyArray<InvoiceItem.InvoiceItem>): Invoicing.Draft =>
  Invoicing.total({ invoice_type: "one_off", cycle_index: 0, currency, lines: InvoiceItem.linesOf(items) })

/**
 * The one-off invoices service.
 *
 * @since 0.1.0
 */
export class OneOffInvoices extends Context.Service<OneOffInvoices>()("@recur/core/OneOffInvoices", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const charges = yield* Charges.Charges
    const taxes = yield* Ports.TaxCalculator
    const gateway = yield* Ports.PaymentGateway
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings)
    const items = storage.repository(Entities.invoiceItem)
    const invoices = storage.repository(Entities.invoice)
    const customers = storage.repository(Entities.customer)
    const trades = storage.repository(Entities.trade)
    const taxed = withTax(taxes, storage)

    /**
     * Bills the customer's pending items (not bound to a subscription) on a new `one_off`
     * invoice, numbered as it is issued; the items become `invoiced` in the same transaction, so a
     * concurrent call bills each at most once (the loser is a `ConcurrentUpdate`, nothing
     * written). Then charged to the card on file: paid (`v2.invoice.paid`), or declined (the
     * invoice `failed`, `v2.invoice.payment_failed`, payable on its page). Without a card the
     * invoice stays `open` for its hosted page. A total of zero is paid at once. Refused, with
     * nothing written: an unknown customer, no pending items (in `currency`), items in several
     * currencies and no `currency`, a total under the processor's minimum charge.
     */
    const create = Effect.fn("OneOffInvoices.create")(function* (merchantId: string, command: CreateOneOffInvoice) {
      const merchant = yield* merchants.get(merchantId)
      const found = yield* Effect.orDie(customers.get(merchantId, command.customer_id))
      if (Option.isNone(found) || found.value.value.deleted_at !== null)
        return yield* new Errors.NotFound({ resource: "customer", id: command.customer_id, param: "customer_id" })
      const wanted = command.currency?.toUpperCase()
      if (wanted !== undefined && Result.isFailure(Money.currency(wanted)))
        return yield* new Errors.InvalidParameter({ param: "currency", reason: "is not a known currency" })
      // how it is collected: as the request says, else as the customer's setting
      const asked = Collection.parse({
        collection_method: command.collection_method,
        days_until_due: command.days_until_due
      })
      if (asked instanceof Errors.InvalidParameter) return yield* asked
      const collection = Collection.effective(asked ?? null, found.value.value.collection ?? null)
      const token = yield* cardOnFile(storage, merchantId, command.customer_id)
      const prepared = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const page = yield* Effect.orDie(
            items.list(merchantId, {
              limit: 100,
              filters: [
                { column: "customer_id", op: "in", values: [command.customer_id] },
                { column: "status", op: "in", values: ["pending"] },
                { column: "subscription_id", op: "is_null" }
              ]
            })
          )
          const pending = page.list
          const currencies = [...new Set(pending.map((i) => i.currency))]
          if (wanted === undefined && currencies.length > 1)
            return yield* new Errors.InvalidParameter({
              param: "currency",
              reason: `the customer's pending invoice items are in ${currencies.join(", ")}: say which to invoice`
            })
          const currency = wanted ?? currencies[0]
          // oldest first: the list is newest first
          const billed = pending
            .filter((i) => i.currency === currency)
            .reverse()
            .slice(0, InvoiceItem.MAX_ITEMS_PER_INVOICE)
          if (currency === undefined || billed.length === 0)
            return yield* new Errors.InvalidRequest({
              reason: `the customer has no pending invoice items${wanted !== undefined ? ` in ${wanted}` : ""}`,
              param: "customer_id"
            })
          // the customer's credit is applied first (issue 34): what no subscription holds, then
          // what its subscriptions hold (SharedCredit), never more than its balance
          const free = yield* SharedCredit.available(storage, {
            merchantId,
            customerId: command.customer_id,
            currency,
            holder: null,
            at
          })
          // never leaving less than the processor's minimum to charge (that would be refused):
          // the credit applied is then what leaves the minimum
          const uncredited = yield* taxed(draftOf(currency, billed), merchantId, command.customer_id)
          const credit = SharedCredit.capped(
            free.amount,
            uncredited.total.amount,
            yield* minimumFor(gateway, merchantId, currency)
          )
          const draft =
            credit > 0n
              ? yield* taxed(draftOf(currency, billed), merchantId, command.customer_id, Money.make(credit, currency))
              : uncredited
          if (!Money.isWithinBounds(draft.total))
            return yield* new Errors.InvalidRequest({
              reason: "the invoice's total exceeds the largest amount an invoice carries",
              param: "customer_id"
            })
          if (yield* underMinimum(gateway, merchantId, draft.total))
            return yield* new Errors.InvalidRequest({
              reason: "the invoice's total is under the processor's minimum charge: add items first",
              param: "customer_id"
            })
          const due = draft.total.amount > 0n
          // sent with net terms (not charged): open, numbered, due `days_until_due` from now
          const dueAt = due ? Collection.dueAt(collection, at) : null
          const trade = due
            ? yield* newTrade({
                merchant,
                amount: draft.total,
                customer_id: command.customer_id,
                order_id: null,
                payment_mode: "onetime_payment",
                order_type: "one_time",
                session: Option.none(),
                line: null,
                tax: draft.tax,
                metadata: {},
                at
              })
            : null
          const created = yield* newInvoice({
            merchant_id: merchantId,
            draft,
            trade_id: trade?.trade_id ?? null,
            subscription_id: null,
            price_id: null,
            price_version_id: null,
            customer_id: command.customer_id,
            order_id: null,
            trigger: !due ? "settle_without_charge" : Option.isSome(token) && dueAt === null ? "charge" : null,
            at
          })
          const withMetadata = new Invoice.Invoice(
            { ...created, metadata: command.metadata ?? {} },
            { disableChecks: true }
          )
          const inv = yield* documents.issueOne(
            merchant,
            dueAt === null ? withMetadata : SentInvoices.asSent(withMetadata, dueAt)
          )
          // billed once: a concurrent invoice that took one of these items first fails this one whole
          yield* PendingItems.markInvoiced(storage, merchantId, billed, inv.invoice_id)
          yield* Effect.orDie(invoices.insert(inv))
          if (draft.creditApplied.amount > 0n)
            yield* SharedCredit.take(storage, merchantId, free, draft.creditApplied.amount)
          if (draft.creditApplied.amount > 0n)
            yield* CustomerBalance.record(storage, {
              merchantId,
              customerId: command.customer_id,
              currency,
              amount: -draft.creditApplied.amount,
              sourceType: "applied_to_invoice",
              sourceId: inv.invoice_id,
              description: null,
              at
            })
          if (trade === null) {
            yield* emit(storage, {
              merchant_id: merchantId,
              type: "v2.invoice.paid",
              business_id: inv.invoice_id,
              schema: Invoice.Invoice,
              data: inv,
              at
            })
            return { invoice_id: inv.invoice_id, charge: Option.none<{ tradeId: string; token: string }>() }
          }
          if (dueAt !== null) {
            yield* SentInvoices.send(storage, merchant, { trade, invoice: inv, subscriptionId: null, at })
            return { invoice_id: inv.invoice_id, charge: Option.none<{ tradeId: string; token: string }>() }
          }
          if (Option.isSome(token)) {
            yield* submitTrade(storage, { trade, invoice_id: inv.invoice_id, subscription_id: null, at })
            // a durable intent: if this process dies before the charge, a worker makes it
            yield* storage.workQueue.schedule({
              lane: laneOf(merchant),
              merchant_id: merchantId,
              kind: "charge",
              subject_id: trade.trade_id,
              due_at: at
            })
            return { invoice_id: inv.invoice_id, charge: Option.some({ tradeId: trade.trade_id, token: token.value }) }
          }
          // no card on file: the trade waits for the customer's card on the invoice's page
          yield* Effect.orDie(trades.insert({ trade, attempts: 0, invoice_id: inv.invoice_id, subscription_id: null }))
          yield* emit(storage, {
            merchant_id: merchantId,
            type: "v2.trades.created",
            business_id: trade.trade_id,
            schema: Trade.Trade,
            data: trade,
            at
          })
          return { invoice_id: inv.invoice_id, charge: Option.none<{ tradeId: string; token: string }>() }
        })
      )
      if (Option.isSome(prepared.charge))
        yield* charges.chargeInvoiceTrade(merchantId, prepared.charge.value.tradeId, prepared.charge.value.token)
      return (yield* Effect.flatMap(Effect.orDie(invoices.get(merchantId, prepared.invoice_id)), (o) =>
        must(o, "invoice", prepared.invoice_id)
      )).value
    })

    return { create } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
