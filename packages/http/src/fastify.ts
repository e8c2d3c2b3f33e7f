/**
 * Recur's REST API as a Fastify plugin, registered under a prefix:
 *
 * @example
 * import { recurFastify } from "@recur/http/fastify"
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, publicUrl: "http://localhost:3000/billing" })
 * await app.register(recurFastify, { billing, prefix: "/billing" })
 *
 * The plugin is encapsulated (not wrapped in `fastify-plugin`): in its own scope it replaces every
 * content-type parser with one that leaves the body unread, so every body the API takes — JSON,
 * the hosted pages' form posts, a processor's webhook whose signature is over its exact bytes —
 * reaches Recur as it came, and Recur applies its own size and media-type limits and answers in
 * its envelope. The host's own routes keep their parsers. A `rawBody` a raw-body plugin kept is
 * used as it is; a body a hook read and left nowhere is answered 400 `invalid_request_error`
 * saying so.
 *
 * Only Fastify's types are imported: `@recur/http` installs and runs without Fastify.
 *
 * @since 0.1.0
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify"
import { Readable } from "node:stream"
import * as Bridge from "./internal/nodeBridge.js"
import { below, normalisePrefix } from "./internal/mountPath.js"
import * as Refusal from "./internal/refusal.js"
import * as Mount from "./Mount.js"

/**
 * Options of {@link recurFastify}: the engine and the mount's options. The prefix is Fastify's
 * own `prefix` register option.
 *
 * @since 0.1.0
 */
export interface RecurFastifyOptions extends Omit<Mount.MountOptions, "prefix"> {
  /** The engine's owner: the facade `createBilling` returned. */
  readonly billing: Mount.EngineSource
}

/** Where the body of a request routed to Recur is, as the plugin's parser left it. */
const bodyOf = (request: FastifyRequest, path: string): Bridge.BodySource => {
  const method = request.raw.method ?? "GET"
  if (method === "GET" || method === "HEAD") return { _tag: "None" }
  const kept = Bridge.rawBytes(
    (request as { rawBody?: unknown }).rawBody ?? (request.raw as Bridge.NodeRequest).rawBody
  )
  if (kept !== undefined) return { _tag: "Bytes", bytes: kept }
  const body = request.body
  if (body instanceof Readable) {
    if (!body.readableEnded && !body.readableDidRead && !body.destroyed) return { _tag: "Stream", stream: body }
    return Bridge.announcesBody(request.headers)
      ? {
          _tag: "Consumed",
          reason: Bridge.consumedReason(
            body.readableEnded
              ? "its stream had ended, in a hook of the Fastify app"
              : "its stream had been partly read"
          )
        }
      : { _tag: "None" }
  }
  if (body !== undefined && body !== null)
    return Bridge.parsedOnly(body, path, String(request.headers["content-type"] ?? ""))
  // no parser ran (no body announced), or a hook read the stream and left nothing
  return Bridge.nodeBody(request.raw, path)
}

/**
 * The plugin: `app.register(recurFastify, { billing, prefix: "/billing" })` answers every method
 * on `/billing` and below; the mount's own resources are released when the Fastify app closes
 * (the engine is the facade's: close it yourself). Each request's client address is its TCP
 * peer (`trustedProxies` names proxies whose `X-Forwarded-For` is believed).
 *
 * @since 0.1.0
 */
export const recurFastify: FastifyPluginAsync<RecurFastifyOptions> = async (scope, options) => {
  const { billing, ...mountOptions } = options
  const mount = await Mount.fetchHandler(billing, {
    ...(mountOptions.rateLimit !== undefined ? { rateLimit: mountOptions.rateLimit } : {}),
    ...(mountOptions.maxBodyBytes !== undefined ? { maxBodyBytes: mountOptions.maxBodyBytes } : {}),
    ...(mountOptions.trustedProxies !== undefined ? { trustedProxies: mountOptions.trustedProxies } : {})
  })
  scope.addHook("onClose", () => mount.close())
  // in this scope only: the body stays unread for Recur, whatever its media type
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload))
  const prefix = normalisePrefix(scope.prefix)
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.raw.url ?? "/"
    const path = below(prefix, url) ?? "/"
    const method = request.raw.method ?? "GET"
    const body = bodyOf(request, Refusal.pathOf(path))
    const response =
      body._tag === "Consumed"
        ? Bridge.consumedAnswer(body.reason, request.headers["request-id"] as string | undefined)
        : await mount.fetch(Bridge.toRequest(request.raw, path, body), {
            remoteAddress: request.raw.socket?.remoteAddress
          })
    reply.code(response.status)
    reply.headers(Bridge.responseHeaders(response))
    if (response.body === null || method === "HEAD") return reply.send()
    return reply.send(Readable.fromWeb(response.body as never))
  }
  scope.route({ method: ALL, url: "/", prefixTrailingSlash: "both", handler })
  scope.route({ method: ALL, url: "/*", handler })
}

const ALL = ["DELETE", "GET", "HEAD", "PATCH", "POST", "PUT", "OPTIONS"]
