/**
 * The webhooks group: its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Webhook } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

/**
 * Webhook events and endpoints (version 2 paths).
 *
 * @since 0.1.0
 */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("events", "/api/v2/webhook/events", {
      query: Schema.Struct({
        ...PageQuery,
        business_ids: QueryList,
        event_types: QueryList,
        event_statuses: QueryList
      }),
      success: Envelope(Page(Webhook.WebhookEvent)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("endpoints", "/api/v2/webhook/endpoints", {
      query: Schema.Struct({ ...PageQuery, status: QueryList }),
      success: Envelope(Page(Webhook.WebhookEndpoint)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createEndpoint", "/api/v2/webhook/endpoints", {
      payload: RequestBodies.WebhookEndpoint,
      success: Envelope(Schema.Struct({ id: Schema.String, secret: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateEndpoint", "/api/v2/webhook/endpoints/:endpoint_id", {
      params: Schema.Struct({ endpoint_id: Schema.String }),
      payload: RequestBodies.WebhookEndpoint,
      success: Envelope(Webhook.WebhookEndpoint),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("deleteEndpoint", "/api/v2/webhook/endpoints/:endpoint_id/delete", {
      params: Schema.Struct({ endpoint_id: Schema.String }),
      success: Envelope(Schema.Struct({})),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("resendEvent", "/api/v2/webhook/events/:event_id/resend", {
      params: Schema.Struct({ event_id: Schema.String }),
      success: Envelope(Webhook.WebhookEvent),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks") {}
