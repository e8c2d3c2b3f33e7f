/**
 * Customers: members (`customer`, identified by the merchant's `payer_id`) and visitors
 * (`guest`, known by email only).
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { CollectionMethod } from "../invoices/Collection.js"
import { NullableString } from "../kernel/Common.js"

/**
 * The structured address accepted on create/update.
 *
 * @since 0.1.0
 */
export class Address extends Schema.Class<Address>("Address")({
  line1: Schema.optional(Schema.String),
  line2: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  province: Schema.optional(Schema.String),
  postal_code: Schema.optional(Schema.String),
  country: Schema.optional(Schema.String)
}) {}

/**
 * The address as one string (the seed returns it so): non-empty parts joined with ", ".
 *
 * @since 0.1.0
 */
export const formatAddress = (a: Address): string =>
  [a.line1, a.line2, a.city, a.province, a.postal_code, a.country]
    .filter((p) => p !== undefined && p.trim() !== "")
    .join(", ")

/**
 * `customer` (member) or `guest` (visitor).
 *
 * @since 0.1.0
 */
export const CustomerType = Schema.Literals(["customer", "guest"])

/**
 * A customer record as the REST API returns it.
 *
 * @since 0.1.0
 */
export class Customer extends Schema.Class<Customer>("Customer")({
  id: Schema.String,
  email: NullableString,
  address: NullableString,
  phone: NullableString,
  name: NullableString,
  description: NullableString,
  payer_id: NullableString,
  /** How the customer's invoices are collected (a subscription's own setting wins): `charge_automatically` or `send_invoice`. */
  collection_method: CollectionMethod.pipe(
    Schema.withDecodingDefault(Effect.succeed("charge_automatically" as const)),
    Schema.withConstructorDefault(Effect.succeed("charge_automatically" as const))
  ),
  /** The net terms of `send_invoice` in days (null when charged automatically). */
  days_until_due: Schema.NullOr(Schema.Int).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * Its balance in each currency it has one in (positive: credit it holds), from the balance
   * ledger: written by the read of one customer, absent elsewhere.
   */
  balance: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        currency: Schema.String,
        amount: Schema.String
      })
    )
  )
}) {}
