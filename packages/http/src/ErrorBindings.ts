/**
 * How the REST API answers each failure of the engine — declared once, for every error core
 * can raise (the mapped type makes a missing one a compile error): the envelope it becomes (and
 * so its HTTP status), and the request field it names in `data.param`. Core's errors name ids
 * and states, never request fields or statuses; this table is where they meet the contract.
 *
 * @since 0.1.0
 */
import type { Errors } from "@recur/core"
import * as ApiErrors from "./Errors.js"

/**
 * The envelope an error becomes: `invalid_parameter` (400 `InvalidParameter`),
 * `invalid_request` (400 `invalid_request_error`), `unauthorized` (401), `not_found` (404
 * `resource_not_found`), `conflict` (409 `state_conflict`) or `duplicate` (409
 * `duplicate_resource`).
 *
 * @since 0.1.0
 */
export type Reply = "invalid_parameter" | "invalid_request" | "unauthorized" | "not_found" | "conflict" | "duplicate"

/**
 * One error's binding.
 *
 * @since 0.1.0
 */
export interface Binding<E> {
  readonly reply: Reply
  /** The request field at fault, when there is one. */
  readonly param?: (e: E) => string | undefined
}

const sessionFields = {
  customer: "customer_id",
  price: "line_items[0].price_id",
  payment_mode: "payment_mode",
  quantity: "line_items[0].quantity",
  amount: "amount",
  no_rate: "target_currency",
  rate: "target_currency",
  return_url: "return_url",
  cancel_url: "cancel_url"
} as const

const usageFields = {
  count: "usage_count",
  event_id: "event_id",
  instant: "timestamp",
  not_metered: "subscription_id",
  above_bound: "usage_count"
} as const

/**
 * Every error of core, bound to its answer.
 *
 * @since 0.1.0
 */
export const bindings: {
  readonly [K in Errors.RecurError["_tag"]]: Binding<Extract<Errors.RecurError, { readonly _tag: K }>>
} = {
  NotFound: { reply: "not_found" },
  InvalidParameter: { reply: "invalid_parameter", param: (e) => e.param },
  InvalidRequest: { reply: "invalid_request", param: (e) => e.param },
  StateConflict: { reply: "conflict" },
  DuplicateResource: { reply: "duplicate", param: (e) => e.param },
  Unauthorized: { reply: "unauthorized" },
  PriceNotFound: { reply: "not_found" },
  SessionRefused: {
    reply: "invalid_parameter",
    param: (e) => (e.reason === "rate" && e.rateGiven ? "merchant_rate" : sessionFields[e.reason])
  },
  SessionNotPayable: { reply: "conflict" },
  CardInvalid: { reply: "invalid_parameter", param: () => "card_number" },
  SubscriptionNotLive: { reply: "conflict" },
  SubscriptionActionRefused: { reply: "conflict" },
  PriceChangeRefused: { reply: "invalid_parameter", param: () => "price_id" },
  QuantityRefused: { reply: "invalid_parameter", param: () => "quantity" },
  QuoteExpired: { reply: "conflict" },
  QuoteStale: { reply: "conflict" },
  TradeNotFound: { reply: "not_found" },
  TradeNotRefundable: { reply: "conflict" },
  RefundRefused: { reply: "invalid_parameter", param: () => "amount" },
  UsageRefused: {
    reply: "invalid_parameter",
    // the single-event endpoint names the field; the batch endpoint the record it is in
    param: (e) => `${e.index !== undefined ? `records[${e.index}].` : ""}${usageFields[e.reason]}`
  },
  UsageBatchRefused: { reply: "invalid_parameter", param: () => "records" },
  ConcurrentUpdate: { reply: "conflict" }
}

/**
 * A core error as the contract's error body.
 *
 * @since 0.1.0
 */
export const toApiError =
  (requestId: string) =>
  (e: Errors.RecurError): ApiErrors.ApiError => {
    const binding = bindings[e._tag] as Binding<Errors.RecurError>
    const param = binding.param?.(e)
    const data = { request_id: requestId, ...(param !== undefined ? { param } : {}) }
    switch (binding.reply) {
      case "invalid_parameter":
        return new ApiErrors.InvalidParameter({ code: "InvalidParameter", message: e.message, data })
      case "invalid_request":
        return new ApiErrors.InvalidRequest({ code: "invalid_request_error", message: e.message, data })
      case "unauthorized":
        return new ApiErrors.Unauthorized({
          code: "unauthorizedError",
          message: ApiErrors.unauthorizedMessage,
          data: { request_id: requestId }
        })
      case "not_found":
        return new ApiErrors.NotFound({ code: "resource_not_found", message: e.message, data })
      case "conflict":
        return new ApiErrors.Conflict({ code: "state_conflict", message: e.message, data })
      case "duplicate":
        return new ApiErrors.Conflict({ code: "duplicate_resource", message: e.message, data })
    }
  }
