/**
 * The merchant API's prepaid-credit bodies and answers (issue 35): a credit grant
 * (`POST /api/v1/customers/{id}/credit_grants`), a top-up purchase
 * (`POST /api/v1/customers/{id}/credit_top_ups`) and a customer's automatic top-up
 * (`POST /api/v1/customers/{id}/auto_top_up`). Loosely typed on purpose: the engine's checks name
 * the field a value breaks. The REST adapter and the Promise facade decode the same way.
 *
 * @since 0.1.0
 */
import { CreditGrant } from "@recur/core"
import { Schema } from "effect"

/**
 * The body of a credit grant: `amount` (a positive decimal in the currency's units),
 * `currency`, `reason` (1 to 500 characters), `category` (`paid` or `promotional`), all
 * required, and `expires_at` (RFC 3339, in the future; absent or `null`: never).
 *
 * @since 0.1.0
 */
export const CreateCreditGrant = Schema.Struct({
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  category: Schema.optional(Schema.String),
  expires_at: Schema.optional(Schema.NullOr(Schema.String))
})

/** @since 0.1.0 */
export type CreateCreditGrant = typeof CreateCreditGrant.Type

/**
 * A card typed for a top-up (the sandbox's test numbers; a live processor takes `payment_method`).
 *
 * @since 0.1.0
 */
export const TopUpCard = Schema.Struct({
  number: Schema.String,
  exp_month: Schema.Int,
  exp_year: Schema.Int,
  cvc: Schema.String,
  name: Schema.optionalKey(Schema.String)
})

/**
 * The body of a top-up purchase: `amount` and `currency` (required), paid with `card` or
 * `payment_method` (a collected `pm_…`) when given, else the customer's card on file. The
 * `Request-Id` header keys the charge: a retry answers the first outcome.
 *
 * @since 0.1.0
 */
export const CreateTopUp = Schema.Struct({
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  card: Schema.optional(TopUpCard),
  payment_method: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export type CreateTopUp = typeof CreateTopUp.Type

/**
 * The body of a customer's automatic top-up: `enabled`, `threshold` and `amount` (positive
 * decimals) and `currency`, all required.
 *
 * @since 0.1.0
 */
export const SetAutoTopUp = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  threshold: Schema.optional(Schema.String),
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export type SetAutoTopUp = typeof SetAutoTopUp.Type

/**
 * The answer of a grant, a top-up and a read: the grant.
 *
 * @since 0.1.0
 */
export const CreditGrantAnswer = Schema.Struct({ credit_grant: CreditGrant.CreditGrant })

/**
 * The answer of an automatic top-up's setting.
 *
 * @since 0.1.0
 */
export const AutoTopUpAnswer = Schema.Struct({ auto_top_up: CreditGrant.AutoTopUp })
