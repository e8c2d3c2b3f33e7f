/**
 * The handlers of the billable metrics group.
 *
 * @since 0.1.0
 */
import { BillableMetrics, Lifecycle } from "@recur/core"
import { MetricRequests } from "@recur/contract"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, list, pageQuery, enumValues } from "./Shared.js"

/**
 * The handlers of the billable metrics group.
 *
 * @since 0.1.0
 */
export const billableMetricsLive = HttpApiBuilder.group(BillingApi, "billableMetrics", (handlers) =>
  Effect.gen(function* () {
    const metrics = yield* BillableMetrics.BillableMetrics
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(metrics.create(m, payload), (billable_metric) => ok({ billable_metric })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.BillableMetricStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                metrics.list(m, {
                  ...(statuses ? { status: statuses as ReadonlyArray<Lifecycle.BillableMetricStatus> } : {}),
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
        call((m) => Effect.map(metrics.get(m, path.billable_metric_id), (billable_metric) => ok({ billable_metric })))
      )
      .handle("update", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(
            Effect.flatMap(MetricRequests.updateCommand(payload), (u) => metrics.update(m, path.billable_metric_id, u)),
            (billable_metric) => ok({ billable_metric })
          )
        )
      )
      .handle("archive", ({ params: path }) =>
        call((m) =>
          Effect.map(metrics.archive(m, path.billable_metric_id), (billable_metric) => ok({ billable_metric }))
        )
      )
  })
)
