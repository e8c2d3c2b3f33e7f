// What the request log learns of a request while it runs: the route that matched (its template)
// and the authenticated merchant. Keyed by the request's underlying source object, which the
// router's re-wrapping keeps (as in authMemo.ts).
import type { HttpServerRequest } from "effect/http"

interface Observed {
  route?: string
  merchantId?: string
}

const observed = new WeakMap<object, Observed>()

const sourceOf = (request: HttpServerRequest.HttpServerRequest): object | undefined =>
  typeof request.source === "object" && request.source !== null ? request.source : undefined

const entry = (request: HttpServerRequest.HttpServerRequest): Observed | undefined => {
  const source = sourceOf(request)
  if (source === undefined) return undefined
  let found = observed.get(source)
  if (found === undefined) {
    found = {}
    observed.set(source, found)
  }
  return found
}

export const noteRoute = (request: HttpServerRequest.HttpServerRequest, route: string): void => {
  const e = entry(request)
  if (e) e.route = route
}

export const noteMerchant = (request: HttpServerRequest.HttpServerRequest, merchantId: string): void => {
  const e = entry(request)
  if (e) e.merchantId = merchantId
}

export const of = (request: HttpServerRequest.HttpServerRequest): Readonly<Observed> => {
  const source = sourceOf(request)
  return (source && observed.get(source)) ?? {}
}
