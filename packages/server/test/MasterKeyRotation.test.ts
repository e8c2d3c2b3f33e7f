/**
 * `recur master-key rotate` on a PGlite data directory: every stored secret (API keys, a webhook
 * endpoint's secret, a merchant's Stripe keys, a stored idempotent answer) reads back after the
 * rotation and a restart, the invoice link sent before keeps opening for the grace and not after,
 * and a rotation interrupted between its steps still starts and finishes when run again.
 */
import { describe, expect, it } from "@effect/vitest"
import { MasterKeyRotation, Merchants, Secrets, Webhooks } from "@recur/core"
import { createBilling, engineOn, layer } from "@recur/embedded"
import { MasterKey, Pg } from "@recur/sql"
import { SqlClient } from "effect/sql"
import { Effect, Option, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Mount } from "@recur/http"
import { readBack, type Written, write } from "../../http/test/fixtures/restart.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

const recur = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const { RECUR_MASTER_KEY: _k, DATABASE_URL: _d, ...rest } = process.env
  return spawnSync(process.execPath, ["--conditions=source", "--import", "tsx", main, ...args], {
    cwd: root,
    env: { ...rest, ...env },
    encoding: "utf8",
    timeout: 90_000
  })
}

/** A webhook receiver on port 0 that answers 200. */
const receiver = async () => {
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => res.writeHead(200).end("ok"))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Every secret written before reads back, and the link sent before opens. */
const expectReadable = async (dir: string, written: Written) => {
  const back = await readBack(dir, written)
  expect(back.authenticated).toBe(200)
  expect(back.customers).toEqual([written.customerId])
  expect(back.replay).toEqual([200, written.customerId])
  expect(back.page[0]).toBe(200)
  expect(back.page[1]).toContain(written.invoiceNumber)
  expect(back.credentials).toMatchObject({
    secret_key: written.stripeSecretKey,
    webhook_secret: written.stripeWebhookSecret
  })
}

/** The status of the invoice page at `path`, and the path the API gives the invoice now. */
const links = async (dir: string, written: Written, path: string) => {
  const billing = await createBilling({ storage: { pglite: dir }, publicUrl: "http://localhost:4000" })
  const api = await Mount.fetchHandler(billing)
  try {
    const page = await api.fetch(new Request(`http://localhost${path}`))
    const list = await api.fetch(
      new Request("http://localhost/api/v1/invoices", {
        headers: { authorization: `Bearer ${written.apiKey}`, "request-id": `rotate-${Date.now()}` }
      })
    )
    const body = (await list.json()) as { data: { list: Array<{ hosted_invoice_url: string }> } }
    expect(body.data?.list?.length, JSON.stringify(body)).toBe(1)
    const invoice = body.data.list[0]!
    const current = new URL(invoice.hosted_invoice_url).pathname
    const fresh = await api.fetch(new Request(`http://localhost${current}`))
    // the webhook endpoint's secret, decrypted: the one shown at its creation
    const endpointSecret = await Effect.runPromise(
      Effect.gen(function* () {
        const webhooks = yield* Webhooks.Webhooks
        const [endpoint] = (yield* webhooks.list(written.merchantId, { limit: 10 })).list
        return yield* webhooks.secretOf(written.merchantId, endpoint!.id)
      }).pipe(Effect.provide(await billing.context()))
    )
    expect(endpointSecret).toBe(written.endpointSecret)
    return { old: page.status, current, fresh: fresh.status }
  } finally {
    await api.close()
    await billing.close()
  }
}

const ROTATED =
  /^Master key rotated to key (\S+) \(was (\S+)\): (\d+) stored secrets re-encrypted, (\d+) invoice links signed again; links signed under the old key open until (\S+)$/m

describe("recur master-key rotate (PGlite data directory)", () => {
  it("re-encrypts every secret under a new key; after a restart secrets read back, old links open until the grace ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-rotate-"))
    const hooks = await receiver()
    try {
      const written = await write(dir, hooks.url)
      const oldKey = readFileSync(join(dir, "master.key"), "utf8").trim()
      const rotated = recur(["master-key", "rotate", "--grace", "2h"], { RECUR_DATA_DIR: dir })
      expect(rotated.status, rotated.stderr).toBe(0)
      const m = ROTATED.exec(rotated.stdout)
      expect(m, rotated.stdout).not.toBeNull()
      expect(rotated.stdout.trim().split("\n")).toHaveLength(1)
      // no key is printed, only key ids
      expect(rotated.stdout).not.toMatch(/[0-9a-f]{64}/)
      expect(Number(m![3])).toBeGreaterThanOrEqual(5) // 2 API keys, the endpoint, the Stripe keys, the answer
      expect(Number(m![4])).toBe(1)
      const until = Date.parse(m![5]!)
      expect(until - Date.now()).toBeGreaterThan(2 * 3_600_000 - 120_000)
      const newKey = readFileSync(join(dir, "master.key"), "utf8").trim()
      expect(newKey).toMatch(/^[0-9a-f]{64}$/)
      expect(newKey).not.toBe(oldKey)
      expect(existsSync(join(dir, MasterKey.NEXT_FILE))).toBe(false)
      const previous = join(dir, MasterKey.PREVIOUS_FILE)
      expect(readFileSync(previous, "utf8")).toBe(`${oldKey} ${until}\n`)
      expect(statSync(previous).mode & 0o777).toBe(0o600)

      // a restart: everything reads back, the link sent before opens, the API hands out a new one
      await expectReadable(dir, written)
      const within = await links(dir, written, written.invoicePath)
      expect(within.old).toBe(200)
      expect(within.current).not.toBe(written.invoicePath)
      expect(within.fresh).toBe(200)

      // the grace is over (the instant the file keeps has passed): the old link no longer opens
      writeFileSync(previous, `${oldKey} ${Date.now() - 1}\n`)
      const after = await links(dir, written, written.invoicePath)
      expect(after.old).toBe(404)
      expect(after.fresh).toBe(200)
      await expectReadable(dir, { ...written, invoicePath: after.current })
    } finally {
      await hooks.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

  it("a rotation stopped after writing the new key, or after its transaction, still starts; running it again finishes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-rotate-crash-"))
    const hooks = await receiver()
    try {
      const written = await write(dir, hooks.url)
      const oldKey = readFileSync(join(dir, "master.key"), "utf8").trim()
      const next = Redacted.make(MasterKey.generate())

      // stopped right after step 1 (the new key written beside the data, nothing encrypted under it)
      await Effect.runPromise(MasterKey.writeNext(dir, next))
      await expectReadable(dir, written)

      // stopped after step 2 (the transaction committed: every secret is under the new key), before the promotion
      await Effect.runPromise(
        MasterKeyRotation.resealAll().pipe(
          Effect.provide(
            layer({ storage: { pglite: dir }, masterKey: Redacted.value(next), previousMasterKeys: [{ key: oldKey }] })
          )
        )
      )
      expect(readFileSync(join(dir, "master.key"), "utf8").trim()).toBe(oldKey)
      await expectReadable(dir, written)
      const pending = await links(dir, written, written.invoicePath)
      expect([pending.old, pending.fresh]).toEqual([200, 200])

      // run again: the same new key is taken from master.key.next and promoted
      const rotated = recur(["master-key", "rotate"], { RECUR_DATA_DIR: dir })
      expect(rotated.status, rotated.stderr).toBe(0)
      expect(ROTATED.exec(rotated.stdout)?.[1], rotated.stdout).toBe(Secrets.keyIdOf(next))
      expect(readFileSync(join(dir, "master.key"), "utf8").trim()).toBe(Redacted.value(next))
      expect(existsSync(join(dir, MasterKey.NEXT_FILE))).toBe(false)
      await expectReadable(dir, written)
    } finally {
      await hooks.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})

const url = process.env.RECUR_TEST_DATABASE_URL
describe.skipIf(url === undefined)("recur master-key rotate (PostgreSQL, keys in the environment)", () => {
  it("--new-key or a generated key printed once; the old key then only in RECUR_MASTER_KEY_PREVIOUS", async () => {
    const schema = `recur_rotate_${Date.now().toString(36)}`
    const on = <A, E>(
      keys: { masterKey: string; previousMasterKeys?: ReadonlyArray<{ key: string }> },
      program: Effect.Effect<A, E, Merchants.Merchants | Webhooks.Webhooks | SqlClient.SqlClient>
    ) => Effect.runPromise(Effect.provide(program, engineOn(Pg.layerPgUrl({ url: url!, schema }), keys)))
    const oldKey = MasterKey.generate()
    const env = { DATABASE_URL: url!, RECUR_DATABASE_SCHEMA: schema }
    try {
      const written = await on(
        { masterKey: oldKey },
        Effect.gen(function* () {
          const created = yield* (yield* Merchants.Merchants).create({ name: "PG shop", currency: "USD" })
          const m = created.merchant.merchant_id
          const endpoint = yield* (yield* Webhooks.Webhooks).create(m, {
            url: "http://127.0.0.1:9/hooks",
            all_events: true
          })
          return { m, apiKey: created.api_key, endpoint }
        })
      )
      const readable = (keys: { masterKey: string; previousMasterKeys?: ReadonlyArray<{ key: string }> }) =>
        on(
          keys,
          Effect.gen(function* () {
            const auth = yield* (yield* Merchants.Merchants).authenticate(written.apiKey)
            expect(auth.merchant.merchant_id).toBe(written.m)
            const keysOf = yield* (yield* Merchants.Merchants).signingKeys(written.m)
            expect(keysOf.current).toEqual(Option.some(written.apiKey))
            return yield* (yield* Webhooks.Webhooks).secretOf(written.m, written.endpoint.id)
          })
        )

      const newKey = MasterKey.generate()
      const given = recur(["master-key", "rotate", "--new-key", newKey, "--grace", "1h"], {
        ...env,
        RECUR_MASTER_KEY: oldKey
      })
      expect(given.status, given.stderr).toBe(0)
      expect(given.stdout.trim().split("\n")).toHaveLength(1)
      expect(given.stdout).toMatch(
        /Now set RECUR_MASTER_KEY to the new key, RECUR_MASTER_KEY_PREVIOUS to the old one and RECUR_MASTER_KEY_PREVIOUS_UNTIL=\S+, and restart every Recur process/
      )
      expect(given.stdout).not.toMatch(/[0-9a-f]{64}/)
      // every secret is under the new key: the new key alone reads them
      expect(await readable({ masterKey: newKey })).toBe(written.endpoint.secret)

      // a generated key, printed once before the transaction
      const generated = recur(["master-key", "rotate"], {
        ...env,
        RECUR_MASTER_KEY: newKey,
        RECUR_MASTER_KEY_PREVIOUS: oldKey
      })
      expect(generated.status, generated.stderr).toBe(0)
      const lines = generated.stdout.trim().split("\n")
      expect(lines).toHaveLength(2)
      const printed = /^New master key \(shown once; keep it with your backups\): ([0-9a-f]{64})$/.exec(lines[0]!)?.[1]
      expect(printed, generated.stdout).toBeDefined()
      expect(await readable({ masterKey: printed!, previousMasterKeys: [] })).toBe(written.endpoint.secret)
      // the key it replaced is no longer enough
      const stale = await Effect.runPromiseExit(
        Effect.provide(
          Effect.flatMap(Webhooks.Webhooks, (w) => w.secretOf(written.m, written.endpoint.id)),
          engineOn(Pg.layerPgUrl({ url: url!, schema }), { masterKey: newKey })
        )
      )
      expect(stale._tag).toBe("Failure")
    } finally {
      await on(
        { masterKey: oldKey },
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`drop schema if exists ${schema} cascade`))
      ).catch(() => undefined)
    }
  }, 300_000)
})
