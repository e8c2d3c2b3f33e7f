/**
 * The handlers of the subscription items group.
 *
 * @since 0.1.0
 */
import { ItemRequests } from "@recur/contract"
import { ItemChanges } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, ok, quoteJson } from "./Shared.js"

/**
 * The handlers of the subscription items group.
 *
 * @since 0.1.0
 */
export const itemsLive = HttpApiBuilder.group(BillingApi, "items", (handlers) =>
  Effect.gen(function* () {
    const itemChanges = yield* ItemChanges.ItemChanges
    return handlers
      .handle("list", ({ params: path }) =>
        call((m) => Effect.map(itemChanges.list(m, path.subscription_id), (items) => ok({ items })))
      )
      .handle("preview", ({ params: path, payload }) =>
        call((m) =>
          ItemRequests.itemCommand(path.subscription_id, payload).pipe(
            Effect.flatMap((command) => itemChanges.preview(m, command)),
            Effect.map((quote) => ok(quoteJson(quote)))
          )
        )
      )
      .handle("commit", ({ params: path, payload }) =>
        call((m) =>
          ItemRequests.itemCommand(path.subscription_id, payload).pipe(
            Effect.flatMap((command) => itemChanges.commit(m, command)),
            Effect.map((done) => ok({ quote: quoteJson(done.quote), items: done.items }))
          )
        )
      )
  })
)
