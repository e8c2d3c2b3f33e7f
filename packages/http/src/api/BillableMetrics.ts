/**
 * The billable metrics group: its endpoints' paths, bodies and answers (issue 35).
 *
 * @since 0.1.0
 */
import { BillableMetric } from "@recur/core"
import { MetricRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

const Params = Schema.Struct({ billable_metric_id: Schema.String })

/**
 * Billable metrics: what usage prices rate — an aggregation of usage events over a property, with
 * filters and grouping dimensions. `{billable_metric_id}` takes the id or the code.
 *
 * @since 0.1.0
 */
export class BillableMetricsGroup extends HttpApiGroup.make("billableMetrics")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/billable_metrics", {
      payload: MetricRequests.CreateBillableMetric,
      success: Envelope(MetricRequests.MetricAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/billable_metrics", {
      query: Schema.Struct({ ...PageQuery, status: QueryList, code: QueryList }),
      success: Envelope(Page(BillableMetric.BillableMetric)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/billable_metrics/:billable_metric_id", {
      params: Params,
      success: Envelope(MetricRequests.MetricAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("update", "/api/v1/billable_metrics/:billable_metric_id", {
      params: Params,
      payload: MetricRequests.UpdateBillableMetric,
      success: Envelope(MetricRequests.MetricAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("archive", "/api/v1/billable_metrics/:billable_metric_id/archive", {
      params: Params,
      success: Envelope(MetricRequests.MetricAnswer),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Billable metrics") {}
