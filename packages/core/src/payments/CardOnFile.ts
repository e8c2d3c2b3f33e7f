/**
 * A customer's card on file: what a charge outside any subscription (a one-off invoice) is made
 * with. Recur keeps saved cards per subscription, so it is the card of the customer's newest
 * subscription that has one (a subscription never paid — `init`, `incomplete` — has none to offer).
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import type { StorageService } from "../kernel/ServiceSupport.js"

/**
 * The saved token of the customer's newest subscription that has one, if any.
 *
 * @since 0.1.0
 */
export const cardOnFile = (
  storage: StorageService,
  merchantId: string,
  customerId: string
): Effect.Effect<Option.Option<string>> =>
  Effect.map(
    Effect.orDie(
      storage.repository(Entities.subscription).list(merchantId, {
        limit: 100,
        filters: [{ column: "customer_id", op: "in", values: [customerId] }]
      })
    ),
    (page) =>
      Option.fromNullishOr(
        page.list.find(
          (r) => r.payment_token !== null && r.subscription.status !== "init" && r.subscription.status !== "incomplete"
        )?.payment_token
      )
  )
