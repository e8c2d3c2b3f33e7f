/**
 * @recur/http — the REST adapter.
 *
 * @since 0.1.0
 */
export * as Api from "./Api.js"
export * as ApiErrors from "./Errors.js"
export * as ErrorBindings from "./ErrorBindings.js"
export * as Handlers from "./Handlers.js"
export * as Http from "./Http.js"
export * as Mount from "./Mount.js"
export * as Observability from "./Observability.js"
export * as TestClient from "./TestClient.js"
