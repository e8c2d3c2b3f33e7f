/**
 * An Express app with the usual body parsers in front of everything, mounting Recur's REST API
 * under /billing with `@recur/http/express` (Express strips the mount path; an already-parsed body
 * is re-serialised, and `keepRawBody` keeps a webhook's exact bytes for its signature).
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { keepRawBody, recurExpress } from "@recur/http/express"
import express from "express"

export async function createApp(options: {
  readonly publicUrl: string
  readonly storage?: StorageOption
  /** Proxies whose X-Forwarded-For names the client (the card-testing guard counts per client). */
  readonly trustedProxies?: ReadonlyArray<string>
}) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await recurExpress(billing, { trustedProxies: options.trustedProxies ?? [] })
  const app = express()
  // express.json() refuses bodies over its own limit (100 kB by default) before Recur sees them;
  // Recur's own limit is 1 MiB (RECUR_MAX_BODY_BYTES): raise Express's to match if you need it
  app.use(express.json({ limit: "1mb", verify: keepRawBody }))
  app.use(express.urlencoded({ extended: false }))
  app.get("/health", (_req, res) => {
    res.type("text/plain").send("ok")
  })
  app.use("/billing", recur)
  return {
    app,
    billing,
    close: async () => {
      await recur.close()
      await billing.close()
    }
  }
}
