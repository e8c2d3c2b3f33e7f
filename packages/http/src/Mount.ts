/**
 * Mounting the REST API in a host's own server, over the same engine as the host's Promise
 * facade (`@recur/embedded`'s `createBilling`): one engine instance per process, whatever the
 * framework.
 *
 * - {@link fetchHandler}: `Request => Promise<Response>` for Hono, Bun, Deno, Next.js route
 *   handlers and any other fetch-style server.
 * - {@link nodeHandler}: `(req, res, next?)` for node:http, Express (also behind `express.json()`
 *   or `express.urlencoded()`: an already-parsed body is re-serialised) and Fastify (through
 *   `reply.hijack()`; see `examples/mount-fastify`).
 *
 * The card-testing guard of the hosted pay routes counts attempts per client address: the node
 * handler passes each request's TCP peer, a fetch-style host passes it as `fetch`'s second
 * argument (`{ remoteAddress }`). Behind a proxy, name it in `trustedProxies` so that its
 * `X-Forwarded-For` is believed (off by default: anyone can send that header).
 *
 * Every URL the API emits (`session_url`, the 3-D Secure page) is built from the `publicUrl` the
 * engine was created with, and the hosted pages' forms post relative to their page: set
 * `publicUrl` to the mounted address (`https://shop.example/billing`) and give the same path as
 * `prefix` here.
 *
 * @example
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, publicUrl: "http://localhost:3000/billing" })
 * const recur = await Mount.nodeHandler(billing, { prefix: "/billing" })
 * createServer((req, res) => recur.handle(req, res, () => res.writeHead(404).end())).listen(3000)
 * @since 0.1.0
 */
import { Context, Layer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import * as Http from "./Http.js"

/**
 * What a mount needs from the engine's owner: the facade returned by `createBilling` has it.
 *
 * @since 0.1.0
 */
export interface EngineSource {
  /** The engine's services, the instances the owner itself uses. */
  readonly context: () => Promise<Context.Context<Http.EngineServices>>
}

/**
 * Options of a mount.
 *
 * @since 0.1.0
 */
export interface MountOptions extends Http.RequestLimits, Http.ClientAddresses {
  /**
   * The path the API is mounted under (`/billing`): stripped from each request's path before
   * routing. Leave it out when the framework strips it (Express's `app.use("/billing", …)`).
   */
  readonly prefix?: string
  /** Requests per second and burst per API key (default 100/200), or `false`. */
  readonly rateLimit?: Http.RateLimit | false
}

/**
 * A mounted API for fetch-style servers.
 *
 * @since 0.1.0
 */
export interface FetchMount {
  /**
   * Answers one request; a path outside the prefix gets the API's 404 envelope. `client` is the
   * connection's peer, when the server knows it (Hono on Node: `getConnInfo(c).remote.address`;
   * Bun: `server.requestIP(request)?.address`; Deno: `info.remoteAddr.hostname`): without it the
   * card-testing guard counts attempts per session only.
   */
  readonly fetch: (request: Request, client?: ClientInfo) => Promise<Response>
  /** Stops the API's own resources (not the engine: close the facade for that). */
  readonly close: () => Promise<void>
}

/**
 * What the host's server knows of a request's connection.
 *
 * @since 0.1.0
 */
export interface ClientInfo {
  /** The TCP peer's address (`203.0.113.7`, `::ffff:203.0.113.7`). */
  readonly remoteAddress?: string | undefined
}

/**
 * A mounted API for node:http-style servers.
 *
 * @since 0.1.0
 */
export interface NodeMount {
  /**
   * Answers one request. With `next` (Express, Connect), a request outside the prefix is passed
   * on; without it, it gets the API's 404 envelope. Never throws: a failure becomes `next(error)`
   * or a 500 envelope.
   */
  readonly handle: (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void
  /** Stops the API's own resources (not the engine: close the facade for that). */
  readonly close: () => Promise<void>
}

const normalisePrefix = (prefix: string | undefined): string => {
  if (prefix === undefined || prefix === "" || prefix === "/") return ""
  const withSlash = prefix.startsWith("/") ? prefix : `/${prefix}`
  return withSlash.replace(/\/+$/, "")
}

/** The path below the prefix, or undefined when the path is not under it. */
const below = (prefix: string, path: string): string | undefined => {
  if (prefix === "") return path
  if (path === prefix) return "/"
  if (path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`)) return path.slice(prefix.length)
  return undefined
}

/**
 * The API as a fetch handler, over the engine of `billing`.
 *
 * @example
 * const recur = await Mount.fetchHandler(billing, { prefix: "/billing" })
 * app.all("/billing/*", (c) => recur.fetch(c.req.raw)) // Hono
 * @since 0.1.0
 */
export const fetchHandler = async (billing: EngineSource, options: MountOptions = {}): Promise<FetchMount> => {
  const context = await billing.context()
  const { handler, dispose } = Http.toWebHandler(Layer.succeedContext(context), undefined, {
    ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {})
  })
  const prefix = normalisePrefix(options.prefix)
  return {
    fetch: (request, client) => {
      const peer =
        client?.remoteAddress !== undefined && client.remoteAddress !== ""
          ? Context.make(Http.PeerAddress, client.remoteAddress)
          : undefined
      if (prefix === "") return handler(request, peer)
      const url = new URL(request.url)
      const rest = below(prefix, url.pathname)
      // outside the prefix: the API's own 404 (its router knows no such path)
      url.pathname = rest ?? `/__outside_the_mount${url.pathname}`
      return handler(new Request(url, request), peer)
    },
    close: dispose
  }
}

/** A body a framework has already read and parsed, as bytes again (or undefined when unread). */
const parsedBody = (req: IncomingMessage & { body?: unknown; _body?: boolean }): Uint8Array | undefined => {
  const consumed = req._body === true || req.readableEnded
  if (!consumed || req.body === undefined) return undefined
  const body = req.body
  if (Buffer.isBuffer(body)) return body
  if (typeof body === "string") return Buffer.from(body)
  const type = String(req.headers["content-type"] ?? "")
  if (/application\/x-www-form-urlencoded/i.test(type) && typeof body === "object" && body !== null) {
    const form = new URLSearchParams()
    for (const [k, v] of Object.entries(body)) {
      for (const item of Array.isArray(v) ? v : [v]) form.append(k, String(item))
    }
    return Buffer.from(form.toString())
  }
  return Buffer.from(JSON.stringify(body))
}

/**
 * The API as a node:http handler, over the engine of `billing`.
 *
 * @example
 * // node:http
 * const recur = await Mount.nodeHandler(billing, { prefix: "/billing" })
 * createServer((req, res) => recur.handle(req, res)).listen(3000)
 * // Express (the mount path is stripped by Express itself)
 * app.use("/billing", (await Mount.nodeHandler(billing)).handle)
 * @since 0.1.0
 */
export const nodeHandler = async (billing: EngineSource, options: MountOptions = {}): Promise<NodeMount> => {
  const mount = await fetchHandler(billing, { ...options, prefix: "" })
  const prefix = normalisePrefix(options.prefix)
  const handle = async (
    req: IncomingMessage & { body?: unknown; _body?: boolean },
    res: ServerResponse,
    next?: (error?: unknown) => void
  ) => {
    const path = below(prefix, req.url ?? "/")
    if (path === undefined && next) return next()
    const host = req.headers.host ?? "localhost"
    const url = new URL(path ?? `/__outside_the_mount${req.url ?? "/"}`, `http://${host}`)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string") headers.set(k, v)
      else if (Array.isArray(v)) for (const item of v) headers.append(k, item)
    }
    const method = req.method ?? "GET"
    const hasBody = method !== "GET" && method !== "HEAD"
    const parsed = hasBody ? parsedBody(req) : undefined
    if (parsed !== undefined) {
      headers.set("content-length", String(parsed.byteLength))
      headers.delete("transfer-encoding")
    }
    const request = new Request(url, {
      method,
      headers,
      ...(parsed !== undefined
        ? { body: parsed }
        : hasBody && !req.readableEnded
          ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" }
          : {})
    } as RequestInit)
    const response = await mount.fetch(request, { remoteAddress: req.socket?.remoteAddress })
    const out: Record<string, string | Array<string>> = {}
    response.headers.forEach((value, key) => {
      if (key === "set-cookie") return
      out[key] = value
    })
    const cookies = response.headers.getSetCookie()
    if (cookies.length > 0) out["set-cookie"] = cookies
    res.writeHead(response.status, out)
    if (response.body === null || method === "HEAD") {
      res.end()
      return
    }
    for await (const chunk of Readable.fromWeb(response.body as never)) res.write(chunk)
    res.end()
  }
  return {
    handle: (req, res, next) => {
      handle(req, res, next).catch((error: unknown) => {
        if (next) return next(error)
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json" })
          // the client's Request-Id, else an id of the server's (the request never reached the app)
          const sent = req.headers["request-id"]
          const requestId =
            typeof sent === "string" && /^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(sent)
              ? sent
              : `req_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`
          res.end(
            JSON.stringify({
              code: "system_error",
              message: "Recur could not answer the request",
              data: { request_id: requestId }
            })
          )
        } else res.destroy()
      })
    },
    close: mount.close
  }
}
