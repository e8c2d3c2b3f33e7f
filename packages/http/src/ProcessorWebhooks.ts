/**
 * `POST /webhooks/:provider/:merchant_id`: a payment processor's webhook for one merchant (the
 * URL `GET /api/v1/payment_settings` gives as `webhook_url`). The gateway checks its signature
 * with the merchant's webhook secret and says what it means; the engine acts on it once
 * (`ProcessorEvents.receive`). Answers 200 for an event acted on or seen before, 400 for a bad
 * signature or body, 404 where no gateway takes webhooks, 409 when a concurrent change of the
 * trade should be retried, 503 when what the event is about could not be read from the processor
 * now (the event is not recorded as seen: the processor sends it again and it is acted on then).
 *
 * @since 0.1.0
 */
import { Ports, ProcessorEvents } from "@recur/core"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Observed from "./internal/observed.js"

const answer = (status: number, body: Record<string, unknown>) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })

/** An error answer in the API's envelope, naming the request (the processor sends no Request-Id: the server's). */
const refuse = (request: HttpServerRequest.HttpServerRequest, status: number, code: string, message: string) =>
  answer(status, { code, message, data: { request_id: Observed.requestIdOf(request) } })

/** 503: the processor sends the event again later (Stripe retries for up to three days). */
const retry = (request: HttpServerRequest.HttpServerRequest, reason: string) =>
  HttpServerResponse.jsonUnsafe(
    {
      code: "processor_unavailable",
      message: `The event could not be handled now: ${reason}. Send it again.`,
      data: { request_id: Observed.requestIdOf(request) }
    },
    { status: 503, headers: { "cache-control": "no-store", "retry-after": "60" } }
  )

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
      return refuse(request, 404, "not_found", "No webhooks are taken here.")
    const body = yield* Effect.orElseSucceed(request.text, () => "")
    const read = yield* gateway.webhook({ provider, merchant_id: merchantId, body, headers: request.headers })
    if (read._tag === "Failure") return refuse(request, 400, "invalid_request_error", read.failure)
    // genuine, but what it is about could not be read now: not acted on, not recorded; retried
    if (read.success._tag === "Retry") return retry(request, read.success.reason)
    // one account serving several merchants: the event's own merchant (the gateway read it)
    const target = Ports.merchantOfEvent(read.success, merchantId)
    const received = yield* Effect.result(
      ProcessorEvents.ProcessorEvents.use((p) => p.receive(target, provider, read.success))
    )
    if (received._tag === "Failure")
      return received.failure._tag === "ConcurrentUpdate"
        ? refuse(request, 409, "state_conflict", received.failure.message)
        : received.failure._tag === "EventNotReadable"
          ? retry(request, received.failure.reason)
          : refuse(request, 404, "not_found", received.failure.message)
    return answer(200, { received: true, ...received.success })
  })
)
