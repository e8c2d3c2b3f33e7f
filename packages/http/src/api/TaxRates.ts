/**
 * The tax rates group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Tax } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

/**
 * Tax rates: a percentage for a country and optional region, inclusive or exclusive.
 *
 * @since 0.1.0
 */
export class TaxRatesGroup extends HttpApiGroup.make("taxRates")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/tax_rates", {
      payload: RequestBodies.CreateTaxRate,
      success: Envelope(Schema.Struct({ tax_rate: Tax.TaxRate })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/tax_rates", {
      query: Schema.Struct({ ...PageQuery, status: QueryList, country: QueryList }),
      success: Envelope(Page(Tax.TaxRate)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/tax_rate/:tax_rate_id", {
      params: Schema.Struct({ tax_rate_id: Schema.String }),
      success: Envelope(Schema.Struct({ tax_rate: Tax.TaxRate })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("archive", "/api/v1/tax_rate/:tax_rate_id/archive", {
      params: Schema.Struct({ tax_rate_id: Schema.String }),
      success: Envelope(Schema.Struct({ tax_rate: Tax.TaxRate })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Tax rates") {}
