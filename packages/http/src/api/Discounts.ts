/**
 * The discounts group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Discount } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

const SubscriptionDiscounts = Schema.Struct({
  subscription_id: Schema.String,
  discounts: Schema.Array(
    Schema.Struct({
      discount_id: Schema.String,
      discount_code: Schema.String,
      first_cycle: Schema.NullOr(Schema.Int),
      cycles: Schema.NullOr(Schema.Int)
    })
  )
})

/**
 * Discounts: percentage or fixed amount, for one, several or every paid cycle, with codes.
 *
 * @since 0.1.0
 */
export class DiscountsGroup extends HttpApiGroup.make("discounts")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/discounts", {
      payload: RequestBodies.CreateDiscount,
      success: Envelope(Schema.Struct({ discount: Discount.Discount })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/discounts", {
      query: Schema.Struct({ ...PageQuery, status: QueryList, code: QueryList }),
      success: Envelope(Page(Discount.Discount)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/discount/:discount_id", {
      params: Schema.Struct({ discount_id: Schema.String }),
      success: Envelope(Schema.Struct({ discount: Discount.Discount })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("end", "/api/v1/discount/:discount_id/end", {
      params: Schema.Struct({ discount_id: Schema.String }),
      success: Envelope(Schema.Struct({ discount: Discount.Discount })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("applyToSubscription", "/api/v1/subscription/:subscription_id/discount", {
      params: Schema.Struct({ subscription_id: Schema.String }),
      payload: RequestBodies.ApplyDiscount,
      success: Envelope(SubscriptionDiscounts),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("removeFromSubscription", "/api/v1/subscription/:subscription_id/discount/remove", {
      params: Schema.Struct({ subscription_id: Schema.String }),
      payload: RequestBodies.RemoveDiscount,
      success: Envelope(SubscriptionDiscounts),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Discounts") {}
