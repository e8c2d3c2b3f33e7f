/**
 * An existing Node HTTP app that mounts Recur's REST API under /billing, next to its own
 * routes. Recur's web handler takes a standard Request and returns a Response.
 */
import { Merchants } from "@recur/core"
import { layer as recurEngine } from "@recur/embedded"
import { Http } from "@recur/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"

export function createApp(options: { storage?: "memory" | { pglite: string } } = {}) {
  // one engine, shared by the mounted API and the host's own admin code (creating merchants)
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const engine = recurEngine({ storage: options.storage ?? "memory", publicUrl: "http://localhost:3000/billing" })
  const admin = ManagedRuntime.make(engine, { memoMap })
  const recur = Http.toWebHandler(engine, memoMap)
  const createMerchant = (name: string, currency: string) =>
    admin.runPromise(
      Merchants.Merchants.use((m) => m.create({ name, currency })).pipe(
        Effect.map((r) => ({ merchant_id: r.merchant.merchant_id, api_key: r.api_key }))
      )
    )

  const toRequest = async (req: IncomingMessage, prefix: string): Promise<Request> => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const url = new URL(req.url!.slice(prefix.length) || "/", `http://${req.headers.host}`)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v)
    return new Request(url, { method: req.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) })
  }

  const send = async (res: ServerResponse, response: Response) => {
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  }

  const server: Server = createServer(async (req, res) => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok") // the host's own route
      return
    }
    if (req.url?.startsWith("/billing/")) return send(res, await recur.handler(await toRequest(req, "/billing")))
    res.writeHead(404).end()
  })
  return {
    server,
    createMerchant,
    close: async () => {
      server.close()
      await recur.dispose()
      await admin.dispose()
    }
  }
}
