/**
 * The REST adapter's and the facade's reads of subscriptions, trades and invoices, an invoice's
 * hosted document. The money path's
 * operations are called on the service that owns them: {@link Checkout}, `SessionPayments`,
 * `Payments`, `Renewals`, {@link Dunning}, `Worker`, `SandboxClock` (see docs/engine.md).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import * as Checkout from "../checkout/Checkout.js"
import * as Dunning from "../payments/Dunning.js"
import * as Entities from "../kernel/Entities.js"
import * as Customer from "../customers/Customer.js"
import * as Invoice from "../invoices/Invoice.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import { withTax } from "../taxes/TaxRates.js"
import { must } from "../kernel/ServiceSupport.js"
import { pageErrors } from "../kernel/Paging.js"
import * as PaymentSettings from "../payments/PaymentSettings.js"
import type * as Payments from "../payments/Payments.js"
import * as Ports from "../kernel/Ports.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as SubscriptionItems from "../subscriptions/SubscriptionItems.js"
import * as SubscriptionTerms from "../subscriptions/SubscriptionTerms.js"

/**
 * The result of paying a session (or of any charge the engine makes).
 *
 * @since 0.1.0
 */
export type PaymentResult = Payments.PaymentResult

/**
 * What an invoice's page and PDF show: the invoice, who issued it and to whom.
 *
 * @since 0.1.0
 */
export interface InvoiceDocument {
  readonly invoice: Invoice.Invoice
  readonly merchantName: string
  /** Whether the customer can pay it from its page (see `Dunning.payable`). */
  readonly payable: boolean
  /** How its Pay form takes a payment method: the sandbox's card fields or Stripe's Payment Element. */
  readonly payments: PaymentSettings.PageMode
  readonly customer: {
    readonly name: string | null
    readonly email: string | null
    readonly address: string | null
  }
  /**
   * Paid with nothing charged: the processor refused its charge as under its minimum (its trade
   * closed `below_minimum`), its total carried to the customer's next invoice.
   */
  readonly carried?: boolean
}

/**
 * Settings as a layer (an alias of {@link Settings.layer}).
 *
 * @since 0.1.0
 */
export const layerSettings = Settings.layer

/**
 * The billing façade.
 *
 * @since 0.1.0
 */
export class Billing extends Context.Service<Billing>()("@recur/core/Billing", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const _checkout = yield* Checkout.Checkout
    const dunning = yield* Dunning.Dunning
    const taxes = yield* Ports.TaxCalculator
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)

    const getSubscriptionRecord = Effect.fn("Billing.getSubscriptionRecord")(function* (
      merchantId: string,
      id: string
    ) {
      return yield* Effect.flatMap(subs.get(merchantId, id), (o) => must(o, "subscription", id))
    })
    const withItems = SubscriptionItems.withItems(storage)
    /** Subscriptions as their answers show them: with their discounts and their items. */
    const answers = (merchantId: string, recs: ReadonlyArray<Entities.SubscriptionRecord>) =>
      withItems(
        merchantId,
        recs.map((rec) => ({ rec, answer: SubscriptionTerms.withDiscounts(rec) }))
      )
    const getSubscription = Effect.fn("Billing.getSubscription")(function* (merchantId: string, id: string) {
      const v = yield* getSubscriptionRecord(merchantId, id)
      return (yield* answers(merchantId, [v.value]))[0]!
    })
    const getTrade = Effect.fn("Billing.getTrade")(function* (merchantId: string, id: string) {
      return yield* Effect.map(
        Effect.flatMap(trades.get(merchantId, id), (o) => must(o, "trade", id)),
        (v) => v.value.trade
      )
    })
    const getInvoice = Effect.fn("Billing.getInvoice")(function* (merchantId: string, id: string) {
      return yield* Effect.map(
        Effect.flatMap(invoices.get(merchantId, id), (o) => must(o, "invoice", id)),
        (v) => Invoice.viewOf(v.value)
      )
    })
    const listInvoices = Effect.fn("Billing.listInvoices")(function* (merchantId: string, query: Store.ListQuery) {
      const page = yield* pageErrors(invoices.list(merchantId, query))
      return { ...page, list: page.list.map(Invoice.viewOf) }
    })
    const settings = yield* Settings.Settings
    const documents = invoiceDocuments(storage, yield* Secrets.Secrets, settings)
    const merchantRecords = storage.repository(Entities.merchant)
    const customers = storage.repository(Entities.customer)

    /**
     * An invoice as its hosted page and PDF show it — the invoice, its merchant and its customer —
     * when `token` is its link's signature; none otherwise (an unknown invoice and a wrong token
     * look the same).
     */
    const invoiceDocument = Effect.fn("Billing.invoiceDocument")(function* (invoiceId: string, token: string) {
      if (!/^inv_[0-9a-z]{26}$/.test(invoiceId) || token.length > 100) return Option.none<InvoiceDocument>()
      const found = yield* Effect.orDie(invoices.lookup("id", invoiceId))
      if (Option.isNone(found)) return Option.none<InvoiceDocument>()
      const invoice = found.value.value
      if (!(yield* documents.verify(invoice.merchant_id, invoice.invoice_id, token)))
        return Option.none<InvoiceDocument>()
      const merchant = yield* Effect.orDie(merchantRecords.get(invoice.merchant_id, invoice.merchant_id))
      // an issued invoice states the parties as they were at issue (its snapshot); only one
      // issued before snapshots were kept shows the current records
      const kept = invoice.merchant_name !== null
      const customer = kept
        ? Option.none()
        : yield* Effect.orDie(customers.get(invoice.merchant_id, invoice.customer_id))
      const trade =
        invoice.biz_status === "success" && invoice.trade_id !== null
          ? yield* trades.get(invoice.merchant_id, invoice.trade_id)
          : Option.none()
      return Option.some<InvoiceDocument>({
        invoice,
        carried: Option.isSome(trade) && trade.value.value.trade.closed_reason === "below_minimum",
        merchantName: kept
          ? invoice.merchant_name!
          : Option.match(merchant, { onNone: () => "", onSome: (m) => m.value.name }),
        payable: yield* dunning.payable(invoice),
        payments: PaymentSettings.pageModeOf(
          Option.match(merchant, { onNone: () => null, onSome: (m) => m.value.payment_processor }),
          settings.stripeJsUrl
        ),
        customer: Option.match(customer, {
          onNone: () => ({
            name: invoice.customer_name,
            email: invoice.customer_email,
            address: invoice.customer_address
          }),
          onSome: (c) => ({
            name: c.value.name,
            email: c.value.email,
            address: c.value.address ? Customer.formatAddress(c.value.address) || null : null
          })
        })
      })
    })
    const listTrades = Effect.fn("Billing.listTrades")(function* (merchantId: string, query: Store.ListQuery) {
      return yield* Effect.map(pageErrors(trades.list(merchantId, query)), (p) => ({
        has_more: p.has_more,
        list: p.list.map((t) => t.trade)
      }))
    })
    const listSubscriptions = Effect.fn("Billing.listSubscriptions")(function* (
      merchantId: string,
      query: Store.ListQuery
    ) {
      const p = yield* pageErrors(subs.list(merchantId, query))
      return { has_more: p.has_more, list: yield* answers(merchantId, p.list) }
    })

    return {
      invoiceDocument,
      /** A draft with the tax calculator's tax, its discounts kept (see `internal/records`). */
      withTax: withTax(taxes, storage),
      getSubscription,
      getSubscriptionRecord,
      getTrade,
      getInvoice,
      listInvoices,
      listTrades,
      listSubscriptions
    } as const
  })
}) {
  /** The live implementation: needs the concept services (see `Engine.layer`). */
  static readonly layer = Layer.effect(this, this.make)
}
