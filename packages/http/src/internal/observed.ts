// What the request log learns of a request while it runs: the route that matched (its template)
// and the authenticated merchant. Keyed by the request's underlying source object, which the
// router's re-wrapping keeps (as in authMemo.ts).
import type { HttpServerRequest } from "effect/http"

interface Observed {
  route?: string
  merchantId?: string
}

const observed = new WeakMap<object, Observed>()

const sourceOf = (request: HttpServerRequest.HttpServerRequest): object | undefined =>
  typeof request.source === "object" && request.source !== null ? request.source : undefined

const entry = (request: HttpServerRequest.HttpServerRequest): Observed | undefined => {
  const source = sourceOf(request)
  if (source === undefined) return undefined
  let found = observed.get(source)
  if (found === undefined) {
    found = {}
    observed.set(source, found)
  }
  return found
}

export const noteRoute = (request: HttpServerRequest.HttpServerRequest, route: string): void => {
  const e = entry(request)
  if (e) e.route = route
}

export const noteMerchant = (request: HttpServerRequest.HttpServerRequest, merchantId: string): void => {
  const e = entry(request)
  if (e) e.merchantId = merchantId
}

export const of = (request: HttpServerRequest.HttpServerRequest): Readonly<Observed> => {
  const source = sourceOf(request)
  return (source && observed.get(source)) ?? {}
}

// ------------------------------------------------------------------ the request's id
// `Request-Id` is the client's idempotency key; every error envelope and the request's log line
// carry it as `request_id`. A request without a usable one (absent, empty, over 255 characters or
// not printable) gets an id of the server's, `req_` and 24 hex digits, made once per request and
// used for the envelope and the log line only: it never becomes an idempotency key.

const REQUEST_ID = /^[\x21-\x7e][\x20-\x7e]{0,254}$/
const generated = new WeakMap<object, string>()

/** A new id of the server's for a request without a usable `Request-Id`: `req_` and 24 hex digits. */
export const newRequestId = (): string => `req_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`

/**
 * The id an envelope names a request by, from its raw `Request-Id` header: that header when it is
 * one, else a new id of the server's (for answers outside the app, e.g. a mount's own 500).
 */
export const requestIdFromHeader = (sent: string | undefined): string =>
  sent !== undefined && REQUEST_ID.test(sent) ? sent : newRequestId()

/** The client's `Request-Id` when it is one (1 to 255 printable characters), else undefined. */
export const clientRequestId = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const sent = request.headers["request-id"]
  return sent !== undefined && REQUEST_ID.test(sent) ? sent : undefined
}

/** The id that names this request in its envelope and its log line (see above). */
export const requestIdOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const sent = clientRequestId(request)
  if (sent !== undefined) return sent
  const source = sourceOf(request)
  const known = source && generated.get(source)
  if (known) return known
  const made = newRequestId()
  if (source) generated.set(source, made)
  return made
}
