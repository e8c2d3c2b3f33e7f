/**
 * The webhook transport on Effect's HttpClient (node:http): POSTs the body as given, never
 * follows a redirect (a 3xx is the answer), reads at most 4 KiB of the answer, gives up after
 * the request's timeout, and refuses private and special-purpose targets unless allowed
 * (server-side request forgery), on the exact address each connection is made to.
 *
 * @since 0.1.0
 */
import { NodeHttpClient } from "@effect/platform-node"
import { NetworkAddress, Ports } from "@recur/core"
import { Effect, Layer, Stream } from "effect"
import { HttpClientRequest } from "effect/http"
import { type LookupAddress, lookup } from "node:dns"
import type { LookupFunction } from "node:net"

/**
 * @since 0.1.0
 */
export interface Options {
  /**
   * Allow loopback and private-network targets for every merchant (tests, or an operator's
   * own network). Sandbox merchants are always allowed them.
   */
  readonly allowPrivateNetwork?: boolean
}

/**
 * Whether an IP address is loopback, link-local, private, shared, multicast, reserved or any
 * other special-purpose address, in any of its IPv6 spellings (`NetworkAddress.specialPurpose`).
 *
 * @example
 * isPrivateAddress("10.1.2.3") // true
 * isPrivateAddress("::ffff:7f00:1") // true
 * isPrivateAddress("93.184.216.34") // false
 * @since 0.1.0
 */
export const isPrivateAddress = (ip: string): boolean => NetworkAddress.specialPurpose(ip) !== undefined

/** How much of a receiver's answer is read: its content is not used, only its status. */
export const MAX_ANSWER_BYTES = 4096

const FORBIDDEN = "ERECUR_FORBIDDEN_ADDRESS"

/**
 * The DNS lookup every guarded connection makes: it resolves the name and refuses it when any
 * address is special-purpose, so the address checked is the address connected to (no window
 * for DNS rebinding between a check and the connect).
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return (callback as (e: Error) => void)(error)
    const list = addresses as ReadonlyArray<LookupAddress>
    const bad = list.find((a) => isPrivateAddress(a.address))
    if (bad !== undefined || list.length === 0) {
      const e = Object.assign(
        new Error(
          bad
            ? `${hostname} resolves to ${bad.address}, a private or special-purpose address`
            : `${hostname} has no address`
        ),
        { code: bad ? FORBIDDEN : "ENOTFOUND" }
      )
      return (callback as (e: Error) => void)(e)
    }
    if ((options as { all?: boolean }).all)
      return (callback as (e: null, a: ReadonlyArray<LookupAddress>) => void)(null, list)
    return (callback as (e: null, a: string, f: number) => void)(null, list[0]!.address, list[0]!.family)
  })
}

const forbidden = (message: string) => new Ports.WebhookTransportError({ reason: "forbidden", message })

/** The refusal a guarded lookup raised, found in an HTTP client error's causes. */
const forbiddenCause = (e: unknown): string | undefined => {
  const seen = new Set<unknown>()
  let current: unknown = e
  while (current !== null && typeof current === "object" && !seen.has(current)) {
    seen.add(current)
    const c = current as { code?: unknown; message?: unknown; cause?: unknown; reason?: unknown }
    if (c.code === FORBIDDEN) return String(c.message)
    current = c.cause ?? c.reason
  }
  return undefined
}

/** Refuses a URL whose host is a special-purpose IP literal or this machine (names are checked at connect). */
const guardLiteral = (url: string) =>
  Effect.suspend(() => {
    const why = NetworkAddress.refusedHost(url)
    return why === undefined ? Effect.void : Effect.fail(forbidden(why))
  })

/**
 * Builds the transport: node:http(s) clients, one whose connections resolve names through the
 * guarded lookup and one without (sandbox merchants, or `allowPrivateNetwork`). A redirect is
 * never followed (a 3xx is the answer) and at most {@link MAX_ANSWER_BYTES} of an answer are
 * read; the rest is dropped with the connection.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const client = (agent: NodeHttpClient.HttpAgentOptions) =>
      Effect.provideServiceEffect(
        NodeHttpClient.makeNodeHttp,
        NodeHttpClient.HttpAgent,
        NodeHttpClient.makeAgent(agent)
      )
    const guarded = yield* client({ keepAlive: true, lookup: guardedLookup })
    const open = yield* client({ keepAlive: true })
    return {
      send: Effect.fn("HttpTransport.send")(
        function* (request: Ports.WebhookRequest) {
          const guard = !options.allowPrivateNetwork && !request.allowPrivateNetwork
          if (guard) yield* guardLiteral(request.url)
          const response = yield* (guard ? guarded : open)
            .execute(
              HttpClientRequest.post(request.url).pipe(
                HttpClientRequest.setHeaders(request.headers),
                HttpClientRequest.bodyText(request.body, "application/json")
              )
            )
            .pipe(
              Effect.mapError((e) => {
                const refused = forbiddenCause(e)
                return refused !== undefined
                  ? forbidden(refused)
                  : new Ports.WebhookTransportError({ reason: "network", message: e.message })
              })
            )
          // read at most a few KiB of the answer (its content is not used); the rest is dropped
          let read = 0
          yield* response.stream.pipe(
            Stream.runForEachWhile((chunk) =>
              Effect.sync(() => {
                read += chunk.length
                return read < MAX_ANSWER_BYTES
              })
            ),
            Effect.ignore
          )
          return { status: response.status }
        },
        Effect.scoped,
        (effect, request) =>
          Effect.timeoutOrElse(effect, {
            duration: request.timeoutMs,
            orElse: () =>
              Effect.fail(
                new Ports.WebhookTransportError({
                  reason: "timeout",
                  message: `no answer within ${request.timeoutMs} ms`
                })
              )
          })
      )
    }
  })

/**
 * The transport on node:http(s).
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<Ports.WebhookTransport> =>
  Layer.effect(Ports.WebhookTransport, make(options))
