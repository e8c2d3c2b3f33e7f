/**
 * A Fastify app mounting Recur's REST API under /billing: an encapsulated plugin that leaves the
 * body unread (Recur reads and limits it itself) and hands the raw request to Recur's node handler.
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { Mount } from "@recur/http"
import Fastify from "fastify"

export async function createApp(options: {
  readonly publicUrl: string
  readonly storage?: StorageOption
  /** Proxies whose X-Forwarded-For names the client (the card-testing guard counts per client). */
  readonly trustedProxies?: ReadonlyArray<string>
}) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await Mount.nodeHandler(billing, { prefix: "/billing", trustedProxies: options.trustedProxies ?? [] })
  const app = Fastify()
  app.get("/health", async (_request, reply) => reply.type("text/plain").send("ok"))
  await app.register(async (scope) => {
    // inside this plugin only: no body parsing, the stream is Recur's
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null))
    const toRecur = (
      request: { raw: import("node:http").IncomingMessage },
      reply: { hijack: () => void; raw: import("node:http").ServerResponse }
    ) => {
      reply.hijack()
      recur.handle(request.raw, reply.raw)
    }
    scope.all("/billing", toRecur)
    scope.all("/billing/*", toRecur)
  })
  app.addHook("onClose", async () => {
    await recur.close()
    await billing.close()
  })
  return { app, billing, close: () => app.close() }
}
