/**
 * A Fastify app mounting Recur's REST API under /billing with `@recur/http/fastify`: an
 * encapsulated plugin whose own content-type parser leaves every body (JSON, the hosted pages'
 * forms, processors' signed webhooks) for Recur, while the app's own routes keep Fastify's parsers.
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { recurFastify } from "@recur/http/fastify"
import Fastify from "fastify"

export async function createApp(options: {
  readonly publicUrl: string
  readonly storage?: StorageOption
  /** Proxies whose X-Forwarded-For names the client (the card-testing guard counts per client). */
  readonly trustedProxies?: ReadonlyArray<string>
}) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const app = Fastify()
  app.get("/health", async (_request, reply) => reply.type("text/plain").send("ok"))
  await app.register(recurFastify, { billing, prefix: "/billing", trustedProxies: options.trustedProxies ?? [] })
  // the plugin releases the mount when the app closes; the engine is ours
  app.addHook("onClose", () => billing.close())
  return { app, billing, close: () => app.close() }
}
