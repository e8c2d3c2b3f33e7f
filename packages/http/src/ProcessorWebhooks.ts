/**
 * `POST /webhooks/:provider/:merchant_id`: a payment processor's webhook for one merchant (the
 * URL `GET /api/v1/payment_settings` gives as `webhook_url`). The gateway checks its signature
 * with the merchant's webhook secret and says what it means; the engine acts on it once
 * (`ProcessorEvents.receive`). Answers 200 for an event acted on or seen before, 400 for a bad
 * signature or body, 404 where no gateway takes webhooks, 409 when a concurrent change of the
 * trade should be retried (the processor sends the event again).
 *
 * @since 0.1.0
 */
import { Ports, ProcessorEvents } from "@recur/core"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

const answer = (status: number, body: Record<string, unknown>) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })

/**
 * The route.
 *
 * @since 0.1.0
 */
export const routes = HttpRouter.add(
  "POST",
  "/webhooks/:provider/:merchant_id",
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const [, , provider = "", merchantId = ""] = request.url.split("?")[0]!.split("/")
    const gateway = yield* Ports.PaymentGateway
    if (gateway.webhook === undefined || !/^[a-z]{2,20}$/.test(provider) || !/^mch_[0-9a-z]{26}$/.test(merchantId))
      return answer(404, { code: "not_found", message: "No webhooks are taken here." })
    const body = yield* Effect.orElseSucceed(request.text, () => "")
    const read = yield* gateway.webhook({ provider, merchant_id: merchantId, body, headers: request.headers })
    if (read._tag === "Failure") return answer(400, { code: "invalid_request_error", message: read.failure })
    const received = yield* Effect.result(
      ProcessorEvents.ProcessorEvents.use((p) => p.receive(merchantId, provider, read.success))
    )
    if (received._tag === "Failure")
      return received.failure._tag === "ConcurrentUpdate"
        ? answer(409, { code: "state_conflict", message: received.failure.message })
        : answer(404, { code: "not_found", message: received.failure.message })
    return answer(200, { received: true, ...received.success })
  })
)
