/**
 * What a prorated change moves, shared by the changes of a subscription's price (`PriceChanges`)
 * and of its items (`ItemChanges`): the quote's settlement (an upgrade's invoice taxed, a refund
 * or a credit given back from what the cycle collected, a pending credit's part from the cycle's
 * payments), its commit in the change's transaction (the upgrade invoice charged, settled by the
 * credit or carried under the processor's minimum, a refund owed, a credit to the balance,
 * pending lines), what runs after the transaction (the charge, the owed refund), and the check
 * of a quote id's age.
 *
 * @since 0.1.0
 */
import { Effect, Option, Result } from "effect"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as GiveBack from "../invoices/GiveBack.js"
import { invoiceDocuments, newInvoice } from "../invoices/InvoiceDocuments.js"
import * as Invoicing from "../invoices/Invoicing.js"
import { CARRIED } from "../invoices/Invoicing.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Charges from "../payments/Charges.js"
import { underMinimum } from "../payments/Charges.js"
import { newTrade, submitTrade } from "../payments/TradeStore.js"
import * as OwedRefunds from "../refunds/OwedRefunds.js"
import { withTax } from "../taxes/TaxRates.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as ChangeCommit from "./ChangeCommit.js"
import * as ChangeQuote from "./ChangeQuote.js"
import { writes } from "./SubscriptionStore.js"

/** How long a quote may be committed after it was priced. */
const QUOTE_TTL_MS = 15 * 60_000

/**
 * The instant a commit re-plans at: the quote's own instant when one is given (refused when it
 * is not a quote id, `QuoteStale`, or older than 15 minutes or from the future, `QuoteExpired`),
 * else `now`.
 *
 * @since 0.1.0
 */
export const commitInstant = (
  subscriptionId: string,
  quoteId: Option.Option<string>,
  now: number
): Effect.Effect<number, Errors.QuoteStale | Errors.QuoteExpired> => {
  if (Option.isNone(quoteId)) return Effect.succeed(now)
  const made = ChangeQuote.quoteInstant(quoteId.value)
  if (made === undefined) return Effect.fail(new Errors.QuoteStale({ quoteId: quoteId.value, subscriptionId }))
  if (made > now || now - made > QUOTE_TTL_MS) return Effect.fail(new Errors.QuoteExpired({ quoteId: quoteId.value }))
  return Effect.succeed(made)
}

/**
 * What a prorated quote moves, as `settle` computed it: an upgrade's invoice, what is given back
 * (`back`), invoice by invoice (`shares`), and a pending credit's part from the cycle's payments.
 *
 * @since 0.1.0
 */
export interface Settled {
  readonly quote: ChangeQuote.Priced
  readonly upgrade: Invoicing.Draft | undefined
  readonly back: Money.Money | undefined
  readonly shares: ReadonlyArray<GiveBack.Share>
  readonly fromPaid: Money.Money
}

/**
 * The invoice a committed change issues names one price: the base item's after the change.
 *
 * @since 0.1.0
 */
export interface InvoicePrice {
  readonly id: string
  readonly price_version_id: string
}

/**
 * The settlement service's operations, bound to the engine's storage, taxes, gateway and refunds.
 *
 * @since 0.1.0
 */
export const make = Effect.gen(function* () {
  const storage = yield* Store.Storage
  const documents = invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings)
  const charges = yield* Charges.Charges
  const owedRefunds = yield* OwedRefunds.OwedRefunds
  const settings = yield* Settings.Settings
  const taxes = yield* Ports.TaxCalculator
  const gateway = yield* Ports.PaymentGateway
  const withTaxes = withTax(taxes, storage)
  const { schedule } = writes(storage)
  const invoices = storage.repository(Entities.invoice)

  /**
   * What `quote` moves now: an upgrade's invoice (the charge taxed at today's address and rates,
   * the credit giving back the tax its paid invoices collected), the net given back of a refund
   * or a credit, or a pending credit's part taken from the cycle's payments.
   */
  const settle = (input: {
    readonly merchantId: string
    readonly rec: Entities.SubscriptionRecord
    readonly quote: ChangeQuote.Priced
    readonly collected: GiveBack.Collected | undefined
    readonly available: Money.Money | undefined
  }) =>
    Effect.gen(function* () {
      const { merchantId, rec, collected, available } = input
      const currency = rec.currency
      let quote = input.quote
      let upgrade: Invoicing.Draft | undefined
      let back: Money.Money | undefined
      let shares: ReadonlyArray<GiveBack.Share> = []
      let fromPaid = Money.zero(currency)
      if (quote.outcome === "upgrade" && collected) {
        const lines = ChangeQuote.upgradeLines(quote)
        const charged = yield* withTaxes(
          Invoicing.total({
            invoice_type: "upgrade",
            cycle_index: rec.subscription.cycle_index,
            currency,
            lines: lines.filter((l) => l.kind === "proration_charge")
          }),
          merchantId,
          rec.subscription.customer_id
        )
        const changed = Invoicing.change({
          cycle_index: rec.subscription.cycle_index,
          currency,
          lines,
          credit: Result.getOrThrow(Money.parse(quote.credit, currency)),
          chargeTax: charged.tax_lines,
          collected
        })
        upgrade = changed.draft
        shares = changed.shares
        quote = ChangeQuote.upgradeQuote(quote, upgrade)
      } else if (quote.outcome === "pending_prorations" && collected && available) {
        // the credit's part the pending charges cannot cancel is given back from the cycle's
        // payments now (in the ledger), so no refund can take it again before the invoice bills it
        fromPaid = ChangeQuote.creditFromPaid(Result.getOrThrow(Money.parse(quote.credit, currency)), available)
        if (fromPaid.amount > 0n) shares = GiveBack.giveBack(collected, fromPaid, false).shares
      } else if ((quote.outcome === "refund" || quote.outcome === "credit_balance") && collected) {
        const given = ChangeQuote.givenBack(quote, collected)
        back = given.given.total
        shares = given.given.shares
        quote = given.quote
      }
      return { quote, upgrade, back, shares, fromPaid } satisfies Settled
    })

  /**
   * Commits a settled prorated change on `next` (the record already moved to the new plan) in the
   * caller's transaction: the upgrade's invoice (charged, or settled by the credit, or carried
   * under the processor's minimum), the refund owed, the pending lines, or the credit to the
   * balance. Answers the record to save and the trade to charge after the transaction.
   */
  const commit = (input: {
    readonly merchant: Merchant.Merchant
    readonly rec: Entities.SubscriptionRecord
    readonly next: Entities.SubscriptionRecord
    readonly price: InvoicePrice
    readonly settled: Settled & { readonly quote: ChangeQuote.Priced & { readonly quote_id: string } }
    readonly now: number
  }) =>
    Effect.gen(function* () {
      const { merchant, rec, price, now } = input
      const { quote, upgrade, shares, back, fromPaid } = input.settled
      const merchantId = merchant.merchant_id
      const subscriptionId = rec.subscription.id
      const cycle = rec.subscription.cycle_index
      let next = input.next
      let tradeToCharge: Option.Option<string> = Option.none()
      // an upgrade's invoice settled without a charge (credited or carried), issued now
      const issueSettled = (draft: Invoicing.Draft) =>
        Effect.gen(function* () {
          const inv = yield* newInvoice({
            merchant_id: merchantId,
            draft,
            trade_id: null,
            subscription_id: subscriptionId,
            price_id: price.id,
            price_version_id: price.price_version_id,
            customer_id: rec.subscription.customer_id,
            order_id: rec.subscription.order_id,
            trigger: "settle_without_charge",
            at: now,
            period: ChangeCommit.restOfCycle(rec, now)
          })
          yield* Effect.orDie(invoices.insert(yield* documents.issueOne(merchant, inv)))
          return inv
        })
      if (upgrade && upgrade.total.amount <= 0n) {
        // the credit covers the charge and more: the invoice settles at 0.00, the rest goes to
        // the balance, credited against it
        const settled = Invoicing.toBalance(upgrade, "Credited to your balance")
        const inv = yield* issueSettled(settled.draft)
        next = ChangeCommit.creditedUpgrade(next, cycle, shares, settled.credited, inv.invoice_id)
      } else if (quote.outcome === "upgrade" && upgrade && (yield* underMinimum(gateway, merchantId, upgrade.total))) {
        // under the processor's minimum charge: not charged; the invoice is settled by carrying
        // its total to the customer's next invoice (a debit on the balance)
        const settled = Invoicing.carry(upgrade, CARRIED)
        const inv = yield* issueSettled(settled.draft)
        // the old plan's credit moved from the invoices that paid it into this one
        next = ChangeCommit.carriedUpgrade(next, cycle, shares, settled.carried, inv.invoice_id)
      } else if (quote.outcome === "upgrade" && upgrade) {
        // the quoted invoice: the net of the change, taxed at the customer's address
        const trade = yield* newTrade({
          merchant,
          amount: upgrade.total,
          customer_id: rec.subscription.customer_id,
          order_id: rec.subscription.order_id,
          payment_mode: "subscription",
          order_type: "upgrade",
          session: Option.none(),
          line: null,
          tax: upgrade.tax,
          metadata: {},
          at: now
        })
        const inv = yield* newInvoice({
          merchant_id: merchantId,
          draft: upgrade,
          trade_id: trade.trade_id,
          subscription_id: subscriptionId,
          price_id: price.id,
          price_version_id: price.price_version_id,
          customer_id: rec.subscription.customer_id,
          order_id: rec.subscription.order_id,
          trigger: "charge",
          at: now,
          // the lines cover the rest of the cycle, from the change
          period: ChangeCommit.restOfCycle(rec, now)
        })
        yield* Effect.orDie(invoices.insert(yield* documents.issueOne(merchant, inv)))
        // the old plan's credit moved from the invoices that paid it into this one
        next = CycleLedger.withMoved(next, cycle, shares, inv.invoice_id)
        yield* submitTrade(storage, { trade, invoice_id: inv.invoice_id, subscription_id: subscriptionId, at: now })
        if (rec.payment_token !== null) {
          tradeToCharge = Option.some(trade.trade_id)
          yield* schedule(merchant, "charge", trade.trade_id, now)
        }
      } else if (quote.outcome === "refund") {
        // owed back from the cycle's payments: recorded with the change, paid out right after it
        // commits — or by this work item if the process dies first
        next = ChangeCommit.withOwedRefund(next, quote.quote_id, cycle, back!, shares)
        yield* schedule(merchant, "refund_owed", subscriptionId, now + settings.reconcileAfterMs)
      } else if (quote.outcome === "pending_prorations") {
        // billed by the next cycle's invoice; the credit's part from the cycle's payments is
        // given back from them now
        next = ChangeCommit.withPendingProrations(
          next,
          cycle,
          shares,
          ChangeQuote.pendingOf(quote, cycle, fromPaid, shares)
        )
      } else if (quote.outcome === "credit_balance") {
        // credited against the invoices it was given back from, as the quote took it
        next = ChangeCommit.creditedBack(next, cycle, shares, back!)
      }
      return { next, tradeToCharge }
    })

  /**
   * After the change's transaction: charges the upgrade's trade, and pays the refund it owes
   * (recorded in the transaction, so a failure here is the `refund_owed` work item's).
   */
  const afterCommit = (
    merchantId: string,
    rec: Entities.SubscriptionRecord,
    done: { readonly tradeToCharge: Option.Option<string>; readonly owesRefund: boolean }
  ) =>
    Effect.gen(function* () {
      if (Option.isSome(done.tradeToCharge) && rec.payment_token !== null)
        yield* charges.chargeInvoiceTrade(merchantId, done.tradeToCharge.value, rec.payment_token)
      if (done.owesRefund)
        yield* owedRefunds
          .settle(merchantId, rec.subscription.id)
          .pipe(
            Effect.catchCause((cause) =>
              Effect.logWarning("event=recur.refund_owed.deferred", { subscription_id: rec.subscription.id, cause })
            )
          )
    })

  return { settle, commit, afterCommit, documents } as const
})
