import { Merchants, type Store } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { Http } from "@recur/http"
import { Pg } from "@recur/sql"
import { Effect, Layer, ManagedRuntime } from "effect"

/** A JSON answer of the API, parsed. */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

/** The storages the HTTP suites run on: PGlite always, PostgreSQL when `RECUR_TEST_DATABASE_URL` is set. */
export const backends = (): ReadonlyArray<readonly [string, () => Layer.Layer<Store.Storage, unknown>]> => {
  const url = process.env.RECUR_TEST_DATABASE_URL
  return [
    ["PGlite", () => Pg.layerPglite()],
    ...(url ? [["PostgreSQL", () => Pg.layerPgUrl({ url, schema: Pg.freshSchemaName() })] as const] : [])
  ]
}

/**
 * The real adapter in process over `storage`: a web handler plus helpers that speak JSON to it.
 */
export const serve = (storage: Layer.Layer<Store.Storage, unknown>) => {
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const engine = engineOn(storage, { publicUrl: "http://localhost:4000" })
  const runtime = ManagedRuntime.make(engine, memoMap)
  const web = Http.toWebHandler(engine, memoMap)
  let n = 0
  const call = async (method: string, path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const h: Record<string, string> = { "content-type": "application/json", "request-id": `req-${++n}-${Math.random().toString(36).slice(2)}` }
    if (key !== null) h.authorization = `Bearer ${key}`
    Object.assign(h, headers)
    const res = await web.handler(new Request(`http://localhost${path}`, { method, headers: h, ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}) }))
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) }
  }
  const merchant = (options: { readonly live?: boolean; readonly frozen?: string } = {}) =>
    runtime.runPromise(Effect.flatMap(Merchants.Merchants, (m) =>
      m.create({ name: "Acme", currency: "USD", ...(options.live ? { mode: "live" as const } : { frozen_time: Date.parse(options.frozen ?? "2026-01-01T00:00:00Z") }) })))
  const dispose = async () => {
    await web.dispose()
    await runtime.dispose()
  }
  return { call, merchant, runtime, handler: web.handler, dispose }
}
