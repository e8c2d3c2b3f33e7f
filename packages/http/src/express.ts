/**
 * Recur's REST API as an Express middleware:
 *
 * @example
 * import { keepRawBody, recurExpress } from "@recur/http/express"
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, publicUrl: "http://localhost:3000/billing" })
 * app.use("/billing", await recurExpress(billing))
 *
 * Express strips the mount path. Mounted before the app's body parsers, Recur reads every body
 * itself. Mounted after `express.json()` / `express.urlencoded()`, a parsed JSON or form body is
 * re-serialised (and meets Recur's own limits); a processor's webhook, whose signature is over
 * its exact bytes, needs those bytes kept: `express.json({ verify: keepRawBody })`. A body a
 * middleware read and left nowhere is answered 400 `invalid_request_error` saying so.
 *
 * Nothing is imported from Express: `@recur/http` installs and runs without it.
 *
 * @since 0.1.0
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type * as Bridge from "./internal/nodeBridge.js"
import * as Mount from "./Mount.js"

/**
 * An Express (or Connect) middleware answering Recur's API, with `close()` for the mount's own
 * resources (the engine is the facade's: close it yourself).
 *
 * @since 0.1.0
 */
export interface ExpressMount {
  (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void
  /** Stops the API's own resources (not the engine: close the facade for that). */
  readonly close: () => Promise<void>
}

/**
 * The API as an Express middleware: `app.use("/billing", await recurExpress(billing))`. A
 * request outside `prefix` (when given, for `app.use(middleware)` without a path) goes to `next`.
 *
 * @since 0.1.0
 */
export const recurExpress = async (
  billing: Mount.EngineSource,
  options: Mount.MountOptions = {}
): Promise<ExpressMount> => {
  const mount = await Mount.nodeHandler(billing, options)
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) =>
    mount.handle(req, res, next)
  return Object.assign(middleware, { close: mount.close })
}

/**
 * A body parser's `verify` option that keeps the body's exact bytes for Recur
 * (`express.json({ verify: keepRawBody })`): a processor's webhook signature is checked over them.
 *
 * @since 0.1.0
 */
export const keepRawBody = (req: IncomingMessage, _res: ServerResponse, bytes: Buffer): void => {
  ;(req as Bridge.NodeRequest).rawBody = bytes
}
