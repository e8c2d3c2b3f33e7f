// One authentication per request: the idempotency middleware authenticates a POST before the
// endpoint's own Authentication middleware does; the second reads the first's answer instead of
// hashing the key and querying the key and merchant tables again. Keyed by the request's
// underlying source object, which the router's re-wrapping keeps.
import type { HttpServerRequest } from "effect/http"
import type { Merchants } from "@recur/core"
import type { Effect } from "effect"

type Authenticated = Effect.Success<ReturnType<Merchants.Merchants["Service"]["authenticate"]>>

const memo = new WeakMap<object, { readonly key: string; readonly auth: Authenticated }>()

const sourceOf = (request: HttpServerRequest.HttpServerRequest): object | undefined =>
  typeof request.source === "object" && request.source !== null ? request.source : undefined

export const remember = (request: HttpServerRequest.HttpServerRequest, key: string, auth: Authenticated): void => {
  const source = sourceOf(request)
  if (source) memo.set(source, { key, auth })
}

export const recall = (request: HttpServerRequest.HttpServerRequest, key: string): Authenticated | undefined => {
  const source = sourceOf(request)
  const found = source ? memo.get(source) : undefined
  return found && found.key === key ? found.auth : undefined
}
