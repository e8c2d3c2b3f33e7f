import { Merchants } from "@recur/core"
import { type BillingOptions, layer as engineLayer } from "@recur/embedded"
import { Http } from "@recur/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type Server } from "node:http"
import { type Browser, chromium } from "playwright-core"

/**
 * The browser suites' stage: the engine on memory storage behind a real node:http server on a
 * free port (extra `routes` answered before Recur), and Debian's Chromium started headless.
 */
export const stage = async (options: {
  readonly engine?: Omit<BillingOptions, "storage" | "publicUrl">
  readonly routes?: Readonly<Record<string, string>>
}) => {
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const engine = engineLayer({ ...options.engine, storage: "memory", publicUrl: base })
  const runtime = ManagedRuntime.make(engine, { memoMap }) as unknown as ManagedRuntime.ManagedRuntime<
    Merchants.Merchants,
    unknown
  >
  const recur = Http.toWebHandler(engine, memoMap)
  server.on("request", async (req, res) => {
    const extra = options.routes?.[req.url ?? ""]
    if (extra !== undefined) return void res.writeHead(200, { "content-type": "text/html" }).end(extra)
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v)
    const response = await recur.handler(
      new Request(`${base}${req.url}`, {
        method: req.method!,
        headers,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {})
      })
    )
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()))
  })
  const browser: Browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  return {
    base,
    browser,
    /** A merchant's API key. */
    merchantKey: async (input: Merchants.CreateMerchant) =>
      (await runtime.runPromise(Merchants.Merchants.use((m) => m.create(input)))).api_key,
    close: async () => {
      await browser.close()
      server.close()
      await recur.dispose()
      await runtime.dispose()
    }
  }
}

/** Where a screenshot goes: docs/screenshots, shown in the docs. */
export const shot = (name: string) => new URL(`../../../docs/screenshots/${name}`, import.meta.url).pathname

/**
 * A JSON call of the merchant API for a browser suite: its key and a fresh `Request-Id` (named
 * after the suite) on each; `where` is read at call time (the server starts in `beforeAll`).
 */
export const caller = (name: string, where: () => { readonly base: string; readonly key: string }) => {
  let n = 0
  return async (method: string, path: string, body?: unknown) => {
    const { base, key } = where()
    return (await (
      await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "request-id": `${name}-${++n}`, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
      })
    ).json()) as { data: any }
  }
}
