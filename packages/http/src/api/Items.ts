/**
 * The subscription items group: the items of a subscription as a sub-resource of it
 * (`/api/v1/subscription/{id}/items`), changed through a quote (preview, then commit).
 *
 * @since 0.1.0
 */
import { Subscription } from "@recur/core"
import { ItemRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope } from "./Shared.js"
import { Quote } from "./Subscriptions.js"

const SubscriptionPath = Schema.Struct({ subscription_id: Schema.String })

/**
 * Subscription items: list them, preview an item change (its quote), commit it.
 *
 * @since 0.1.0
 */
export class ItemsGroup extends HttpApiGroup.make("items")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/subscription/:subscription_id/items", {
      params: SubscriptionPath,
      success: Envelope(Schema.Struct({ items: Schema.Array(Subscription.SubscriptionItem) })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("preview", "/api/v1/subscription/:subscription_id/items/preview", {
      params: SubscriptionPath,
      payload: ItemRequests.ItemChange,
      success: Envelope(Quote),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("commit", "/api/v1/subscription/:subscription_id/items", {
      params: SubscriptionPath,
      payload: ItemRequests.ItemChange,
      success: Envelope(Schema.Struct({ quote: Quote, items: Schema.Array(Subscription.SubscriptionItem) })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Items") {}
