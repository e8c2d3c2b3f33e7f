/**
 * The merchant API's customer-balance bodies and answers: a manual adjustment
 * (`POST /api/v1/customers/{id}/balance_transactions`), the ledger page and the balances.
 *
 * @since 0.1.0
 */
import { BalanceTransaction } from "@recur/core"
import { Schema } from "effect"

/**
 * The body of a manual adjustment: a signed decimal `amount` (positive credits the customer,
 * negative debits), its `currency` and the `reason` (1 to 500 characters), all required (checked by the engine, which names a missing one).
 *
 * @since 0.1.0
 */
export const AdjustBalanceBody = Schema.Struct({
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export type AdjustBalanceRequest = typeof AdjustBalanceBody.Type

/**
 * The answer of a manual adjustment: the ledger entry written.
 *
 * @since 0.1.0
 */
export const BalanceTransactionAnswer = Schema.Struct({
  balance_transaction: BalanceTransaction.BalanceTransaction
})

/**
 * A customer's balances, one per currency.
 *
 * @since 0.1.0
 */
export const BalancesAnswer = Schema.Struct({
  customer_id: Schema.String,
  balance: Schema.Array(BalanceTransaction.CustomerBalanceAmount)
})
