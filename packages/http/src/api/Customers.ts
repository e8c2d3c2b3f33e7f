/**
 * The customers group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Customer } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

const CustomerRef = Schema.Struct({
  customer_id: Schema.optional(Schema.String),
  payer_id: Schema.optional(Schema.String)
})

/**
 * Customers.
 *
 * @since 0.1.0
 */
export class CustomersGroup extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/front/customer/create", {
      payload: RequestBodies.CreateCustomer,
      success: Envelope(Schema.Struct({ customer_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("update", "/api/v1/front/customer/update", {
      payload: RequestBodies.UpdateCustomer,
      success: Envelope(Schema.Struct({ customer_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("delete", "/api/v1/front/customer/delete", {
      payload: CustomerRef,
      success: Envelope(Schema.Struct({})),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/front/customer/:customer_id", {
      params: Schema.Struct({ customer_id: Schema.String }),
      success: Envelope(Schema.Struct({ customer: Customer.Customer })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/front/customer", {
      query: Schema.Struct({
        ...PageQuery,
        customer_ids: QueryList,
        emails: QueryList,
        payer_ids: QueryList,
        type: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Customer.Customer)),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customers") {}
