/**
 * What every group of the API shares: the envelope, list pages and queries, and the middleware.
 *
 * @since 0.1.0
 */
import type { Merchant } from "@recur/core"
import { Context, Schema } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"

/**
 * `{code: "success", message: "success", data}`.
 *
 * @since 0.1.0
 */
export const Envelope = <A, I, R>(data: Schema.Codec<A, I, R>) =>
  Schema.Struct({ code: Schema.Literal("success"), message: Schema.Literal("success"), data })

/**
 * A list page: `{has_more, list}`.
 *
 * @since 0.1.0
 */
export const Page = <A, I, R>(item: Schema.Codec<A, I, R>) =>
  Schema.Struct({ has_more: Schema.Boolean, list: Schema.Array(item) })

/** A query array: repeated keys or one comma-separated value. */
export const QueryList = Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.String)]))

/** Cursor pagination and `created_at` ranges, common to every list. */
export const PageQuery = {
  starting_after: Schema.optional(Schema.String),
  ending_before: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.String),
  "created_at.gt": Schema.optional(Schema.String),
  "created_at.gte": Schema.optional(Schema.String),
  "created_at.lt": Schema.optional(Schema.String),
  "created_at.lte": Schema.optional(Schema.String)
}

/**
 * The authenticated merchant of a request.
 *
 * @since 0.1.0
 */
export class CurrentMerchant extends Context.Service<
  CurrentMerchant,
  { readonly merchant: Merchant.Merchant; readonly requestId: string }
>()("@recur/http/CurrentMerchant") {}

/**
 * Authentication (`Authorization: Bearer <key>`, exactly one space) and the required
 * `Request-Id` header, on every endpoint. The key is declared as an HTTP bearer scheme, so the
 * OpenAPI document and generated clients send it.
 *
 * @since 0.1.0
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentMerchant }>()(
  "@recur/http/Authentication",
  {
    error: [ApiErrors.Unauthorized, ApiErrors.InvalidParameter],
    security: {
      bearer: HttpApiSecurity.bearer.pipe(
        HttpApiSecurity.annotate(OpenApi.Description, "A merchant API key (sk_live_… or sk_test_…).")
      )
    }
  }
) {}

/**
 * Every request that does not decode (path, query or body) is answered as `InvalidParameter`
 * in the envelope, naming the first field at fault.
 *
 * @since 0.1.0
 */
export class DecodeErrors extends HttpApiMiddleware.Service<DecodeErrors>()("@recur/http/DecodeErrors", {
  error: ApiErrors.InvalidParameter
}) {}
