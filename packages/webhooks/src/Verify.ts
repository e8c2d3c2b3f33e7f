/**
 * Verifying Recur's webhooks in a merchant's receiver (Node). No Effect needed: plain
 * functions over the raw body and the request headers.
 *
 * ```ts
 * import { verifyWebhook } from "@recur/webhooks/verify"
 * const result = verifyWebhook({ body: rawBody, headers: req.headers, keys: [process.env.RECUR_API_KEY!] })
 * if (!result.ok) return res.writeHead(400).end(result.reason)
 * handle(result.event)
 * ```
 *
 * @since 0.1.0
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * Headers as Node (`IncomingHttpHeaders`), the Fetch API (`Headers`) or a plain record give them.
 *
 * @since 0.1.0
 */
export type HeadersLike =
  | { readonly get: (name: string) => string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * A verified event: `{id, type, created, sequence, data}`.
 *
 * @since 0.1.0
 */
export interface WebhookEvent {
  readonly id: string
  readonly type: string
  readonly created: string
  readonly sequence: number
  readonly data: any
}

/**
 * The outcome of a verification.
 *
 * @since 0.1.0
 */
export type VerifyResult =
  | { readonly ok: true; readonly event: WebhookEvent }
  | {
      readonly ok: false
      readonly reason: "missing_header" | "timestamp_outside_tolerance" | "signature_mismatch" | "invalid_body"
    }

const header = (headers: HeadersLike, name: string): string | undefined => {
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get: (n: string) => string | null }).get(name) ?? undefined
  const record = headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : (value as string | undefined)
}

const text = (body: string | Uint8Array) => (typeof body === "string" ? body : Buffer.from(body).toString("utf8"))

const equal = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

const parse = (body: string): VerifyResult => {
  try {
    return { ok: true, event: JSON.parse(body) as WebhookEvent }
  } catch {
    return { ok: false, reason: "invalid_body" }
  }
}

/**
 * Verifies Recur's own scheme: `X-Signature` (or, during a key rotation, `X-Signature-Previous`)
 * must equal the hex HMAC-SHA256 of `"<X-Timestamp>.<raw body>"` under one of `keys` (your
 * current API key, and the previous one while a rotation's grace lasts), and `X-Timestamp`
 * (Unix ms) must be within `toleranceMs` (default 5 minutes) of `now`.
 *
 * @since 0.1.0
 */
export const verifyWebhook = (input: {
  readonly body: string | Uint8Array
  readonly headers: HeadersLike
  readonly keys: string | ReadonlyArray<string>
  readonly toleranceMs?: number
  readonly now?: number
}): VerifyResult => {
  const timestamp = header(input.headers, "x-timestamp")
  const signatures = [header(input.headers, "x-signature"), header(input.headers, "x-signature-previous")].filter(
    (s): s is string => s !== undefined
  )
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: "missing_header" }
  const ts = Number(timestamp)
  if (!/^\d+$/.test(timestamp) || Math.abs((input.now ?? Date.now()) - ts) > (input.toleranceMs ?? 300_000))
    return { ok: false, reason: "timestamp_outside_tolerance" }
  const body = text(input.body)
  const keys = typeof input.keys === "string" ? [input.keys] : input.keys
  const matches = keys.some((key) => {
    const expected = createHmac("sha256", key).update(`${timestamp}.${body}`).digest("hex")
    return signatures.some((s) => equal(s, expected))
  })
  return matches ? parse(body) : { ok: false, reason: "signature_mismatch" }
}

/**
 * Verifies the Standard Webhooks headers (`webhook-id`, `webhook-timestamp` in seconds,
 * `webhook-signature` = space-separated `v1,<base64>`) under the endpoint's `whsec_` secret(s).
 *
 * @since 0.1.0
 */
export const verifyStandardWebhook = (input: {
  readonly body: string | Uint8Array
  readonly headers: HeadersLike
  readonly secret: string | ReadonlyArray<string>
  readonly toleranceMs?: number
  readonly now?: number
}): VerifyResult => {
  const id = header(input.headers, "webhook-id")
  const timestamp = header(input.headers, "webhook-timestamp")
  const signature = header(input.headers, "webhook-signature")
  if (id === undefined || timestamp === undefined || signature === undefined)
    return { ok: false, reason: "missing_header" }
  if (
    !/^\d+$/.test(timestamp) ||
    Math.abs((input.now ?? Date.now()) - Number(timestamp) * 1000) > (input.toleranceMs ?? 300_000)
  )
    return { ok: false, reason: "timestamp_outside_tolerance" }
  const body = text(input.body)
  const given = signature
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => s.slice(3))
  const secrets = typeof input.secret === "string" ? [input.secret] : input.secret
  const matches = secrets.some((secret) => {
    const expected = createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
      .update(`${id}.${timestamp}.${body}`)
      .digest("base64")
    return given.some((g) => equal(g, expected))
  })
  return matches ? parse(body) : { ok: false, reason: "signature_mismatch" }
}
