/**
 * How invoices are collected, as the merchant API takes it (issue 34, item 5): the fields a
 * customer's create and update bodies accept, and the body of
 * `POST /api/v1/subscription/{subscription_id}/collection_method`. The engine checks the terms
 * (`Collection.parse`: `days_until_due` 1 to 365, required with `send_invoice`).
 *
 * @since 0.1.0
 */
import { Collection } from "@recur/core"
import { Schema } from "effect"

/**
 * `collection_method` (`charge_automatically` or `send_invoice`) and `days_until_due` (the net
 * terms of `send_invoice`), both optional.
 *
 * @since 0.1.0
 */
export const CollectionFields = {
  collection_method: Schema.optional(Collection.CollectionMethod),
  days_until_due: Schema.optional(Schema.NullOr(Schema.Int))
}

/**
 * The body of `POST /api/v1/subscription/{subscription_id}/collection_method`: the method
 * (required) and its terms; `null` as the method gives the subscription back its customer's.
 *
 * @since 0.1.0
 */
export const SetCollection = Schema.Struct({
  collection_method: Schema.NullOr(Collection.CollectionMethod),
  days_until_due: Schema.optional(Schema.NullOr(Schema.Int))
})

/**
 * The answer of the collection endpoint: the subscription's own setting (null: its customer's)
 * and the one in force.
 *
 * @since 0.1.0
 */
export const CollectionAnswer = Schema.Struct({
  subscription_id: Schema.String,
  collection_method: Schema.NullOr(Collection.CollectionMethod),
  days_until_due: Schema.NullOr(Schema.Int),
  effective_collection_method: Collection.CollectionMethod,
  effective_days_until_due: Schema.NullOr(Schema.Int)
})
