/**
 * The facade's `balances` group: a customer's balance per currency, its ledger and manual
 * adjustments (as `GET|POST /api/v1/customers/{customer_id}/balance…`).
 *
 * @since 0.1.0
 */
import { BalanceRequests } from "@recur/contract"
import { BalanceTransaction, CustomerBalances, Invoice, InvoiceCredits } from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, page, pageJson } from "./Kit.js"
import type { Answer } from "./Types.js"

/** @since 0.1.0 */
export type BalanceTransactionJson = Answer<typeof BalanceTransaction.BalanceTransaction>
/** @since 0.1.0 */
export type CustomerBalanceJson = typeof BalanceRequests.BalancesAnswer.Encoded
/** @since 0.1.0 */
export type AdjustBalanceInput = typeof BalanceRequests.AdjustBalanceBody.Encoded

/** @since 0.1.0 */
export type CreditNoteInput = typeof BalanceRequests.CreditNoteBody.Encoded
/** @since 0.1.0 */
export type CreditNoteJson = Answer<typeof Invoice.InvoiceView>

/**
 * The `balances` group of the facade.
 *
 * @since 0.1.0
 */
export type BalancesClient = BillingClient["balances"]

/** `balances`. @since 0.1.0 */
export const balances = ({ run }: Kit<Services>): BalancesClient => ({
  get: (merchantId, customerId) =>
    run(
      id("customer_id", customerId).pipe(
        Effect.flatMap((c) => CustomerBalances.CustomerBalances.use((s) => s.balances(merchantId, c))),
        Effect.map((balance) => Schema.encodeSync(BalanceRequests.BalancesAnswer)({ customer_id: customerId, balance }))
      )
    ),
  transactions: (merchantId, customerId, input = {}) =>
    run(
      Effect.all([id("customer_id", customerId), page(input)]).pipe(
        Effect.flatMap(([c, p]) => CustomerBalances.CustomerBalances.use((s) => s.transactions(merchantId, c, p))),
        Effect.map(pageJson(BalanceTransaction.BalanceTransaction))
      )
    ),
  adjust: (merchantId, customerId, input) =>
    run(
      Effect.all([id("customer_id", customerId), decode(BalanceRequests.AdjustBalanceBody, input)]).pipe(
        Effect.flatMap(([c, i]) =>
          CustomerBalances.CustomerBalances.use((s) => s.adjust(merchantId, { ...i, customer_id: c }))
        ),
        Effect.map(json(BalanceTransaction.BalanceTransaction))
      )
    ),
  creditNote: (merchantId, invoiceId, input) =>
    run(
      Effect.all([id("invoice_id", invoiceId), decode(BalanceRequests.CreditNoteBody, input)]).pipe(
        Effect.flatMap(([i, body]) =>
          InvoiceCredits.InvoiceCredits.use((s) => s.create(merchantId, { ...body, invoice_id: i }))
        ),
        Effect.map((made) =>
          made.credit_note === null ? null : json(Invoice.InvoiceView)(Invoice.viewOf(made.credit_note))
        )
      )
    )
})
