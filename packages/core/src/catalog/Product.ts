/**
 * Products and their categories.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { Features } from "../entitlements/Entitlement.js"
import { Feature, Metadata, NullableString, Timestamp } from "../kernel/Common.js"
import { ProductStatus } from "../kernel/Lifecycle.js"

/**
 * A product as the REST API returns it.
 *
 * @since 0.1.0
 */
export class Product extends Schema.Class<Product>("Product")({
  product_id: Schema.String,
  product_name: Schema.String,
  product_status: ProductStatus,
  merchant_product_id: NullableString,
  category_id: Schema.String,
  description: NullableString,
  image_url: NullableString,
  category_name: Schema.String,
  created_by: NullableString,
  created_at: Timestamp,
  quantity_unit: NullableString,
  features: Schema.Array(Feature),
  /** What a subscription to the product grants (`seats: 10`, `sso: true`); see `Entitlements`. */
  entitlements: Features.pipe(
    Schema.withDecodingDefault(Effect.succeed({})),
    Schema.withConstructorDefault(Effect.succeed({}))
  ),
  metadata: Metadata
}) {}

/**
 * A product category. Every merchant has one default category.
 *
 * @since 0.1.0
 */
export class Category extends Schema.Class<Category>("Category")({
  category_id: Schema.String,
  category_name: Schema.String,
  description: NullableString,
  category_status: Schema.Literals(["active", "disabled"]),
  chinese_name: NullableString,
  chinese_description: NullableString,
  is_default: Schema.Boolean
}) {}
