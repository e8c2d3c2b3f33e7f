/**
 * The catalog group (products, categories, prices): its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Price, PriceMigration, Product } from "@recur/core"
import { CatalogRequests, RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

/**
 * The body of `POST /api/v1/prices` (`@recur/contract`'s `RequestBodies.CreatePrice`).
 *
 * @since 0.1.0
 */
export const PricePayload = RequestBodies.CreatePrice

const MigrationPath = Schema.Struct({ price_id: Schema.String, migration_id: Schema.String })

/**
 * Products, categories and prices.
 *
 * @since 0.1.0
 */
export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("categories", "/api/v1/product-categories", {
      success: Envelope(Schema.Struct({ total: Schema.Int, list: Schema.Array(Product.Category) })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createProduct", "/api/v1/products", {
      payload: RequestBodies.CreateProduct,
      success: Envelope(Schema.Struct({ product_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("productStatus", "/api/v1/product/:product_id/status", {
      params: Schema.Struct({ product_id: Schema.String }),
      payload: Schema.Struct({
        status: Schema.optional(Schema.String),
        product_status: Schema.optional(Schema.String)
      }),
      success: Envelope(Schema.Struct({ product_id: Schema.String, product_status: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("products", "/api/v1/products", {
      query: Schema.Struct({ ...PageQuery, price_ids: QueryList, status: Schema.optional(Schema.String) }),
      success: Envelope(Page(Product.Product)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createPrice", "/api/v1/prices", {
      payload: RequestBodies.CreatePrice,
      success: Envelope(
        Schema.Struct({
          price_id: Schema.String,
          price_version_id: Schema.String,
          merchant_price_id: Schema.NullOr(Schema.String)
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("priceStatus", "/api/v1/prices/:price_version_id/status", {
      params: Schema.Struct({ price_version_id: Schema.String }),
      payload: Schema.Struct({
        price_version_id: Schema.optional(Schema.String),
        status: Schema.optional(Schema.String)
      }),
      success: Envelope(Schema.Struct({ price_version_id: Schema.String })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("priceVersion", "/api/v1/prices/version/:price_version_id", {
      params: Schema.Struct({ price_version_id: Schema.String }),
      success: Envelope(Price.PriceVersion),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("prices", "/api/v1/prices", {
      query: Schema.Struct({
        ...PageQuery,
        product_id: Schema.optional(Schema.String),
        status: Schema.optional(Schema.String),
        customer_id: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Price.PriceVersion)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("priceVersions", "/api/v1/price/:price_id/versions", {
      params: Schema.Struct({ price_id: Schema.String }),
      query: Schema.Struct(PageQuery),
      success: Envelope(Page(Price.PriceVersion)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createPriceVersion", "/api/v1/price/:price_id/versions", {
      params: Schema.Struct({ price_id: Schema.String }),
      payload: RequestBodies.CreatePrice,
      success: Envelope(Price.PriceVersion),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("createMigration", "/api/v1/price/:price_id/migrations", {
      params: Schema.Struct({ price_id: Schema.String }),
      payload: CatalogRequests.CreatePriceMigration,
      success: Envelope(PriceMigration.PriceMigration),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("migration", "/api/v1/price/:price_id/migrations/:migration_id", {
      params: MigrationPath,
      success: Envelope(PriceMigration.PriceMigration),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("migrationLines", "/api/v1/price/:price_id/migrations/:migration_id/lines", {
      params: MigrationPath,
      query: Schema.Struct({ ...PageQuery, outcome: Schema.optional(Schema.String) }),
      success: Envelope(Page(PriceMigration.PriceMigrationLine)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("runMigration", "/api/v1/price/:price_id/migrations/:migration_id/run", {
      params: MigrationPath,
      success: Envelope(PriceMigration.PriceMigration),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("cancelMigration", "/api/v1/price/:price_id/migrations/:migration_id/cancel", {
      params: MigrationPath,
      success: Envelope(PriceMigration.PriceMigration),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Catalog") {}
