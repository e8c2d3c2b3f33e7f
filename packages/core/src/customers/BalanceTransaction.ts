/**
 * The customer balance as the REST API shows it: one ledger entry (`BalanceTransaction`) and a
 * customer's balance in one currency (`CustomerBalanceAmount`). Amounts are decimal strings in
 * the currency's units; a positive amount is credit the customer holds.
 *
 * @since 0.1.0
 */
import { DateTime, Schema } from "effect"
import { NullableString, Timestamp } from "../kernel/Common.js"
import * as Money from "../money/Money.js"
import { BalanceSourceType, type BalanceTransactionRecord, type CustomerBalanceRecord } from "./BalanceEntities.js"

/**
 * One entry of a customer's balance ledger.
 *
 * @since 0.1.0
 */
export class BalanceTransaction extends Schema.Class<BalanceTransaction>("BalanceTransaction")({
  id: Schema.String,
  customer_id: Schema.String,
  currency: Schema.String,
  /** Signed: positive credits the customer, negative is owed by (or used up for) the customer. */
  amount: Schema.String,
  /** The customer's balance in this currency after this entry. */
  ending_balance: Schema.String,
  source_type: BalanceSourceType,
  source_id: NullableString,
  subscription_id: NullableString,
  description: NullableString,
  /** When it was written (the `Timestamp` component, as every instant of the API). */
  created_at: Timestamp
}) {}

/**
 * A customer's balance in one currency (the sum of its ledger entries).
 *
 * @since 0.1.0
 */
export class CustomerBalanceAmount extends Schema.Class<CustomerBalanceAmount>("CustomerBalanceAmount")({
  currency: Schema.String,
  /** Signed: positive is credit the customer holds. */
  amount: Schema.String
}) {}

/**
 * The REST shape of a stored entry.
 *
 * @since 0.1.0
 */
export const toTransaction = (r: BalanceTransactionRecord): BalanceTransaction =>
  new BalanceTransaction(
    {
      id: r.id,
      customer_id: r.customer_id,
      currency: r.currency,
      amount: Money.format(Money.make(r.amount, r.currency)),
      ending_balance: Money.format(Money.make(r.ending_balance, r.currency)),
      source_type: r.source_type,
      source_id: r.source_id,
      subscription_id: r.subscription_id,
      description: r.description,
      created_at: DateTime.makeUnsafe(r.created_at)
    },
    { disableChecks: true }
  )

/**
 * The REST shape of a stored running balance.
 *
 * @since 0.1.0
 */
export const toAmount = (r: CustomerBalanceRecord): CustomerBalanceAmount =>
  new CustomerBalanceAmount(
    { currency: r.currency, amount: Money.format(Money.make(r.balance, r.currency)) },
    { disableChecks: true }
  )
