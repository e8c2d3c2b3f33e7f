/**
 * The handlers of the tax rates group.
 *
 * @since 0.1.0
 */
import { Lifecycle, TaxRates } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, list, pageQuery, enumValues } from "./Shared.js"

/**
 * The handlers of the tax rates group.
 *
 * @since 0.1.0
 */
export const taxRatesLive = HttpApiBuilder.group(BillingApi, "taxRates", (handlers) =>
  Effect.gen(function* () {
    const rates = yield* TaxRates.TaxRates
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(rates.create(m, payload), (tax_rate) => ok({ tax_rate })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.TaxRateStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                rates.list(m, {
                  ...(statuses ? { status: statuses as ReadonlyArray<Lifecycle.TaxRateStatus> } : {}),
                  ...(list(q.country) ? { countries: list(q.country)! } : {}),
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
        call((m) => Effect.map(rates.get(m, path.tax_rate_id), (tax_rate) => ok({ tax_rate })))
      )
      .handle("archive", ({ params: path }) =>
        call((m) => Effect.map(rates.archive(m, path.tax_rate_id), (tax_rate) => ok({ tax_rate })))
      )
  })
)
