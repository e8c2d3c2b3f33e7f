/**
 * The customer as stored (re-exported by `Entities`).
 */
import { Schema } from "effect"
import { CollectionSetting } from "../invoices/Collection.js"
import { Metadata } from "../kernel/Common.js"
import { Address, CustomerType } from "./Customer.js"
import * as Store from "../kernel/Store.js"

/**
 * A stored customer: the structured address, the member/guest type and soft deletion.
 *
 * @since 0.1.0
 */
export const CustomerRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  email: Schema.NullOr(Schema.String),
  payer_id: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Address),
  metadata: Metadata,
  email_subscription: Schema.NullOr(Schema.Literals([1, 2])),
  type: CustomerType,
  created_at: Schema.Number,
  updated_at: Schema.Number,
  deleted_at: Schema.NullOr(Schema.Number),
  /** How the customer's invoices are collected (null: charged automatically); a subscription's own setting wins. */
  collection: Schema.optional(Schema.NullOr(CollectionSetting))
})
/** @since 0.1.0 */
export type CustomerRecord = typeof CustomerRecord.Type

/** @since 0.1.0 */
export const customer: Store.Entity<CustomerRecord, typeof CustomerRecord.Encoded> = Store.entity({
  name: "customer",
  table: "recur_customers",
  schema: CustomerRecord,
  id: "id",
  createdAt: "created_at",
  columns: {
    email: "email",
    payer_id: "payer_id",
    type: "type",
    deleted: (c) => c.deleted_at !== null
  },
  unique: [{ name: "customer_payer_id", columns: ["payer_id"] }]
})
