/**
 * A Hono app mounting Recur's REST API under /billing through the fetch handler (the same code
 * runs on Bun, Deno or workers: only the server line differs).
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { Mount } from "@recur/http"
import { getConnInfo } from "@hono/node-server/conninfo"
import { type Context, Hono } from "hono"

export async function createApp(options: {
  readonly publicUrl: string
  readonly storage?: StorageOption
  /** Proxies whose X-Forwarded-For names the client (the card-testing guard counts per client). */
  readonly trustedProxies?: ReadonlyArray<string>
}) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await Mount.fetchHandler(billing, { prefix: "/billing", trustedProxies: options.trustedProxies ?? [] })
  const app = new Hono()
  app.get("/health", (c) => c.text("ok"))
  // the connection's address: the card-testing guard counts pay attempts per client
  const toRecur = (c: Context) => recur.fetch(c.req.raw, { remoteAddress: getConnInfo(c).remote.address })
  app.all("/billing", toRecur)
  app.all("/billing/*", toRecur)
  return {
    app,
    billing,
    close: async () => {
      await recur.close()
      await billing.close()
    }
  }
}
