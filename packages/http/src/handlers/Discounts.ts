/**
 * The handlers of the discounts group.
 *
 * @since 0.1.0
 */
import { Requests } from "@recur/contract"
import { Discounts, Errors, Lifecycle } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, list, pageQuery, enumValues } from "./Shared.js"

/**
 * The handlers of the discounts group.
 *
 * @since 0.1.0
 */
export const discountsLive = HttpApiBuilder.group(BillingApi, "discounts", (handlers) =>
  Effect.gen(function* () {
    const discounts = yield* Discounts.Discounts
    return handlers
      .handle("create", ({ payload }) =>
        call((m) =>
          Requests.discountCommand(payload).pipe(
            Effect.flatMap((command) => Requests.refusedAsParameter(discounts.create(m, command))),
            Effect.map((discount) => ok({ discount }))
          )
        )
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.DiscountStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                discounts.list(m, {
                  ...(statuses ? { status: statuses as ReadonlyArray<Lifecycle.DiscountStatus> } : {}),
                  ...(list(q.code) ? { codes: list(q.code)! } : {}),
                  created: page.created,
                  limit: page.limit,
                  starting_after: page.starting_after,
                  ending_before: page.ending_before
                }),
                ok
              )
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(discounts.get(m, path.discount_id), (discount) => ok({ discount })))
      )
      .handle("end", ({ params: path }) =>
        call((m) => Effect.map(discounts.end(m, path.discount_id), (discount) => ok({ discount })))
      )
      .handle("applyToSubscription", ({ params: path, payload }) =>
        call((m) =>
          Requests.discountRef(payload).pipe(
            Effect.flatMap((ref) =>
              Requests.refusedAsParameter(discounts.applyToSubscription(m, path.subscription_id, ref))
            ),
            Effect.map(ok)
          )
        )
      )
      .handle("removeFromSubscription", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            if (payload.discount_id === undefined)
              return yield* new Errors.InvalidParameter({ param: "discount_id", reason: "is required" })
            return ok(yield* discounts.removeFromSubscription(m, path.subscription_id, payload.discount_id))
          })
        )
      )
  })
)
