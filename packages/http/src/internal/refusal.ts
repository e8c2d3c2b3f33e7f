// Why a request is refused before any handler sees it (see `refusal`): the checks no schema
// makes, moved out of Http.ts unchanged.
import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, type HttpServerRequest } from "effect/http"
import * as BodyChecks from "./bodyChecks.js"

/** The path of a request URL (a server gives the path, a web handler the whole URL). */
export const pathOf = (url: string): string => {
  if (url.startsWith("/")) {
    const q = url.indexOf("?")
    return q === -1 ? url : url.slice(0, q)
  }
  return new URL(url).pathname
}

const decodes = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return text
  }
}

/** A `.` or `..` path segment, literal or percent-encoded (as the URL standard reads them). */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i

/** Whether a raw request path (no query) holds a `.` or `..` segment, which Recur refuses (400). */
export const hasDotSegment = (path: string): boolean => DOT_SEGMENT.test(path)

/** The message of that refusal. */
export const dotSegmentMessage = "A path segment must not be `.` or `..`."

type Refusal = readonly [status: 400 | 413 | 415, code: string, message: string, param?: string]

const isJson = (contentType: string) => /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType.trim())

/**
 * Why a request is refused before any handler sees it, or undefined: a NUL character (which no
 * text Recur stores may hold), a body over the size limit (413, refused from its
 * `Content-Length` before reading, or while reading), a body on an API route that is not JSON
 * (415: a multipart or form upload is never parsed), JSON that does not parse, nests too deep,
 * or holds an over-long or malformed string (400, naming the field).
 */
export const refusal = (request: HttpServerRequest.HttpServerRequest, maxBodyBytes: number) =>
  Effect.gen(function* () {
    const [path, query = ""] = request.url.split("?", 2) as [string, string | undefined]
    const nul = "Text must not contain the NUL character (U+0000)."
    if (decodes(path).includes("\u0000")) return [400, "InvalidParameter", nul, "path"] as Refusal
    if (decodes(query).includes("\u0000")) return [400, "InvalidParameter", nul, "query"] as Refusal
    // a raw `.` or `..` segment (a client that does not normalise its URL, `curl --path-as-is`):
    // refused, never resolved against the path, so `/customer/..` is not another route
    if (hasDotSegment(path)) return [400, "InvalidParameter", dotSegmentMessage, "path"] as Refusal
    if (request.method !== "POST" && request.method !== "PUT" && request.method !== "PATCH") return undefined
    const tooLarge: Refusal = [413, "payload_too_large", `The request body is larger than ${maxBodyBytes} bytes.`]
    const length = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(length) && length > maxBodyBytes) return tooLarge
    const contentType = request.headers["content-type"] ?? ""
    const api = pathOf(request.url).startsWith("/api/")
    if (api && contentType !== "" && !isJson(contentType))
      return [
        415,
        "unsupported_media_type",
        "The request body must be JSON (Content-Type: application/json)."
      ] as Refusal
    const read = yield* request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
      Effect.map((text) => ({ text, tooLarge: false })),
      Effect.catch((e) =>
        Effect.succeed({
          text: "",
          tooLarge: e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge"
        })
      )
    )
    if (read.tooLarge) return tooLarge
    const body = read.text
    if (body.includes("\u0000") || /\\u0000/i.test(body)) {
      // the field that holds it, when the body is JSON (a raw NUL is not: then the body)
      let param = "body"
      try {
        param = BodyChecks.nulPathOf(JSON.parse(body)) || "body"
      } catch {}
      return [400, "InvalidParameter", nul, param] as Refusal
    }
    if (body.trim() === "" || !(api || isJson(contentType))) return undefined
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return [400, "invalid_request_error", "The request body could not be read as JSON."] as Refusal
    }
    const problem = BodyChecks.inspect(parsed)
    return problem ? ([400, "InvalidParameter", problem.message, problem.param] as Refusal) : undefined
  })
