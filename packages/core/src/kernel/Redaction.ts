/**
 * What never reaches a log: the signature part of invoice and portal links (they never expire,
 * so a logged link is a working link), Stripe client secrets, API keys and processor keys,
 * webhook signing secrets, and bearer tokens. {@link redact} replaces each with `[redacted]`,
 * keeping what identifies the request (the route, the invoice or session id, a key's kind);
 * {@link logger} is the logger that writes every log line through it (the server's and the
 * facade's), and the REST adapter's access log writes its paths through it.
 *
 * @since 0.1.0
 */
import { type Layer, Logger } from "effect"

const REDACTED = "[redacted]"

/** Each secret's shape, and what of it stays. */
const rules: ReadonlyArray<readonly [RegExp, string]> = [
  // `/invoice/<id>/<signature>…` and `/portal/<id>/<signature>…`, under any mount prefix (the
  // merchant API's own invoice route, under its version prefix, has no signature)
  [/(?<!\/api\/v\d)(\/(?:invoice|portal)\/[A-Za-z0-9_]+\/)[^/?#\s"'<>&]+/g, `$1${REDACTED}`],
  // Stripe's client secrets (`pi_…_secret_…`, `seti_…_secret_…`, `cs_…_secret_…`)
  [/\b((?:pi|seti|cs|src)_[A-Za-z0-9]+_secret_)[A-Za-z0-9]+/g, `$1${REDACTED}`],
  // a secret in a query string
  [/([?&](?:[a-z_]*client_secret|token|signature|secret|api_key|key)=)[^&#\s"'<>]+/gi, `$1${REDACTED}`],
  // Recur's and Stripe's secret and restricted keys
  [/\b((?:sk|rk)_(?:test|live)_)[A-Za-z0-9]+/g, `$1${REDACTED}`],
  // webhook signing secrets (Recur's endpoints' and Stripe's)
  [/\bwhsec_[A-Za-z0-9+/=_-]+/g, `whsec_${REDACTED}`],
  // credentials in an Authorization header
  [/\b(Bearer|Basic)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`]
]

/**
 * `text` with every secret it shows replaced by `[redacted]`.
 *
 * @example
 * redact("/invoice/inv_01j…/kq3…Zx/pdf") // "/invoice/inv_01j…/[redacted]/pdf"
 * @since 0.1.0
 */
export const redact = (text: string): string => {
  let out = text
  for (const [pattern, replacement] of rules) out = out.replace(pattern, replacement)
  return out
}

/**
 * A logger writing each line (message, cause, spans and annotations, as logfmt) to the console
 * with every secret redacted.
 *
 * @since 0.1.0
 */
export const logger: Logger.Logger<unknown, void> = Logger.withConsoleLog(Logger.map(Logger.formatLogFmt, redact))

/**
 * {@link logger} in place of the default logger.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<never> = Logger.layer([logger])

/**
 * {@link logger} as JSON: one object per line (`message`, `level`, `timestamp`, `annotations`,
 * `spans`, `cause`, `fiberId`), every secret redacted.
 *
 * @since 0.1.0
 */
export const jsonLogger: Logger.Logger<unknown, void> = Logger.withConsoleLog(Logger.map(Logger.formatJson, redact))
