/**
 * The handlers of the prepaid-credits group.
 *
 * @since 0.1.0
 */
import { CreditGrants } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { CurrentMerchant } from "../api/Shared.js"
import { call, ok, pageQuery } from "./Shared.js"

/**
 * The handlers of the prepaid-credits group.
 *
 * @since 0.1.0
 */
export const creditGrantsLive = HttpApiBuilder.group(BillingApi, "creditGrants", (handlers) =>
  Effect.gen(function* () {
    const grants = yield* CreditGrants.CreditGrants
    return handlers
      .handle("create", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(grants.create(m, { ...payload, customer_id: path.customer_id }), (credit_grant) =>
            ok({ credit_grant })
          )
        )
      )
      .handle("list", ({ params: path, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            return ok(
              yield* grants.list(m, path.customer_id, {
                created: page.created,
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(grants.get(m, path.credit_grant_id), (credit_grant) => ok({ credit_grant })))
      )
      .handle("void", ({ params: path }) =>
        call((m) => Effect.map(grants.void(m, path.credit_grant_id), (credit_grant) => ok({ credit_grant })))
      )
      .handle("topUp", ({ params: path, payload }) =>
        Effect.flatMap(CurrentMerchant, ({ requestId }) =>
          call((m) =>
            // the Request-Id keys the charge: a retry answers the first outcome, never charges twice
            Effect.map(
              grants.topUp(m, {
                ...payload,
                customer_id: path.customer_id,
                ...(requestId !== undefined ? { key: requestId } : {})
              }),
              (credit_grant) => ok({ credit_grant })
            )
          )
        )
      )
      .handle("autoTopUp", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(grants.setAutoTopUp(m, { ...payload, customer_id: path.customer_id }), (auto_top_up) =>
            ok({ auto_top_up })
          )
        )
      )
  })
)
