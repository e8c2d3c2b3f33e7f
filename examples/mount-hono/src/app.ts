/**
 * A Hono app mounting Recur's REST API under /billing through the fetch handler (the same code
 * runs on Bun, Deno or workers: only the server line differs).
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { Mount } from "@recur/http"
import { Hono } from "hono"

export async function createApp(options: { readonly publicUrl: string; readonly storage?: StorageOption }) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await Mount.fetchHandler(billing, { prefix: "/billing" })
  const app = new Hono()
  app.get("/health", (c) => c.text("ok"))
  app.all("/billing", (c) => recur.fetch(c.req.raw))
  app.all("/billing/*", (c) => recur.fetch(c.req.raw))
  return {
    app,
    billing,
    close: async () => {
      await recur.close()
      await billing.close()
    }
  }
}
