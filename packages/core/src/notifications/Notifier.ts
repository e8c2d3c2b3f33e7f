/**
 * The notifier port (re-exported by `Ports`): sends one rendered message. `@recur/embedded`
 * provides an SMTP adapter (`SmtpNotifier`, on nodemailer); {@link recording} keeps the messages
 * in memory for tests.
 *
 * @since 0.1.0
 */
import { Context, Data, Effect, Layer } from "effect"

/**
 * One message as the notifier sends it: HTML with a plain-text part, no external asset.
 *
 * @since 0.1.0
 */
export interface OutgoingMessage {
  /** Stable per notification (`<ntf_…@recur>`): a message sent twice is recognisably the same one. */
  readonly messageId: string
  readonly from: string
  readonly replyTo: string | null
  readonly to: string
  readonly subject: string
  readonly html: string
  readonly text: string
  /** `Content-Language`. */
  readonly language: string
}

/**
 * Why a message was not accepted: `rejected` (the server refused it: retrying will not help
 * unless something changes) or `unavailable` (no answer, a temporary refusal).
 *
 * @since 0.1.0
 */
export class NotifierError extends Data.TaggedError("NotifierError")<{
  readonly reason: "rejected" | "unavailable"
  readonly message: string
}> {}

/**
 * Sends rendered messages to customers.
 *
 * @since 0.1.0
 */
export class Notifier extends Context.Service<
  Notifier,
  { readonly send: (message: OutgoingMessage) => Effect.Effect<void, NotifierError> }
>()("@recur/core/Notifier") {}

/**
 * A notifier that keeps every message in `sent` (and fails while `failing()` says so): for
 * tests and sandboxes.
 *
 * @since 0.1.0
 */
export const recording = (sent: Array<OutgoingMessage>, failing: () => boolean = () => false): Layer.Layer<Notifier> =>
  Layer.succeed(Notifier, {
    send: (message) =>
      failing()
        ? Effect.fail(new NotifierError({ reason: "unavailable", message: "recording notifier told to fail" }))
        : Effect.sync(() => {
            sent.push(message)
          })
  })
