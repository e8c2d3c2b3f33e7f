/**
 * The webhook transport on Effect's HttpClient (fetch): POSTs the body as given,
 * never follows a redirect (a 3xx is the answer), gives up after the request's timeout, and
 * refuses loopback / private-network targets unless allowed (server-side request forgery).
 *
 * @since 0.1.0
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { Ports } from "@recur/core"
import { Effect, Layer } from "effect"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"

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

const v4ToInt = (ip: string) => ip.split(".").reduce((a, p) => (a << 8) + Number(p), 0) >>> 0
const inV4 = (ip: string, base: string, bits: number) =>
  bits === 0 || v4ToInt(ip) >>> (32 - bits) === v4ToInt(base) >>> (32 - bits)
const privateV4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4]
]

/**
 * Whether an IP address is loopback, link-local, private, shared, multicast or reserved.
 *
 * @example
 * isPrivateAddress("10.1.2.3") // true
 * isPrivateAddress("::ffff:127.0.0.1") // true
 * isPrivateAddress("93.184.216.34") // false
 * @since 0.1.0
 */
export const isPrivateAddress = (ip: string): boolean => {
  const kind = isIP(ip)
  if (kind === 4) return privateV4.some(([base, bits]) => inV4(ip, base, bits))
  if (kind !== 6) return true
  const lower = ip.toLowerCase()
  const mapped = /^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? /^::(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return isPrivateAddress(mapped[1]!)
  if (lower === "::1" || lower === "::") return true
  const first = parseInt(lower.split(":")[0] || "0", 16)
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00
}

const forbidden = (message: string) => new Ports.WebhookTransportError({ reason: "forbidden", message })

/** Refuses a URL whose host is, or resolves to, a private address. */
const guard = (url: string) =>
  Effect.gen(function* () {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
    if (isIP(host) !== 0) {
      if (isPrivateAddress(host)) return yield* forbidden(`${host} is a private-network address`)
      return
    }
    const addresses = yield* Effect.tryPromise({
      try: () => lookup(host, { all: true }),
      catch: (e) =>
        new Ports.WebhookTransportError({
          reason: "network",
          message: `cannot resolve ${host}: ${String((e as Error).message ?? e)}`
        })
    })
    const bad = addresses.find((a) => isPrivateAddress(a.address))
    if (bad) return yield* forbidden(`${host} resolves to the private-network address ${bad.address}`)
  })

/**
 * Builds the transport on the `HttpClient` in context.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    return {
      send: (request: Ports.WebhookRequest) =>
        Effect.gen(function* () {
          if (!options.allowPrivateNetwork && !request.allowPrivateNetwork) yield* guard(request.url)
          const response = yield* client
            .execute(
              HttpClientRequest.post(request.url).pipe(
                HttpClientRequest.setHeaders(request.headers),
                HttpClientRequest.bodyText(request.body, "application/json")
              )
            )
            .pipe(Effect.mapError((e) => new Ports.WebhookTransportError({ reason: "network", message: e.message })))
          // read (and discard) the answer so the connection is reused; its content is not used
          yield* Effect.ignore(response.text)
          return { status: response.status }
        }).pipe(
          Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
          Effect.scoped,
          Effect.timeoutOrElse({
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
 * The transport on fetch.
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<Ports.WebhookTransport> =>
  Layer.effect(Ports.WebhookTransport, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
