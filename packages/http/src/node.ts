/**
 * Recur's REST API in a node:http server:
 *
 * @example
 * import { recurNode } from "@recur/http/node"
 * const billing = await createBilling({ storage: { pglite: "./.recur" }, publicUrl: "http://localhost:3000/billing" })
 * const recur = await recurNode(billing, { prefix: "/billing" })
 * createServer(recur.listener).listen(3000)
 *
 * Beside the host's own routes, `recur.handle(req, res, next)` passes a request outside the
 * prefix to `next`. A body the host already read: see `Mount.nodeHandler`.
 *
 * @since 0.1.0
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Mount from "./Mount.js"

/**
 * A mounted API for node:http.
 *
 * @since 0.1.0
 */
export interface NodeServerMount extends Mount.NodeMount {
  /** `createServer(recur.listener)`: every request is Recur's (outside the prefix: its 404). */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void
}

/**
 * The API as a node:http request listener and handler, over the engine of `billing`.
 *
 * @since 0.1.0
 */
export const recurNode = async (
  billing: Mount.EngineSource,
  options: Mount.MountOptions = {}
): Promise<NodeServerMount> => {
  const mount = await Mount.nodeHandler(billing, options)
  return { handle: mount.handle, listener: (req, res) => mount.handle(req, res), close: mount.close }
}
