/**
 * Mounting the REST API in a host's own server, over the same engine as the host's Promise
 * facade (`@recur/embedded`'s `createBilling`): one engine instance per process, whatever the
 * framework.
 *
 * - {@link fetchHandler}: `Request => Promise<Response>` for Bun, Deno, Next.js route handlers and
 *   any other fetch-style server.
 * - {@link nodeHandler}: `(req, res, next?)` for node:http and Connect-style servers.
 *
 * Each framework has its glue in a subpath of this package, built on these two:
 * `@recur/http/fastify` (a plugin), `@recur/http/express` (a middleware), `@recur/http/hono` (a
 * handler) and `@recur/http/node` (a request listener). A body a middleware of the host already
 * read is taken from what it left (bytes kept as `rawBody`, or a parsed form or JSON body
 * re-serialised); when it left nothing, or when a signed webhook's exact bytes are lost, the
 * answer is a 400 `invalid_request_error` saying so.
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
import * as Http from "./Http.js"
import * as Bridge from "./internal/nodeBridge.js"
import * as Refusal from "./internal/refusal.js"
import { below, normalisePrefix } from "./internal/mountPath.js"

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
      // a fetch server's middleware read the body (and kept no copy): say so, never hang or 500
      if (request.bodyUsed)
        return Promise.resolve(
          Bridge.consumedAnswer(
            Bridge.consumedReason("the Request's body had been used"),
            request.headers.get("request-id") ?? undefined
          )
        )
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
  const handle = async (req: Bridge.NodeRequest, res: ServerResponse, next?: (error?: unknown) => void) => {
    const path = below(prefix, req.url ?? "/")
    if (path === undefined && next) return next()
    const target = path ?? `/__outside_the_mount${req.url ?? "/"}`
    const method = req.method ?? "GET"
    if (Refusal.hasDotSegment(Refusal.pathOf(target)))
      return Bridge.send(res, Bridge.dotSegmentAnswer(Refusal.dotSegmentMessage, headerOf(req, "request-id")), method)
    const body = Bridge.nodeBody(req, Refusal.pathOf(target))
    const response =
      body._tag === "Consumed"
        ? Bridge.consumedAnswer(body.reason, headerOf(req, "request-id"))
        : await mount.fetch(Bridge.toRequest(req, target, body), { remoteAddress: req.socket?.remoteAddress })
    await Bridge.send(res, response, method)
  }
  return {
    handle: (req, res, next) => {
      handle(req, res, next).catch((error: unknown) => {
        if (next) return next(error)
        Bridge.failed(req, res)
      })
    },
    close: mount.close
  }
}

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}
