/**
 * Recur's REST API as a Hono handler, with each request's client address:
 *
 * @example
 * import { recurHono } from "@recur/http/hono"
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, publicUrl: "http://localhost:3000/billing" })
 * const recur = await recurHono(billing, { prefix: "/billing" })
 * recur.register(app) // or app.all("/billing/*", recur.handler)
 *
 * The client address (the card-testing guard of the pay routes counts per client) is read from
 * the runtime Hono runs on — `@hono/node-server` (`c.env.incoming`), Bun (`c.env.requestIP`),
 * Deno (`c.env.remoteAddr`) — or from the `clientAddress` option. A body a middleware already read
 * through `c.req` (`c.req.text()`, `c.req.json()`, `c.req.arrayBuffer()`, `c.req.parseBody()` on a
 * form) is taken from Hono's cache; one read from `c.req.raw` and kept nowhere is answered 400
 * `invalid_request_error` saying so.
 *
 * Only Hono's types are imported: `@recur/http` installs and runs without Hono.
 *
 * @since 0.1.0
 */
import type { Context, Hono } from "hono"
import * as Bridge from "./internal/nodeBridge.js"
import { below, normalisePrefix } from "./internal/mountPath.js"
import * as Mount from "./Mount.js"

/**
 * Options of {@link recurHono}.
 *
 * @since 0.1.0
 */
export interface RecurHonoOptions extends Mount.MountOptions {
  /**
   * The request's client address, when the runtime is not one the handler knows (for instance
   * `(c) => getConnInfo(c).remote.address` with the runtime's `getConnInfo`).
   */
  readonly clientAddress?: (c: Context) => string | undefined
}

/**
 * A mounted API for Hono.
 *
 * @since 0.1.0
 */
export interface HonoMount {
  /** Answers one request routed to it (`app.all("/billing/*", recur.handler)`). */
  readonly handler: (c: Context) => Promise<Response>
  /** Routes the prefix and everything below it, any method, to {@link HonoMount.handler}. */
  readonly register: (app: Hono<any, any, any>) => void
  /** Stops the API's own resources (not the engine: close the facade for that). */
  readonly close: () => Promise<void>
}

/** The connection's peer on the runtimes Hono runs on, as their `getConnInfo` reads it. */
const runtimeAddress = (c: Context): string | undefined => {
  const env = c.env as
    | {
        incoming?: { socket?: { remoteAddress?: string } }
        requestIP?: (request: Request) => { address?: string } | null
        remoteAddr?: { hostname?: string }
      }
    | undefined
  if (env === undefined || env === null || typeof env !== "object") return undefined
  return (
    env.incoming?.socket?.remoteAddress ??
    (typeof env.requestIP === "function" ? (env.requestIP(c.req.raw)?.address ?? undefined) : undefined) ??
    env.remoteAddr?.hostname
  )
}

const withBody = (raw: Request, bytes: Uint8Array): Request => {
  const headers = new Headers(raw.headers)
  headers.set("content-length", String(bytes.byteLength))
  headers.delete("transfer-encoding")
  return new Request(raw.url, { method: raw.method, headers, body: bytes })
}

/** The request for Recur: the raw one, or — its body used by a middleware — rebuilt from Hono's cache. */
const requestOf = async (c: Context, prefix: string): Promise<Request | { readonly consumed: string }> => {
  const raw = c.req.raw
  if (!raw.bodyUsed) return raw
  // Hono keeps the promises of what it read (typed as their values)
  const cache = c.req.bodyCache as unknown as Partial<
    Record<"arrayBuffer" | "text" | "blob" | "json" | "formData", Promise<any>>
  >
  if (cache.arrayBuffer) return withBody(raw, new Uint8Array(await cache.arrayBuffer))
  if (cache.text) return withBody(raw, new TextEncoder().encode(await cache.text))
  if (cache.blob) return withBody(raw, new Uint8Array(await (await cache.blob).arrayBuffer()))
  const path = below(prefix, new URL(raw.url).pathname) ?? "/"
  const contentType = raw.headers.get("content-type") ?? ""
  const source =
    cache.json !== undefined
      ? Bridge.parsedOnly(await cache.json, path, contentType)
      : cache.formData !== undefined && /x-www-form-urlencoded/i.test(contentType)
        ? Bridge.parsedOnly(formObject((await cache.formData) as FormData), path, contentType)
        : undefined
  if (source === undefined)
    return { consumed: Bridge.consumedReason("the Request's body had been used, and Hono kept no copy of it") }
  if (source._tag === "Consumed") return { consumed: source.reason }
  return source._tag === "Bytes" ? withBody(raw, source.bytes) : raw
}

const formObject = (form: FormData): Record<string, Array<string>> => {
  const out: Record<string, Array<string>> = {}
  for (const [k, v] of form.entries()) {
    const values = out[k] ?? []
    values.push(typeof v === "string" ? v : v.name)
    out[k] = values
  }
  return out
}

/**
 * The API as a Hono handler, over the engine of `billing`: `recur.register(app)` routes the
 * prefix to it.
 *
 * @since 0.1.0
 */
export const recurHono = async (billing: Mount.EngineSource, options: RecurHonoOptions = {}): Promise<HonoMount> => {
  const { clientAddress, ...mountOptions } = options
  const mount = await Mount.fetchHandler(billing, mountOptions)
  const prefix = normalisePrefix(options.prefix)
  const handler = async (c: Context): Promise<Response> => {
    const request = await requestOf(c, prefix)
    if (!(request instanceof Request)) return Bridge.consumedAnswer(request.consumed, c.req.header("request-id"))
    return mount.fetch(request, { remoteAddress: (clientAddress ?? runtimeAddress)(c) })
  }
  return {
    handler,
    register: (app) => {
      app.all(prefix === "" ? "/" : prefix, handler)
      app.all(`${prefix}/*`, handler)
    },
    close: mount.close
  }
}
