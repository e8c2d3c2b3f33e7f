/**
 * The handlers of the customers group.
 *
 * @since 0.1.0
 */
import { CustomerBalances, Customers } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, invalid, list, pageQuery } from "./Shared.js"

/**
 * The handlers of the customers group.
 *
 * @since 0.1.0
 */
export const customersLive = HttpApiBuilder.group(BillingApi, "customers", (handlers) =>
  Effect.gen(function* () {
    const customers = yield* Customers.Customers
    const balances = yield* CustomerBalances.CustomerBalances
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(customers.create(m, payload), (c) => ok({ customer_id: c.id })))
      )
      .handle("update", ({ payload }) =>
        call((m) => Effect.map(customers.update(m, payload), (c) => ok({ customer_id: c.id })))
      )
      .handle("delete", ({ payload }) => call((m) => Effect.as(customers.delete(m, payload), ok({}))))
      .handle("get", ({ params: path }) =>
        call((m) =>
          Effect.gen(function* () {
            const c = yield* customers.get(m, path.customer_id)
            const balance = yield* balances.balances(m, c.id)
            return ok({ customer: Customers.toCustomer(c, balance) })
          })
        )
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            if (q.type !== undefined && q.type !== "customer" && q.type !== "guest")
              return yield* invalid("type", "must be customer or guest")
            const result = yield* customers.list(m, {
              ...(list(q.customer_ids) ? { customer_ids: list(q.customer_ids)! } : {}),
              ...(list(q.emails) ? { emails: list(q.emails)! } : {}),
              ...(list(q.payer_ids) ? { payer_ids: list(q.payer_ids)! } : {}),
              ...(q.type ? { type: q.type as "customer" | "guest" } : {}),
              created: page.created,
              limit: page.limit,
              ...(page.starting_after ? { starting_after: page.starting_after } : {}),
              ...(page.ending_before ? { ending_before: page.ending_before } : {})
            })
            return ok({ has_more: result.has_more, list: result.list.map((c) => Customers.toCustomer(c)) })
          })
        )
      )
  })
)
