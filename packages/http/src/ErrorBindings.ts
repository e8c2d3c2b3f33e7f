/**
 * How the REST API answers each failure of the engine: `@recur/contract`'s `ErrorReplies` table
 * (one answer per error, shared with the Promise facade) turned into the contract's error bodies.
 *
 * @since 0.1.0
 */
import type { Errors } from "@recur/core"
import { ErrorReplies } from "@recur/contract"
import * as ApiErrors from "./Errors.js"

/**
 * The envelope an error becomes (`@recur/contract`'s `ErrorReplies.Reply`).
 *
 * @since 0.1.0
 */
export type Reply = ErrorReplies.Reply

/**
 * One error's binding (`@recur/contract`'s `ErrorReplies.Binding`).
 *
 * @since 0.1.0
 */
export type Binding<E> = ErrorReplies.Binding<E>

/**
 * Every error of core, bound to its answer (`@recur/contract`'s `ErrorReplies.bindings`).
 *
 * @since 0.1.0
 */
export const bindings = ErrorReplies.bindings

/**
 * A core error as the contract's error body.
 *
 * @since 0.1.0
 */
export const toApiError =
  (requestId: string) =>
  (e: Errors.RecurError): ApiErrors.ApiError => {
    const { reply, param } = ErrorReplies.replyTo(e)
    const data = { request_id: requestId, ...(param !== undefined ? { param } : {}) }
    switch (reply) {
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
      case "unavailable":
        return new ApiErrors.ServiceUnavailable({ code: "service_unavailable", message: e.message, data })
    }
  }
