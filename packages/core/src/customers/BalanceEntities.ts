/**
 * The customer balance ledger as stored (re-exported by `Entities`): one append-only row per
 * change of a customer's balance in one currency, and one running-balance row per customer and
 * currency, updated at its optimistic version so that two writers never lose an update.
 *
 * Sign: a positive amount is credit the customer holds (Recur's `credit_balance` convention,
 * the opposite of Stripe's customer balance); a negative one is owed by the customer.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import * as Store from "../kernel/Store.js"

/**
 * What caused a ledger entry.
 *
 * @since 0.1.0
 */
export const BalanceSourceType = Schema.Literals([
  "credit_note",
  "proration_credit",
  "carried_minimum",
  "manual_adjustment",
  "applied_to_invoice",
  "refund_leftover",
  "refund_of_balance",
  "credit_grant",
  "credit_grant_expired",
  "credit_grant_voided",
  "top_up"
])
/** @since 0.1.0 */
export type BalanceSourceType = typeof BalanceSourceType.Type

/**
 * One ledger entry: `amount` in minor units (positive: credit to the customer), the balance
 * after it (`ending_balance`), its source and why.
 *
 * @since 0.1.0
 */
export const BalanceTransactionRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  customer_id: Schema.String,
  currency: Schema.String,
  amount: Schema.BigIntFromString,
  ending_balance: Schema.BigIntFromString,
  source_type: BalanceSourceType,
  /** The invoice, credit note or subscription that caused it (`null` for a manual adjustment). */
  source_id: Schema.NullOr(Schema.String),
  /** The subscription it concerns, if any. */
  subscription_id: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type BalanceTransactionRecord = typeof BalanceTransactionRecord.Type

/** @since 0.1.0 */
export const balanceTransaction: Store.Entity<BalanceTransactionRecord, typeof BalanceTransactionRecord.Encoded> =
  Store.entity({
    name: "customer_balance_transaction",
    table: "recur_customer_balance_transactions",
    schema: BalanceTransactionRecord,
    id: "id",
    createdAt: "created_at",
    columns: { customer_id: "customer_id", currency: "currency", source_type: "source_type" }
  })

/**
 * A customer's running balance in one currency: the sum of its ledger entries. Its id is
 * `<customer_id>:<currency>`; every entry updates it at the version read.
 *
 * @since 0.1.0
 */
export const CustomerBalanceRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  customer_id: Schema.String,
  currency: Schema.String,
  balance: Schema.BigIntFromString,
  /** How many entries it sums. */
  entries: Schema.Number,
  created_at: Schema.Number,
  updated_at: Schema.Number
})
/** @since 0.1.0 */
export type CustomerBalanceRecord = typeof CustomerBalanceRecord.Type

/** @since 0.1.0 */
export const customerBalance: Store.Entity<CustomerBalanceRecord, typeof CustomerBalanceRecord.Encoded> = Store.entity({
  name: "customer_balance",
  table: "recur_customer_balances",
  schema: CustomerBalanceRecord,
  id: "id",
  createdAt: "created_at",
  columns: { customer_id: "customer_id", currency: "currency" }
})
