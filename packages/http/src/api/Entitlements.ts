/**
 * The entitlements group: a customer's entitlements and the merchant's policy of which
 * subscription states grant them.
 *
 * @since 0.1.0
 */
import { Entitlement } from "@recur/core"
import { RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope } from "./Shared.js"

/**
 * Entitlements: what a customer's subscriptions grant, as committed.
 *
 * @since 0.1.0
 */
export class EntitlementsGroup extends HttpApiGroup.make("entitlements")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/customer/:customer_id/entitlements", {
      params: Schema.Struct({ customer_id: Schema.String }),
      success: Envelope(Entitlement.CustomerEntitlements),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("check", "/api/v1/customer/:customer_id/entitlements/:feature", {
      params: Schema.Struct({ customer_id: Schema.String, feature: Schema.String }),
      success: Envelope(Entitlement.EntitlementCheck),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("settings", "/api/v1/entitlement_settings", {
      success: Envelope(Entitlement.EntitlementSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updateSettings", "/api/v1/entitlement_settings", {
      payload: RequestBodies.EntitlementSettings,
      success: Envelope(Entitlement.EntitlementSettings),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("setProductEntitlements", "/api/v1/product/:product_id/entitlements", {
      params: Schema.Struct({ product_id: Schema.String }),
      payload: RequestBodies.ProductEntitlements,
      success: Envelope(Schema.Struct({ product_id: Schema.String, entitlements: Entitlement.Features })),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Entitlements") {}
