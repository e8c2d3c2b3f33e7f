/**
 * An existing node:http app that mounts Recur's REST API under /billing, next to its own routes,
 * over the same engine as its own billing code (the Promise facade), with `@recur/http/node`.
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { recurNode } from "@recur/http/node"
import { createServer } from "node:http"

export async function createApp(options: {
  readonly publicUrl: string
  readonly storage?: StorageOption
  /** Proxies whose X-Forwarded-For names the client (the card-testing guard counts per client). */
  readonly trustedProxies?: ReadonlyArray<string>
}) {
  // one engine: the host's own code uses `billing`, the API is mounted over the same instance
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await recurNode(billing, { prefix: "/billing", trustedProxies: options.trustedProxies ?? [] })
  const server = createServer((req, res) => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok") // the host's own route
      return
    }
    recur.handle(req, res, () => res.writeHead(404, { "content-type": "text/plain" }).end("not found"))
  })
  return {
    server,
    billing,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await recur.close()
      await billing.close()
    }
  }
}
