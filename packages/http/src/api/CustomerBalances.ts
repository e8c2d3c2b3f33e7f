/**
 * The customer-balance group: a customer's balances, its ledger and manual adjustments.
 *
 * @since 0.1.0
 */
import { BalanceRequests } from "@recur/contract"
import { BalanceTransaction } from "@recur/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope, Page, PageQuery } from "./Shared.js"

const CustomerPath = Schema.Struct({ customer_id: Schema.String })

/**
 * The customer balance: what a customer holds (credit) or owes, per currency, its ledger, and
 * credit notes to it.
 *
 * @since 0.1.0
 */
export class CustomerBalancesGroup extends HttpApiGroup.make("customerBalances")
  .add(
    HttpApiEndpoint.get("balance", "/api/v1/customers/:customer_id/balance", {
      params: CustomerPath,
      success: Envelope(BalanceRequests.BalancesAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("transactions", "/api/v1/customers/:customer_id/balance_transactions", {
      params: CustomerPath,
      query: Schema.Struct(PageQuery),
      success: Envelope(Page(BalanceTransaction.BalanceTransaction)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("adjust", "/api/v1/customers/:customer_id/balance_transactions", {
      params: CustomerPath,
      payload: BalanceRequests.AdjustBalanceBody,
      success: Envelope(BalanceRequests.BalanceTransactionAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("creditNote", "/api/v1/invoices/:invoice_id/credit_notes", {
      params: Schema.Struct({ invoice_id: Schema.String }),
      payload: BalanceRequests.CreditNoteBody,
      success: Envelope(BalanceRequests.CreditNoteAnswer),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customer balance") {}
