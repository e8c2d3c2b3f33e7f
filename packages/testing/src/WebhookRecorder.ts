/**
 * A webhook transport for tests: records every request in memory and answers with a status
 * chosen per request (200 by default). No network.
 *
 * @since 0.1.0
 */
import { Ports } from "@recur/core"
import { Context, Effect, Layer, Ref } from "effect"

/**
 * What the recorder saw, and how it answers.
 *
 * @since 0.1.0
 */
export class WebhookRecorder extends Context.Service<
  WebhookRecorder,
  {
    readonly requests: Effect.Effect<ReadonlyArray<Ports.WebhookRequest>>
    /** Sets the answer for the following requests: a status, or a transport failure. */
    readonly answer: (f: (request: Ports.WebhookRequest) => number | Ports.WebhookTransportError) => Effect.Effect<void>
  }
>()("@recur/testing/WebhookRecorder") {}

/**
 * The recorder as both `WebhookTransport` and `WebhookRecorder`.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Ports.WebhookTransport | WebhookRecorder> = Layer.effectContext(
  Effect.gen(function* () {
    const seen = yield* Ref.make<ReadonlyArray<Ports.WebhookRequest>>([])
    const answer = yield* Ref.make<(request: Ports.WebhookRequest) => number | Ports.WebhookTransportError>(() => 200)
    return Context.make(Ports.WebhookTransport, {
      send: (request) =>
        Effect.gen(function* () {
          yield* Ref.update(seen, (all) => [...all, request])
          const result = (yield* Ref.get(answer))(request)
          return typeof result === "number" ? { status: result } : yield* Effect.fail(result)
        })
    }).pipe(Context.add(WebhookRecorder, { requests: Ref.get(seen), answer: (f) => Ref.set(answer, f) }))
  })
)
