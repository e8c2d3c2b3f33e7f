/**
 * The `Authentication` middleware: the merchant of a request from its API key, and its `Request-Id`.
 *
 * @since 0.1.0
 */
import { Merchants } from "@recur/core"
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { Authentication, CurrentMerchant } from "../api/Shared.js"
import * as ApiErrors from "../Errors.js"
import * as AuthMemo from "../internal/authMemo.js"
import * as Observed from "../internal/observed.js"

const BEARER = /^Bearer (\S+)$/

/**
 * Authentication: the key from `Authorization: Bearer <key>` (exactly one space), then the
 * required `Request-Id`.
 *
 * @since 0.1.0
 */
export const authenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const merchants = yield* Merchants.Merchants
    return Authentication.of({
      bearer: (httpEffect) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          // the envelope names the request (the server's id when the client sent none); the
          // handlers get the client's own Request-Id, the idempotency key
          const envelopeId = Observed.requestIdOf(request)
          const requestId = Observed.clientRequestId(request)
          const header = request.headers.authorization
          const m = header === undefined ? null : BEARER.exec(header)
          const unauthorized = new ApiErrors.Unauthorized({
            code: "unauthorizedError",
            message: ApiErrors.unauthorizedMessage,
            data: { request_id: envelopeId }
          })
          if (!m) return yield* Effect.fail(unauthorized)
          const auth =
            AuthMemo.recall(request, m[1]!) ??
            (yield* Effect.mapError(
              merchants.authenticate(m[1]!),
              () =>
                new ApiErrors.Unauthorized({
                  code: "unauthorizedError",
                  message: ApiErrors.rejectedKeyMessage,
                  data: { request_id: envelopeId }
                })
            ))
          if (requestId === undefined) {
            return yield* Effect.fail(
              new ApiErrors.InvalidParameter({
                code: "InvalidParameter",
                message: "The Request-Id header is required (1 to 255 printable characters).",
                data: { request_id: envelopeId, param: "Request-Id" }
              })
            )
          }
          Observed.noteMerchant(request, auth.merchant.merchant_id)
          return yield* Effect.provideService(httpEffect, CurrentMerchant, { merchant: auth.merchant, requestId })
        })
    })
  })
)
