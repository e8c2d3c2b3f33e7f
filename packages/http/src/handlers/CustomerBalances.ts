/**
 * The handlers of the customer-balance group.
 *
 * @since 0.1.0
 */
import { CustomerBalances, Invoice, InvoiceCredits } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { CurrentMerchant } from "../api/Shared.js"
import { call, ok, pageQuery } from "./Shared.js"

/**
 * The handlers of the customer-balance group.
 *
 * @since 0.1.0
 */
export const customerBalancesLive = HttpApiBuilder.group(BillingApi, "customerBalances", (handlers) =>
  Effect.gen(function* () {
    const balances = yield* CustomerBalances.CustomerBalances
    const credits = yield* InvoiceCredits.InvoiceCredits
    return handlers
      .handle("balance", ({ params: path }) =>
        call((m) =>
          Effect.map(balances.balances(m, path.customer_id), (balance) =>
            ok({ customer_id: path.customer_id, balance })
          )
        )
      )
      .handle("transactions", ({ params: path, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            return ok(
              yield* balances.transactions(m, path.customer_id, {
                created: page.created,
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("adjust", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(balances.adjust(m, { ...payload, customer_id: path.customer_id }), (balance_transaction) =>
            ok({ balance_transaction })
          )
        )
      )
      .handle("creditNote", ({ params: path, payload }) =>
        Effect.flatMap(CurrentMerchant, ({ requestId }) =>
          call((m) =>
            // the Request-Id keys a refund (method refund): a retry finds it, never makes a second
            Effect.map(
              credits.create(m, {
                ...payload,
                invoice_id: path.invoice_id,
                ...(requestId !== undefined ? { request_key: requestId } : {})
              }),
              (made) =>
                ok({
                  ...(made.credit_note !== null ? { credit_note: Invoice.viewOf(made.credit_note) } : {}),
                  ...(made.refundState !== null ? { refund_status: made.refundState } : {})
                })
            )
          )
        )
      )
  })
)
