// From a node:http request (as node:http, Express or Fastify hand it over) to a fetch `Request`,
// and from the API's `Response` back to a node:http response; and what to do with a body some
// middleware of the host has already read. Shared by `Mount.nodeHandler` and the framework glue
// (`@recur/http/express`, `/fastify`, `/node`).
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import * as Observed from "./observed.js"

/**
 * A node:http request as frameworks leave it: `body` and `_body` from Express's body parsers
 * (`_body` says a parser read the stream), `rawBody` from the raw-body helpers (`keepRawBody`,
 * fastify-raw-body, body-parser's `verify` storing the bytes).
 */
export type NodeRequest = IncomingMessage & { body?: unknown; _body?: boolean; rawBody?: unknown }

/** Where the API reads a request's body from. */
export type BodySource =
  | { readonly _tag: "None" }
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array }
  | { readonly _tag: "Stream"; readonly stream: Readable }
  | { readonly _tag: "Consumed"; readonly reason: string }

/** The paths whose body is checked against a signature over its exact bytes. */
export const signedBody = (path: string): boolean => path.startsWith("/webhooks/")

const hasBody = (method: string) => method !== "GET" && method !== "HEAD"

/** The request announced a body (a length over 0, or chunks). */
export const announcesBody = (headers: IncomingMessage["headers"]): boolean =>
  headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? "0") > 0

/** Bytes the host kept of the body, exactly as they came, or undefined. */
export const rawBytes = (raw: unknown): Uint8Array | undefined =>
  raw instanceof Uint8Array ? raw : typeof raw === "string" ? Buffer.from(raw) : undefined

/** A parsed form or JSON value as bytes again, in the request's own media type. */
export const reserialise = (body: unknown, contentType: string): Uint8Array => {
  if (/application\/x-www-form-urlencoded/i.test(contentType) && typeof body === "object" && body !== null) {
    const form = new URLSearchParams()
    for (const [k, v] of Object.entries(body)) {
      for (const item of Array.isArray(v) ? v : [v]) form.append(k, String(item))
    }
    return Buffer.from(form.toString())
  }
  return Buffer.from(JSON.stringify(body))
}

/** What a read-and-lost body is told: which middleware and how to mount instead. */
export const consumedReason = (what: string): string =>
  `The request body was read before it reached Recur (${what}) and no copy of it was kept, so Recur cannot read it. Mount Recur before the host's body parsers, or keep the raw body for it (req.rawBody; see @recur/http's README).`

const lostSignature =
  "The webhook's body was parsed by a middleware before it reached Recur and its exact bytes were not kept, so its signature cannot be checked. Mount Recur before the host's body parsers, or keep the raw body (express.json({ verify: keepRawBody }) from @recur/http/express)."

/**
 * Where the body of `req` is: bytes a raw-body helper kept; a body a parser read (re-serialised:
 * its limits are checked again by Recur; on a signed webhook, lost); the stream, unread; or gone
 * (read by a middleware that kept nothing: stream ended or partly read, no parsed body).
 */
export const nodeBody = (req: NodeRequest, path: string): BodySource => {
  const method = req.method ?? "GET"
  if (!hasBody(method)) return { _tag: "None" }
  const raw = rawBytes(req.rawBody)
  if (raw !== undefined) return { _tag: "Bytes", bytes: raw }
  const read = req._body === true || req.readableEnded || req.readableDidRead === true
  if (!read && !req.destroyed) return { _tag: "Stream", stream: req }
  if (req.body !== undefined && (req._body === true || req.readableEnded)) {
    const exact = rawBytes(req.body)
    if (exact !== undefined) return { _tag: "Bytes", bytes: exact }
    if (signedBody(path)) return { _tag: "Consumed", reason: lostSignature }
    return { _tag: "Bytes", bytes: reserialise(req.body, String(req.headers["content-type"] ?? "")) }
  }
  if (!announcesBody(req.headers)) return { _tag: "None" }
  return {
    _tag: "Consumed",
    reason: consumedReason(
      req.readableEnded ? "its stream had ended, with no parsed body left" : "its stream had been partly read"
    )
  }
}

/** A body source whose body was read by the host's parsers and kept in a parsed form only. */
export const parsedOnly = (body: unknown, path: string, contentType: string): BodySource => {
  const exact = rawBytes(body)
  if (exact !== undefined) return { _tag: "Bytes", bytes: exact }
  if (signedBody(path)) return { _tag: "Consumed", reason: lostSignature }
  return { _tag: "Bytes", bytes: reserialise(body, contentType) }
}

/** The headers of a node:http request as fetch `Headers`. */
export const headersOf = (req: IncomingMessage): Headers => {
  const headers = new Headers()
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") headers.set(k, v)
    else if (Array.isArray(v)) for (const item of v) headers.append(k, item)
  }
  return headers
}

/** The fetch `Request` of a node:http request, at `path` (the path below the mount). */
export const toRequest = (req: IncomingMessage, path: string, body: BodySource): Request => {
  const url = new URL(path, `http://${req.headers.host ?? "localhost"}`)
  const headers = headersOf(req)
  const method = req.method ?? "GET"
  if (body._tag === "Bytes") {
    headers.set("content-length", String(body.bytes.byteLength))
    headers.delete("transfer-encoding")
  }
  return new Request(url, {
    method,
    headers,
    ...(body._tag === "Bytes"
      ? { body: body.bytes }
      : body._tag === "Stream"
        ? { body: Readable.toWeb(body.stream) as ReadableStream<Uint8Array>, duplex: "half" }
        : {})
  } as RequestInit)
}

/**
 * The answer to a request whose body is gone: the API's envelope, 400 `invalid_request_error`,
 * saying why (never a hang on a stream nobody will fill, never a 500).
 */
export const consumedAnswer = (reason: string, requestId: string | undefined): Response =>
  new Response(
    JSON.stringify({
      code: "invalid_request_error",
      message: reason,
      data: { request_id: requestId ?? "", param: "body" }
    }),
    { status: 400, headers: { "content-type": "application/json", "cache-control": "no-store" } }
  )

/**
 * The 400 of a raw path with a `.` or `..` segment (`curl --path-as-is`), answered before the
 * path becomes a URL (which would resolve the segment away and reach another route).
 */
export const dotSegmentAnswer = (message: string, requestId: string | undefined): Response =>
  new Response(
    JSON.stringify({ code: "InvalidParameter", message, data: { request_id: requestId ?? "", param: "path" } }),
    { status: 400, headers: { "content-type": "application/json", "cache-control": "no-store" } }
  )

/** The headers of a fetch `Response` for node:http (each `Set-Cookie` kept apart). */
export const responseHeaders = (response: Response): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = {}
  response.headers.forEach((value, key) => {
    if (key === "set-cookie") return
    out[key] = value
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) out["set-cookie"] = cookies
  return out
}

/** Writes a fetch `Response` to a node:http response. */
export const send = async (res: ServerResponse, response: Response, method: string): Promise<void> => {
  res.writeHead(response.status, responseHeaders(response))
  if (response.body === null || method === "HEAD") {
    res.end()
    return
  }
  for await (const chunk of Readable.fromWeb(response.body as never)) res.write(chunk)
  res.end()
}

/**
 * The API's 500 envelope, for a failure of the bridge itself: it carries the client's
 * `Request-Id`, else an id of the server's (the request never reached the app).
 */
export const failed = (req: IncomingMessage, res: ServerResponse): void => {
  if (!res.headersSent) {
    res.writeHead(500, { "content-type": "application/json" })
    const sent = req.headers["request-id"]
    const requestId = Observed.requestIdFromHeader(typeof sent === "string" ? sent : undefined)
    res.end(
      JSON.stringify({
        code: "system_error",
        message: "Recur could not answer the request",
        data: { request_id: requestId }
      })
    )
  } else res.destroy()
}
