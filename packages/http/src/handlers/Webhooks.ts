/**
 * The handlers of the webhooks group.
 *
 * @since 0.1.0
 */
import { Lifecycle, Webhooks } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, list, pageQuery, enumValues } from "./Shared.js"

/**
 * The handlers of the webhooks group.
 *
 * @since 0.1.0
 */
export const webhooksLive = HttpApiBuilder.group(BillingApi, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks.Webhooks
    return handlers
      .handle("events", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            return ok(
              yield* webhooks.listEvents(m, {
                ...(list(q.business_ids) ? { business_ids: list(q.business_ids)! } : {}),
                ...(list(q.event_types) ? { event_types: list(q.event_types)! } : {}),
                ...(list(q.event_statuses)
                  ? {
                      event_statuses: (yield* enumValues(
                        "event_statuses",
                        list(q.event_statuses),
                        Lifecycle.DeliveryStatus.literals
                      ))!
                    }
                  : {}),
                created: page.created,
                limit: page.limit,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              })
            )
          })
        )
      )
      .handle("endpoints", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.EndpointStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                webhooks.list(m, {
                  ...(statuses ? { status: statuses } : {}),
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
      .handle("createEndpoint", ({ payload }) => call((m) => Effect.map(webhooks.create(m, payload), ok)))
      .handle("updateEndpoint", ({ params: path, payload }) =>
        call((m) => Effect.map(webhooks.update(m, path.endpoint_id, payload), ok))
      )
      .handle("deleteEndpoint", ({ params: path }) =>
        call((m) => Effect.as(webhooks.delete(m, path.endpoint_id), ok({})))
      )
      .handle("resendEvent", ({ params: path }) => call((m) => Effect.map(webhooks.resend(m, path.event_id), ok)))
  })
)
