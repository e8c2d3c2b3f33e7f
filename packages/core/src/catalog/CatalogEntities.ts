/**
 * Categories, products, prices and price versions as stored (re-exported by `Entities`).
 */
import { Effect, Schema } from "effect"
import { Features } from "../entitlements/Entitlement.js"
import { Feature, Metadata } from "../kernel/Common.js"
import { PriceVersionStatus, ProductStatus } from "../kernel/Lifecycle.js"
import * as Price from "./Price.js"
import * as Store from "../kernel/Store.js"
import { ms } from "../kernel/internal/entities.js"

/** @since 0.1.0 */
export const CategoryRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  status: Schema.Literals(["active", "disabled"]),
  chinese_name: Schema.NullOr(Schema.String),
  chinese_description: Schema.NullOr(Schema.String),
  is_default: Schema.Boolean,
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type CategoryRecord = typeof CategoryRecord.Type

/** @since 0.1.0 */
export const category: Store.Entity<CategoryRecord, typeof CategoryRecord.Encoded> = Store.entity({
  name: "category",
  table: "recur_categories",
  schema: CategoryRecord,
  id: "id",
  createdAt: "created_at",
  // `default_key` is "default" on the default category and null elsewhere: one default per merchant.
  columns: { default_key: (c) => (c.is_default ? "default" : null), status: "status" },
  unique: [{ name: "category_default", columns: ["default_key"] }]
})

/** @since 0.1.0 */
export const ProductRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  name: Schema.String,
  status: ProductStatus,
  merchant_product_id: Schema.NullOr(Schema.String),
  category_id: Schema.String,
  description: Schema.NullOr(Schema.String),
  image_url: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  quantity_unit: Schema.NullOr(Schema.String),
  features: Schema.Array(Feature),
  /** What a subscription to the product grants; `{}` on records written before it existed. */
  entitlements: Features.pipe(Schema.withDecodingDefault(Effect.succeed({}))),
  metadata: Metadata,
  /** Prices of the product (the `price_ids` list filter). */
  price_ids: Schema.Array(Schema.String),
  created_at: Schema.Number,
  updated_at: Schema.Number
})
/** @since 0.1.0 */
export type ProductRecord = typeof ProductRecord.Type

/** @since 0.1.0 */
export const product: Store.Entity<ProductRecord, typeof ProductRecord.Encoded> = Store.entity({
  name: "product",
  table: "recur_products",
  schema: ProductRecord,
  id: "id",
  createdAt: "created_at",
  columns: { status: "status", category_id: "category_id", price_ids: "price_ids" }
})

/**
 * The `audience` column of a price of the public catalog (a private price's is its customer id).
 *
 * @since 0.1.0
 */
export const PUBLIC_AUDIENCE = "public"

/**
 * A price: the stable id that versions hang off.
 *
 * @since 0.1.0
 */
export const PriceRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  product_id: Schema.String,
  name: Schema.String,
  merchant_price_id: Schema.NullOr(Schema.String),
  current_version_id: Schema.String,
  status: PriceVersionStatus,
  versions: Schema.Number,
  created_at: Schema.Number,
  /** The one customer a private price is sold to; `null` (and absent on older records): public. */
  customer_id: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null)))
})
/** @since 0.1.0 */
export type PriceRecord = typeof PriceRecord.Type

/** @since 0.1.0 */
export const price: Store.Entity<PriceRecord, typeof PriceRecord.Encoded> = Store.entity({
  name: "price",
  table: "recur_prices",
  schema: PriceRecord,
  id: "id",
  createdAt: "created_at",
  columns: {
    product_id: "product_id",
    merchant_price_id: "merchant_price_id",
    status: "status",
    // who may see the price in a list: "public", or the customer id of a private price
    audience: (p) => p.customer_id ?? PUBLIC_AUDIENCE
  },
  unique: [{ name: "price_merchant_price_id", columns: ["merchant_price_id"] }]
})

/** @since 0.1.0 */
export const priceVersion: Store.Entity<Price.PriceVersion, typeof Price.PriceVersion.Encoded> = Store.entity({
  name: "price_version",
  table: "recur_price_versions",
  schema: Price.PriceVersion,
  id: "price_version_id",
  createdAt: (v) => ms(v.created_at),
  columns: { price_id: "id", product_id: "product_id", biz_status: "biz_status" }
})
