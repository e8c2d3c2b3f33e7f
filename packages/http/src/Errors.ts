/**
 * The error bodies of the REST API: every error is the envelope `{code, message, data}` with
 * `data.request_id` (and `data.param` when a field is at fault), bound to its HTTP status.
 *
 * @since 0.1.0
 */
import { DunningPolicy } from "@recur/core"
import { Schema } from "effect"

/**
 * `data` of an error.
 *
 * @since 0.1.0
 */
export const ErrorData = Schema.Struct({
  request_id: Schema.String,
  param: Schema.optional(Schema.String)
})

/** @since 0.1.0 */
export class InvalidParameter extends Schema.Class<InvalidParameter>("InvalidParameter")(
  { code: Schema.Literal("InvalidParameter"), message: Schema.String, data: ErrorData },
  { httpApiStatus: 400, description: "A required field or header is missing, or a value is malformed or out of range" }
) {}

/** @since 0.1.0 */
export class InvalidRequest extends Schema.Class<InvalidRequest>("InvalidRequest")(
  { code: Schema.Literal("invalid_request_error"), message: Schema.String, data: ErrorData },
  {
    httpApiStatus: 400,
    description: "Well-formed but contradictory (both cursors, a foreign cursor, mutually exclusive fields)"
  }
) {}

/** @since 0.1.0 */
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(
  { code: Schema.Literal("unauthorizedError"), message: Schema.String, data: Schema.optional(ErrorData) },
  { httpApiStatus: 401, description: "ApiKey authentication is required" }
) {}

/** @since 0.1.0 */
export class PaymentFailed extends Schema.Class<PaymentFailed>("PaymentFailed")(
  {
    code: Schema.Literal("payment_failed"),
    message: Schema.String,
    data: Schema.Struct({
      request_id: Schema.String,
      last_payment_error: Schema.Struct({
        code: Schema.String,
        message: Schema.String,
        /** The decline's class, as on the trade's `last_payment_error` (absent when the gateway gave none). */
        decline_class: Schema.optionalKey(DunningPolicy.DeclineClass)
      })
    })
  },
  { httpApiStatus: 402 }
) {}

/** @since 0.1.0 */
export class NotFound extends Schema.Class<NotFound>("NotFound")(
  { code: Schema.Literal("resource_not_found"), message: Schema.String, data: ErrorData },
  { httpApiStatus: 404, description: "No such object for this merchant" }
) {}

/** @since 0.1.0 */
export class Conflict extends Schema.Class<Conflict>("Conflict")(
  {
    code: Schema.Literals(["state_conflict", "duplicate_resource", "idempotency_conflict", "request_in_progress"]),
    message: Schema.String,
    data: ErrorData
  },
  {
    httpApiStatus: 409,
    description:
      "The object's state refuses the change, another request changed it first, or the Request-Id was used with another body or is still running"
  }
) {}

/** @since 0.1.0 */
export class RateLimited extends Schema.Class<RateLimited>("RateLimited")(
  { code: Schema.Literal("rate_limit_exceeded"), message: Schema.String, data: ErrorData },
  { httpApiStatus: 429, description: "Too many requests for this API key: retry after Retry-After seconds" }
) {}

/** @since 0.1.0 */
export class ServiceUnavailable extends Schema.Class<ServiceUnavailable>("ServiceUnavailable")(
  { code: Schema.Literal("service_unavailable"), message: Schema.String, data: ErrorData },
  { httpApiStatus: 503, description: "A payment processor that must answer first did not: nothing changed, retry" }
) {}

/** @since 0.1.0 */
export class SystemError extends Schema.Class<SystemError>("SystemError")(
  { code: Schema.Literal("system_error"), message: Schema.String, data: ErrorData },
  {
    httpApiStatus: 500,
    description: "An unexpected failure; the answer is not stored, so the same Request-Id may be retried"
  }
) {}

/**
 * Every error the API can answer.
 *
 * @since 0.1.0
 */
export type ApiError =
  | InvalidParameter
  | InvalidRequest
  | Unauthorized
  | PaymentFailed
  | NotFound
  | Conflict
  | RateLimited
  | ServiceUnavailable
  | SystemError

/**
 * The error schemas every authenticated endpoint declares (the OpenAPI document lists them on
 * each operation, and generated clients decode them).
 *
 * @since 0.1.0
 */
export const all = [
  InvalidParameter,
  InvalidRequest,
  Unauthorized,
  PaymentFailed,
  NotFound,
  Conflict,
  RateLimited,
  ServiceUnavailable,
  SystemError
] as const

/**
 * The message of the 401 answer when no key was sent (no `Authorization` header, or not
 * `Bearer <key>`).
 *
 * @since 0.1.0
 */
export const unauthorizedMessage = "ApiKey authentication is required. Send Authorization: Bearer <API_KEY>."

/**
 * The message of the 401 answer when a key was sent and is not accepted: unknown, revoked or
 * expired (which of them is not said: the answer helps the key's holder, not a guesser).
 *
 * @since 0.1.0
 */
export const rejectedKeyMessage =
  "ApiKey authentication is required: the API key sent is not valid (unknown, revoked or expired). Send Authorization: Bearer <API_KEY> with a current key."
