/**
 * An Express app with the usual body parsers in front of everything, mounting Recur's REST API
 * under /billing (Express strips the mount path; the already-parsed body is re-serialised).
 */
import { createBilling, type StorageOption } from "@recur/embedded"
import { Mount } from "@recur/http"
import express from "express"

export async function createApp(options: { readonly publicUrl: string; readonly storage?: StorageOption }) {
  const billing = await createBilling({ storage: options.storage ?? "memory", publicUrl: options.publicUrl })
  const recur = await Mount.nodeHandler(billing)
  const app = express()
  app.use(express.json())
  app.use(express.urlencoded({ extended: false }))
  app.get("/health", (_req, res) => {
    res.type("text/plain").send("ok")
  })
  app.use("/billing", recur.handle)
  return {
    app,
    billing,
    close: async () => {
      await recur.close()
      await billing.close()
    }
  }
}
