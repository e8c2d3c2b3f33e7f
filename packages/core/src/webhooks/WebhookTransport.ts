/**
 * The webhook transport port (re-exported by `Ports`).
 */
import { Context, Data, type Effect } from "effect"

/**
 * One webhook POST as the transport sends it: the body is sent byte for byte as given.
 *
 * @since 0.1.0
 */
export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Give up (and report `timeout`) after this long. */
  readonly timeoutMs: number
  /** Whether loopback / private-network targets may be called (sandbox and tests). */
  readonly allowPrivateNetwork: boolean
}

/**
 * Why a webhook POST got no HTTP answer: `timeout`, `network` (refused, reset, DNS) or
 * `forbidden` (a private-network target where not allowed).
 *
 * @since 0.1.0
 */
export class WebhookTransportError extends Data.TaggedError("WebhookTransportError")<{
  readonly reason: "timeout" | "network" | "forbidden"
  readonly message: string
}> {}

/**
 * Sends webhook requests. It never follows redirects: a 3xx is returned as the answer.
 * `@recur/webhooks` provides one on Effect's HTTP client.
 *
 * @since 0.1.0
 */
export class WebhookTransport extends Context.Service<
  WebhookTransport,
  { readonly send: (request: WebhookRequest) => Effect.Effect<{ readonly status: number }, WebhookTransportError> }
>()("@recur/core/WebhookTransport") {}
