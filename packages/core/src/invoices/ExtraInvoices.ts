/**
 * Extra invoices (issue 35): a `one_off` invoice of given lines for a subscription's customer,
 * linked to the subscription (`subscription_id`) and to the invoice it adds to
 * (`original_invoice_id`) — what a re-rated period owes beyond what its invoice billed
 * (`UsageAdjustments`). Built as every invoice (`Invoicing.total`, tax at the customer's address,
 * a gapless number) and collected as the subscription is: sent with its net terms
 * (`send_invoice`), or charged off session to the customer's card on file as a one-off invoice is
 * (no dunning: a decline leaves it `failed`, payable on its page); without a card, or under the
 * processor's minimum charge, it stays `open` for its page. The customer's balance is not applied
 * (the next renewal applies it).
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import type * as Ports from "../kernel/Ports.js"
import { emit, laneOf, type StorageService } from "../kernel/ServiceSupport.js"
import type * as Money from "../money/Money.js"
import { cardOnFile } from "../payments/CardOnFile.js"
import { underMinimum } from "../payments/Charges.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import * as Trade from "../payments/Trade.js"
import { newTrade, submitTrade } from "../payments/TradeStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import type { withTax } from "../taxes/TaxRates.js"
import * as Collection from "./Collection.js"
import * as Invoice from "./Invoice.js"
import { type invoiceDocuments, newInvoice } from "./InvoiceDocuments.js"
import * as Invoicing from "./Invoicing.js"

/**
 * What {@link issue} needs from the engine.
 *
 * @since 0.1.0
 */
export interface Deps {
  readonly storage: StorageService
  readonly gateway: Ports.PaymentGateway["Service"]
  readonly documents: ReturnType<typeof invoiceDocuments>
  readonly taxed: ReturnType<typeof withTax>
}

/**
 * Issues an extra invoice of `lines` (their total above zero) in the caller's transaction and
 * answers it with the charge to make once that transaction commits (none when it is sent, the
 * customer has no card, or the total is under the processor's minimum).
 *
 * @example
 * const { invoice, charge } = yield* ExtraInvoices.issue(deps, { merchant, rec, original, currency: "USD", lines, at })
 * @since 0.1.0
 */
export const issue = (
  deps: Deps,
  input: {
    readonly merchant: Merchant.Merchant
    readonly rec: Entities.SubscriptionRecord
    readonly original: Invoice.Invoice
    readonly lines: ReadonlyArray<Invoicing.Line>
    readonly metadata: Readonly<Record<string, string>>
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const { storage, merchant, at } = { storage: deps.storage, ...input }
    const merchantId = merchant.merchant_id
    const customerId = input.original.customer_id
    const currency = input.original.currency
    const draft: Invoicing.Draft = yield* deps.taxed(
      Invoicing.total({
        invoice_type: "one_off",
        cycle_index: input.original.cycle_index,
        currency,
        lines: [...input.lines]
      }),
      merchantId,
      customerId
    )
    const holder = Option.getOrUndefined(
      yield* Effect.orDie(storage.repository(Entities.customer).get(merchantId, customerId))
    )?.value
    const collection = Collection.effective(input.rec.collection ?? null, holder?.collection ?? null)
    const dueAt = Collection.dueAt(collection, at)
    const token = yield* cardOnFile(storage, merchantId, customerId)
    const tiny = yield* underMinimum(deps.gateway, merchantId, draft.total)
    const trade = yield* newTrade({
      merchant,
      amount: draft.total as Money.Money,
      customer_id: customerId,
      order_id: null,
      payment_mode: "onetime_payment",
      order_type: "one_time",
      session: Option.none(),
      line: null,
      tax: draft.tax,
      metadata: {},
      at
    })
    const charged = dueAt === null && Option.isSome(token) && !tiny
    const created = yield* newInvoice({
      merchant_id: merchantId,
      draft,
      trade_id: trade.trade_id,
      subscription_id: input.rec.subscription.id,
      price_id: null,
      price_version_id: null,
      customer_id: customerId,
      order_id: null,
      trigger: charged ? "charge" : null,
      at
    })
    const linked = new Invoice.Invoice(
      { ...created, original_invoice_id: input.original.invoice_id, metadata: { ...input.metadata } },
      { disableChecks: true }
    )
    const inv = yield* deps.documents.issueOne(merchant, dueAt === null ? linked : SentInvoices.asSent(linked, dueAt))
    yield* Effect.orDie(storage.repository(Entities.invoice).insert(inv))
    if (dueAt !== null) {
      yield* SentInvoices.send(storage, merchant, { trade, invoice: inv, subscriptionId: null, at })
      return { invoice: inv, charge: Option.none<{ tradeId: string; token: string }>() }
    }
    if (charged && Option.isSome(token)) {
      yield* submitTrade(storage, { trade, invoice_id: inv.invoice_id, subscription_id: null, at })
      // a durable intent: if this process dies before the charge, a worker makes it
      yield* storage.workQueue.schedule({
        lane: laneOf(merchant),
        merchant_id: merchantId,
        kind: "charge",
        subject_id: trade.trade_id,
        due_at: at
      })
      return { invoice: inv, charge: Option.some({ tradeId: trade.trade_id, token: token.value }) }
    }
    // no card on file (or under the minimum charge): the trade waits for a payment on its page
    yield* Effect.orDie(
      storage
        .repository(Entities.trade)
        .insert({ trade, attempts: 0, invoice_id: inv.invoice_id, subscription_id: null })
    )
    yield* emit(storage, {
      merchant_id: merchantId,
      type: "v2.trades.created",
      business_id: trade.trade_id,
      schema: Trade.Trade,
      data: trade,
      at
    })
    return { invoice: inv, charge: Option.none<{ tradeId: string; token: string }>() }
  })
