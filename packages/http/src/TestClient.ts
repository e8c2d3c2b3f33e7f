/**
 * The REST API in process, for tests: the real adapter as a web handler over an engine Layer,
 * and a JSON client that fills `Authorization` and a fresh `Request-Id`. No port, no network.
 *
 * @example
 * const api = TestClient.make(engineOn(Pg.layerPglite()))
 * const { status, body } = await api.call("GET", "/api/v1/products", apiKey)
 * await api.dispose()
 * @since 0.1.0
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import * as Http from "./Http.js"

/**
 * A JSON answer of the API, parsed.
 *
 * @since 0.1.0
 */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

/**
 * Builds the client over an engine Layer (shared with `runtime`, so services and the API see
 * one storage).
 *
 * @since 0.1.0
 */
export const make = <R>(engine: Layer.Layer<R, unknown>, options: { readonly rateLimit?: Http.RateLimit } = {}) => {
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const runtime = ManagedRuntime.make(engine, { memoMap })
  // tests hammer one key: no rate limit unless asked for
  const web = Http.toWebHandler(engine as Layer.Layer<any, unknown>, memoMap, {
    rateLimit: options.rateLimit ?? { perSecond: 1_000_000, burst: 1_000_000 }
  })
  let n = 0
  /** One request; `body` is JSON-encoded unless it is a string. */
  const call = async (
    method: string,
    path: string,
    key: string | null,
    body?: unknown,
    headers: Record<string, string> = {}
  ): Promise<Answer> => {
    const h: Record<string, string> = {
      "content-type": "application/json",
      "request-id": `req-${++n}-${Math.random().toString(36).slice(2)}`
    }
    if (key !== null) h.authorization = `Bearer ${key}`
    Object.assign(h, headers)
    const res = await web.handler(
      new Request(`http://localhost${path}`, {
        method,
        headers: h,
        ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
      })
    )
    const text = await res.text()
    let parsed: unknown = null
    try {
      parsed = text === "" ? null : JSON.parse(text)
    } catch {
      parsed = text
    }
    return { status: res.status, headers: res.headers, body: parsed }
  }
  const dispose = async () => {
    await web.dispose()
    await runtime.dispose()
  }
  return { call, runtime, handler: web.handler, dispose }
}
