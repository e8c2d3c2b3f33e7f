/**
 * Webhook delivery rules as data and pure functions: the retry schedule and the two signature
 * schemes (Recur's `X-Signature` under the merchant's API key, and Standard Webhooks under the
 * endpoint's `whsec_` secret).
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import * as Secrets from "../tenants/Secrets.js"

/**
 * The delivery policy of the contract: a 2xx within 10 s is success; otherwise retry after
 * 1 min, doubling, capped at 4 h between tries, at most 16 retries within 48 h of the first
 * attempt; then `failed`.
 *
 * @since 0.1.0
 */
export const policy = {
  timeoutMs: 10_000,
  firstRetryMs: 60_000,
  maxDelayMs: 4 * 60 * 60_000,
  maxRetries: 16,
  windowMs: 48 * 60 * 60_000
} as const

/**
 * The wait before retry number `retry` (1-based): 1 min, 2, 4, … capped at 4 h.
 *
 * @example
 * retryDelay(1) // 60_000
 * retryDelay(9) // 14_400_000 (4 h; 256 min would exceed the cap)
 * @since 0.1.0
 */
export const retryDelay = (retry: number): number =>
  Math.min(policy.firstRetryMs * 2 ** Math.max(0, retry - 1), policy.maxDelayMs)

/**
 * When to try again after `attemptsMade` attempts (the first one included) that all failed,
 * the last at `now` and the first at `firstAttemptAt`; `None` when the delivery has failed for
 * good (16 retries used, or the next would fall outside the 48 h window).
 *
 * @since 0.1.0
 */
export const nextRetryAt = (attemptsMade: number, firstAttemptAt: number, now: number): Option.Option<number> => {
  const retry = attemptsMade // the retry about to be scheduled: attempt 1 failed → retry 1
  if (retry > policy.maxRetries) return Option.none()
  const at = now + retryDelay(retry)
  return at - firstAttemptAt > policy.windowMs ? Option.none() : Option.some(at)
}

/**
 * Whether an HTTP status counts as delivered.
 *
 * @since 0.1.0
 */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300

/**
 * The signing inputs of one delivery attempt.
 *
 * @since 0.1.0
 */
export interface SignInput {
  readonly body: string
  readonly eventId: string
  readonly eventType: string
  /** Unix milliseconds of this attempt (real time, so receivers' tolerance checks work). */
  readonly timestampMs: number
  /** The merchant's current API key, and the previous one during a rotation's grace. */
  readonly keys: { readonly current: Option.Option<string>; readonly previous: Option.Option<string> }
  /** The endpoint's `whsec_…` secret. */
  readonly endpointSecret: string
}

/**
 * Lowercase hex HMAC-SHA256 over `"<timestampMs>.<body>"` keyed with `key` (`X-Signature`).
 *
 * @since 0.1.0
 */
export const recurSignature = (key: string, timestampMs: number, body: string): Effect.Effect<string> =>
  Effect.map(Secrets.hmacSha256(key, `${timestampMs}.${body}`), Secrets.toHex)

/**
 * Standard Webhooks `v1,<base64 HMAC-SHA256 over "<id>.<seconds>.<body>">`, keyed with the
 * base64 bytes after `whsec_`.
 *
 * @since 0.1.0
 */
export const standardSignature = (
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string
): Effect.Effect<string> =>
  Effect.map(
    Secrets.hmacSha256(Secrets.fromBase64(secret.replace(/^whsec_/, "")), `${id}.${timestampSeconds}.${body}`),
    (mac) => `v1,${Secrets.toBase64(mac)}`
  )

/**
 * Every header of one attempt: content type, `X-Timestamp`, `X-Event-Id`, `X-Event-Type`,
 * `X-Signature` (+ `X-Signature-Previous` during a key rotation), and `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`.
 *
 * @since 0.1.0
 */
export const headers = (input: SignInput): Effect.Effect<Record<string, string>> =>
  Effect.gen(function* () {
    const seconds = Math.floor(input.timestampMs / 1000)
    const out: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "Recur-Webhooks/0.1",
      "x-timestamp": String(input.timestampMs),
      "x-event-id": input.eventId,
      "x-event-type": input.eventType,
      "webhook-id": input.eventId,
      "webhook-timestamp": String(seconds),
      "webhook-signature": yield* standardSignature(input.endpointSecret, input.eventId, seconds, input.body)
    }
    if (Option.isSome(input.keys.current))
      out["x-signature"] = yield* recurSignature(input.keys.current.value, input.timestampMs, input.body)
    if (Option.isSome(input.keys.previous))
      out["x-signature-previous"] = yield* recurSignature(input.keys.previous.value, input.timestampMs, input.body)
    return out
  })
