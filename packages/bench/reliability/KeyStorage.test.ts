import { afterAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Merchants } from "@recur/core"
import { Effect, Logger } from "effect"
import { api, report, size } from "./harness.js"

const app = api()
afterAll(() => app.dispose())

describe("key storage", () => {
  it("after creating many keys, no plaintext key is in the database, the logs or any error body", async () => {
    const n = size(100, 1000)
    const logs: Array<string> = []
    const collector = Logger.make(({ message }) => logs.push(JSON.stringify(message)))
    const originals = { log: console.log, error: console.error, warn: console.warn }
    for (const k of ["log", "error", "warn"] as const)
      console[k] = (...args: Array<unknown>) => void logs.push(args.map(String).join(" "))
    const keys: Array<string> = []
    try {
      const created = await app.runtime.runPromise(
        Effect.gen(function* () {
          const merchants = yield* Merchants.Merchants
          const out: Array<string> = []
          for (let i = 0; i < n / 2; i++) {
            const m = yield* merchants.create({ name: `K${i}`, currency: "USD" })
            yield* Effect.logInfo(`created merchant ${m.merchant.merchant_id}`)
            out.push(m.api_key)
            const rotated = yield* merchants.rotateKey(m.merchant.merchant_id, { graceMs: 60_000 })
            out.push(rotated.api_key)
          }
          return out
        }).pipe(Effect.provide(Logger.layer([collector])))
      )
      keys.push(...created)
      // requests that carry the keys, right and wrong
      const bodies: Array<string> = []
      for (const key of keys.slice(0, 50)) {
        for (const header of [`Bearer  ${key}`, `bearer ${key}`, `Bearer ${key}x`, `Basic ${key}`, key]) {
          bodies.push(
            JSON.stringify((await app.call("GET", "/api/v1/products", null, undefined, { authorization: header })).body)
          )
        }
        bodies.push(JSON.stringify((await app.call("POST", "/api/v1/front/customer/create", key, { email: 42 })).body))
        bodies.push(JSON.stringify((await app.call("GET", "/api/v1/products?limit=0", key)).body))
      }
      // every table, every row, as text
      const dump = await app.runtime.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const tables = yield* sql<{
            table_name: string
          }>`select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`
          const parts: Array<string> = []
          for (const { table_name } of tables) {
            const rows = yield* sql.unsafe<{ row: string }>(`select t::text as row from "${table_name}" t`)
            parts.push(...rows.map((r) => r.row))
          }
          return { text: parts.join("\n"), tables: tables.length, rows: parts.length }
        }) as Effect.Effect<{ text: string; tables: number; rows: number }, unknown, never>
      )
      const secretPart = (key: string) => key.slice("sk_test_".length)
      const inDb = keys.filter((k) => dump.text.includes(secretPart(k)))
      const inLogs = keys.filter((k) => logs.some((l) => l.includes(secretPart(k))))
      const inBodies = keys.filter((k) => bodies.some((b) => b.includes(secretPart(k))))
      expect(keys).toHaveLength(n)
      expect(dump.rows).toBeGreaterThan(n)
      expect([inDb, inLogs, inBodies]).toEqual([[], [], []])
      Object.assign(console, originals)
      report(
        `key storage: ${n} keys; ${dump.tables} tables / ${dump.rows} rows scanned, ${logs.length} log lines, ${bodies.length} error bodies — 0 plaintext keys found`
      )
    } finally {
      Object.assign(console, originals)
    }
  })
})
