/**
 * A Hono app mounting Recur's REST API under /billing with `@recur/http/hono` (the same code runs
 * on Bun or Deno: only the server line differs; the client's address is read from each runtime).
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { recurHono } from "@recur/http/hono"
import { Hono } from "hono"

export async function createApp(options: {
  readonly publicUrl: string
  readonly storage?: StorageOption
  /** Proxies whose X-Forwarded-For names the client (the card-testing guard counts per client). */
  readonly trustedProxies?: ReadonlyArray<string>
}) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await recurHono(billing, { prefix: "/billing", trustedProxies: options.trustedProxies ?? [] })
  const app = new Hono()
  app.get("/health", (c) => c.text("ok"))
  // /billing and below, any method; each request's client address from @hono/node-server
  recur.register(app)
  return {
    app,
    billing,
    close: async () => {
      await recur.close()
      await billing.close()
    }
  }
}
