/**
 * The email adapter of the `Notifier` port: customer notifications sent over SMTP with
 * nodemailer, one pooled connection per layer, closed with it.
 *
 * @example
 * const billing = await createBilling({ notifications: { smtp: { url: "smtps://user:pass@smtp.example.com" } } })
 * @since 0.1.0
 */
import { Ports } from "@recur/core"
import { Effect, Layer } from "effect"
import nodemailer from "nodemailer"

/**
 * Where and how to reach the SMTP server: a URL (`smtp://host:587`, `smtps://user:pass@host:465`)
 * or its parts. Credentials are never logged.
 *
 * @since 0.1.0
 */
export interface SmtpOptions {
  readonly url?: string | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  /** TLS from the start (port 465); otherwise STARTTLS when the server offers it. */
  readonly secure?: boolean | undefined
  readonly auth?: { readonly user: string; readonly pass: string } | undefined
  /** Give up on a connection, greeting or answer after this long. Default 30 s. */
  readonly timeoutMs?: number | undefined
  /** Refuse a server whose certificate does not verify (default true; `false` for a test server). */
  readonly rejectUnauthorized?: boolean | undefined
}

/** Why the server did not take a message: a permanent refusal (5xx) or anything else. */
const errorOf = (e: unknown): Ports.NotifierError => {
  const err = e as { readonly responseCode?: number; readonly code?: string; readonly message?: string }
  const permanent = typeof err.responseCode === "number" && err.responseCode >= 500 && err.responseCode < 600
  // the server's answer or the error's code, never the connection options (which hold the password)
  const message =
    typeof err.responseCode === "number"
      ? `SMTP ${err.responseCode}: ${String(err.message ?? "").slice(0, 200)}`
      : `${err.code ?? "error"}: ${String(err.message ?? "").slice(0, 200)}`
  return new Ports.NotifierError({ reason: permanent ? "rejected" : "unavailable", message })
}

/**
 * The SMTP notifier as a layer.
 *
 * @since 0.1.0
 */
export const layer = (options: SmtpOptions): Layer.Layer<Ports.Notifier> =>
  Layer.effect(
    Ports.Notifier,
    Effect.gen(function* () {
      const timeout = options.timeoutMs ?? 30_000
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          nodemailer.createTransport({
            ...(options.url !== undefined ? { url: options.url } : {}),
            ...(options.host !== undefined ? { host: options.host } : {}),
            ...(options.port !== undefined ? { port: options.port } : {}),
            ...(options.secure !== undefined ? { secure: options.secure } : {}),
            ...(options.auth !== undefined ? { auth: { user: options.auth.user, pass: options.auth.pass } } : {}),
            pool: true,
            maxConnections: 2,
            connectionTimeout: timeout,
            greetingTimeout: timeout,
            socketTimeout: timeout,
            tls: { rejectUnauthorized: options.rejectUnauthorized ?? true },
            logger: false,
            debug: false
          } as Parameters<typeof nodemailer.createTransport>[0])
        ),
        (t) => Effect.sync(() => t.close())
      )
      return {
        send: (message: Ports.OutgoingMessage) =>
          Effect.tryPromise({
            try: () =>
              transport.sendMail({
                messageId: message.messageId,
                from: message.from,
                ...(message.replyTo !== null ? { replyTo: message.replyTo } : {}),
                to: message.to,
                subject: message.subject,
                text: message.text,
                html: message.html,
                headers: { "Content-Language": message.language, "Auto-Submitted": "auto-generated" }
              }),
            catch: errorOf
          }).pipe(Effect.asVoid)
      }
    })
  )
