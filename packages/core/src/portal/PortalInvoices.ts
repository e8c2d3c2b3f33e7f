/**
 * The invoices a customer pays from the customer portal: their issued invoices still owed whose
 * hosted page takes a payment — a past-due renewal whose card dunning retries, one waiting for
 * 3-D Secure, the failed invoice an unpaid subscription's recovery reopens — each shown with a
 * Pay link to that page. And the place the portal keeps for the customer's balance.
 *
 * @since 0.1.0
 */
import { DateTime, Effect } from "effect"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import * as Entities from "../kernel/Entities.js"
import { Storage } from "../kernel/Store.js"
import type * as Invoice from "../invoices/Invoice.js"
import * as Money from "../money/Money.js"
import * as GrantLedger from "../credits/GrantLedger.js"
import * as Dunning from "../payments/Dunning.js"

/**
 * The customer's balance as the portal shows it: an amount in the merchant's currency (a decimal
 * string, as the customer balance ledger states it).
 *
 * @since 0.1.0
 */
export interface PortalBalance {
  readonly amount: string
  readonly currency: string
}

/**
 * What the customer owes or holds, as the portal shows it above their subscriptions: the invoices
 * to pay now ({@link account}), and the customer's balance from its ledger in the currency of its
 * subscription — null (not shown) when it is zero. Positive is credit the customer holds (applied
 * to its next invoices), negative is owed (charged on its next invoice).
 *
 * @since 0.1.0
 */
export interface Account {
  readonly to_pay: ReadonlyArray<Invoice.Invoice>
  readonly balance: PortalBalance | null
  /** The customer's active credit grants in that currency, in the order invoices use them. */
  readonly credits: ReadonlyArray<PortalCredit>
}

/**
 * One active credit grant as the portal shows it: what remains and when it expires (`null`: never).
 *
 * @since 0.1.0
 */
export interface PortalCredit {
  readonly remaining: string
  readonly currency: string
  readonly expires_at: DateTime.Utc | null
}

/**
 * The invoice states a customer still owes: not paid, no charge in flight, not ended.
 *
 * @since 0.1.0
 */
export const OWED: ReadonlyArray<Invoice.Invoice["biz_status"]> = ["open", "retrying", "failed"]

/**
 * Whether an invoice is one the portal lists to pay, before asking whether its page takes a
 * payment: issued (numbered — a checkout's unissued first invoice is paid at its checkout), not a
 * credit note, and owed ({@link OWED}).
 *
 * @example
 * isOwed(renewal) // true for INV-000002 retrying; false once it is paid
 *
 * @since 0.1.0
 */
export const isOwed = (invoice: Invoice.Invoice): boolean =>
  invoice.number !== null && invoice.invoice_type !== "refund" && OWED.includes(invoice.biz_status)

const BALANCE_HOLDERS = new Set(["trial", "active", "past_due", "unpaid", "paused"])

/**
 * The currency the portal shows a customer's balance in: its live subscription's (the first
 * listed), else any subscription's, else the merchant's.
 *
 * @since 0.1.0
 */
export const balanceCurrency = (
  subscriptions: ReadonlyArray<Entities.SubscriptionRecord>,
  merchantCurrency: string
): string =>
  (subscriptions.find((r) => BALANCE_HOLDERS.has(r.subscription.status)) ?? subscriptions[0])?.currency ??
  merchantCurrency

/**
 * A customer's {@link Account}: the invoices to pay ({@link isOwed}) that their hosted page takes
 * a payment of (`Dunning.payable`: an open or retrying invoice with its trade, or the latest
 * failed invoice of an unpaid subscription), newest first; the balance in `currency` from the
 * customer balance ledger (null when zero). Storage reads only: a portal page view asks the
 * payment processor nothing.
 *
 * @since 0.1.0
 */
export const account = Effect.gen(function* () {
  const storage = yield* Storage
  const invoices = storage.repository(Entities.invoice)
  const dunning = yield* Dunning.Dunning
  return (merchantId: string, customerId: string, currency: string): Effect.Effect<Account> =>
    Effect.gen(function* () {
      const owed = (yield* Effect.orDie(
        invoices.list(merchantId, {
          limit: 100,
          filters: [
            { column: "customer_id", op: "in", values: [customerId] },
            { column: "biz_status", op: "in", values: [...OWED] }
          ]
        })
      )).list.filter(isOwed)
      const payable = yield* Effect.filter(owed, (i) => dunning.payable(i))
      const balance = yield* CustomerBalance.balanceOf(storage, merchantId, customerId, currency)
      const grants = yield* GrantLedger.activeGrants(storage, merchantId, customerId, currency)
      return {
        credits: grants.map((g) => ({ remaining: g.remaining, currency: g.currency, expires_at: g.expires_at })),
        to_pay: payable.sort((a, b) => DateTime.toEpochMillis(b.created_at) - DateTime.toEpochMillis(a.created_at)),
        balance: balance.amount === 0n ? null : { amount: Money.format(balance), currency }
      }
    })
})
