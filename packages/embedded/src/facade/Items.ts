/**
 * The facade's subscription items group: the same service and the same request decoding
 * (`@recur/contract`'s `ItemRequests`) as the REST handlers of `/api/v1/subscription/{id}/items`.
 *
 * @since 0.1.0
 */
import { ItemRequests } from "@recur/contract"
import { ItemChanges, Subscription } from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit } from "./Kit.js"

const Items = Schema.Array(Subscription.SubscriptionItem)

/** `items`. @since 0.1.0 */
export const items = ({ run }: Kit<Services>): BillingClient["items"] => ({
  list: (merchantId, subscriptionId) =>
    run(
      id("subscription_id", subscriptionId).pipe(
        Effect.flatMap((s) => ItemChanges.ItemChanges.use((ic) => ic.list(merchantId, s))),
        Effect.map(json(Items))
      )
    ),
  preview: (merchantId, subscriptionId, input) =>
    run(
      Effect.all([id("subscription_id", subscriptionId), decode(ItemRequests.ItemChange, input)]).pipe(
        Effect.flatMap(([s, body]) => ItemRequests.itemCommand(s, body)),
        Effect.flatMap((command) => ItemChanges.ItemChanges.use((ic) => ic.preview(merchantId, command)))
      )
    ),
  commit: (merchantId, subscriptionId, input) =>
    run(
      Effect.all([id("subscription_id", subscriptionId), decode(ItemRequests.ItemChange, input)]).pipe(
        Effect.flatMap(([s, body]) => ItemRequests.itemCommand(s, body)),
        Effect.flatMap((command) => ItemChanges.ItemChanges.use((ic) => ic.commit(merchantId, command))),
        Effect.map((done) => ({ quote: done.quote, items: json(Items)(done.items) }))
      )
    )
})
