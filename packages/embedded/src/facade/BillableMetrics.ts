/**
 * The facade's `billableMetrics` group: a merchant's billable metrics (issue 35), as
 * `POST|GET /api/v1/billable_metrics…`, with the same request decoding as the REST handlers.
 *
 * @since 0.1.0
 */
import { MetricRequests } from "@recur/contract"
import { BillableMetric, BillableMetrics, Lifecycle } from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, named, page, pageJson } from "./Kit.js"
import type { Answer, PageInput } from "./Types.js"

/** A billable metric as the REST API answers it. @since 0.1.0 */
export type BillableMetricJson = Answer<typeof BillableMetric.BillableMetric>
/** The body of a new billable metric. @since 0.1.0 */
export type CreateBillableMetricInput = typeof MetricRequests.CreateBillableMetric.Encoded
/** The body of a metric's update (name, description, filters, late window). @since 0.1.0 */
export type UpdateBillableMetricInput = Omit<
  typeof MetricRequests.UpdateBillableMetric.Encoded,
  "code" | "aggregation" | "property" | "group_by"
>
/** The filters of the metric list. @since 0.1.0 */
export type ListBillableMetricsInput = PageInput & {
  readonly status?: ReadonlyArray<Lifecycle.BillableMetricStatus>
  readonly codes?: ReadonlyArray<string>
}

const Statuses = Schema.Array(Lifecycle.BillableMetricStatus)

/**
 * The `billableMetrics` group of the facade.
 *
 * @since 0.1.0
 */
export type BillableMetricsClient = BillingClient["billableMetrics"]

const use = <A, E, R>(f: (s: BillableMetrics.BillableMetrics["Service"]) => Effect.Effect<A, E, R>) =>
  BillableMetrics.BillableMetrics.use(f)

/** `billableMetrics`. @since 0.1.0 */
export const billableMetrics = ({ run }: Kit<Services>): BillableMetricsClient => ({
  create: (merchantId, input) =>
    run(
      decode(MetricRequests.CreateBillableMetric, input).pipe(
        Effect.flatMap((i) => use((s) => s.create(merchantId, i))),
        Effect.map(json(BillableMetric.BillableMetric))
      )
    ),
  get: (merchantId, metric) =>
    run(
      id("billable_metric_id", metric).pipe(
        Effect.flatMap((i) => use((s) => s.get(merchantId, i))),
        Effect.map(json(BillableMetric.BillableMetric))
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const p = yield* page(filter)
        const status = filter.status === undefined ? undefined : yield* named("status", Statuses, filter.status)
        return yield* use((s) =>
          s.list(merchantId, {
            ...p,
            ...(status !== undefined ? { status } : {}),
            ...(filter.codes !== undefined ? { codes: filter.codes } : {})
          })
        )
      }).pipe(Effect.map(pageJson(BillableMetric.BillableMetric)))
    ),
  update: (merchantId, metric, input) =>
    run(
      Effect.all([
        id("billable_metric_id", metric),
        Effect.flatMap(decode(MetricRequests.UpdateBillableMetric, input), MetricRequests.updateCommand)
      ]).pipe(
        Effect.flatMap(([i, u]) => use((s) => s.update(merchantId, i, u))),
        Effect.map(json(BillableMetric.BillableMetric))
      )
    ),
  archive: (merchantId, metric) =>
    run(
      id("billable_metric_id", metric).pipe(
        Effect.flatMap((i) => use((s) => s.archive(merchantId, i))),
        Effect.map(json(BillableMetric.BillableMetric))
      )
    )
})
