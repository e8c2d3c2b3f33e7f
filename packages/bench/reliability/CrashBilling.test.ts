import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Billing, Catalog, Checkout, Merchants, SessionPayments } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { Pg } from "@recur/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { databaseUrl, report, size } from "./harness.js"
import pg from "pg"
import { withShiftedClock } from "../src/clock.js"
import { cloneTemplate, seedTemplate } from "../src/seed.js"

// kill -9 the billing worker at random points while it renews due subscriptions, restart it,
// and finish: exactly one renewal invoice per subscription, none missing, each paid by one
// trade, and the sum invoiced equals the model.

const main = fileURLToPath(new URL("../../server/src/main.ts", import.meta.url))
const root = fileURLToPath(new URL("../../..", import.meta.url))
const DAY = 86_400_000

describe("crash mid-billing", () => {
  it("kill -9 the worker again and again during renewals: every cycle billed exactly once", async () => {
    const n = size(300, 100_000)
    const kills = size(8, 50)
    // at full size on PostgreSQL a template of real subscriptions is cloned in SQL (services seed ~150/s)
    const template = databaseUrl && n > 1_000 ? 500 : 0
    const masterKey = [...crypto.getRandomValues(new Uint8Array(32))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("")
    const schema = Pg.freshSchemaName("recur_crash")
    const dataDir = mkdtempSync(join(tmpdir(), "recur-crash-"))
    const storage = () => (databaseUrl ? Pg.layerPgUrl({ url: databaseUrl, schema }) : Pg.layerPglite({ dataDir }))
    const env = {
      ...process.env,
      RECUR_MASTER_KEY: masterKey,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, RECUR_DATABASE_SCHEMA: schema } : { RECUR_DATA_DIR: dataDir })
    }
    try {
      // seed: a merchant on the real clock whose subscriptions started 31 days ago (a sandbox
      // merchant without a frozen time: the sandbox gateway charges it, as it may not a live one)
      /** Seeds `n` due subscriptions through the services. */
      const serviceSeed = async () => {
        const seeding = ManagedRuntime.make(engineOn(storage(), { masterKey }))
        const id = await seeding.runPromise(
          Effect.gen(function* () {
            const m = yield* (yield* Merchants.Merchants).create({ name: "Crash", currency: "USD", mode: "sandbox" })
            const catalog = yield* Catalog.Catalog
            const product = yield* catalog.createProduct(m.merchant.merchant_id, { product_name: "Pro" })
            const price = yield* catalog.createPrice(m.merchant.merchant_id, {
              name: "Pro",
              product_id: product.product_id,
              currency: "USD",
              billing_type: "recurring",
              price_type: "flat_price",
              price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
            })
            const _billing = yield* Billing.Billing
            const sessionPayments = yield* SessionPayments.SessionPayments
            const checkout = yield* Checkout.Checkout
            yield* Effect.forEach(
              Array.from({ length: n }, (_, i) => i),
              (i) =>
                Effect.gen(function* () {
                  const s = yield* checkout.createSession(
                    m.merchant.merchant_id,
                    Checkout.sessionOf(price.id, { payerId: `crash-${i}` })
                  )
                  yield* sessionPayments.paySession(m.merchant.merchant_id, s.session_id, {
                    number: "4242424242424242",
                    exp_month: 12,
                    exp_year: 2099,
                    cvc: "123"
                  })
                }),
              { concurrency: databaseUrl ? 8 : 1, discard: true }
            )
            return m.merchant.merchant_id
          }).pipe(withShiftedClock(-31 * DAY))
        )
        await seeding.dispose()
        return id
      }
      /** Seeds a template through the services and clones it in SQL up to `n`. */
      const cloneSeed = async () => {
        const id = await seedTemplate({ url: databaseUrl!, schema, masterKey }, template)
        const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path="${schema}"` })
        await client.connect()
        try {
          await cloneTemplate(client, schema, id, Math.ceil(n / template) - 1)
        } finally {
          await client.end()
        }
        return id
      }
      const seedStart = Date.now()
      const merchantId = template > 0 ? await cloneSeed() : await serviceSeed()
      const seeded = Date.now() - seedStart

      const worker = () =>
        spawn(process.execPath, ["--conditions=source", "--import", "tsx", main, "worker"], {
          cwd: root,
          env,
          stdio: ["ignore", "ignore", "ignore"]
        })
      const exit = (p: ReturnType<typeof worker>) => new Promise<void>((resolve) => p.once("exit", () => resolve()))
      const started = Date.now()
      for (let k = 0; k < kills; k++) {
        const p = worker()
        // at full size the kills are spread over the whole run (a worker lives 4 to 20 s)
        await new Promise((r) => setTimeout(r, size(1_500, 4_000) + Math.random() * size(2_500, 16_000)))
        p.kill("SIGKILL")
        await exit(p)
      }
      const open = () =>
        ManagedRuntime.make(Layer.provideMerge(Layer.empty, storage() as Layer.Layer<SqlClient.SqlClient, unknown>))
      const due = async () => {
        const rt = open()
        const [row] = await rt.runPromise(
          SqlClient.SqlClient.use(
            (sql) =>
              sql<{
                n: number
              }>`select count(*)::int as n from recur_work_items where due_at <= ${Date.now()} and kind in ('renewal', 'charge', 'reconcile')`
          )
        )
        await rt.dispose()
        return row!.n
      }
      // a worker that is allowed to finish, stopped politely once nothing is due; PGlite's data
      // directory belongs to one process at a time, so there it is stopped before each look
      let rounds = 0
      let finisher = worker()
      for (;;) {
        await new Promise((r) => setTimeout(r, databaseUrl ? 5_000 : 8_000))
        rounds++
        if (!databaseUrl) {
          finisher.kill("SIGTERM")
          await exit(finisher)
        }
        if ((await due()) === 0 || rounds > size(60, 1_000)) break
        if (!databaseUrl) finisher = worker()
      }
      if (databaseUrl) {
        finisher.kill("SIGTERM")
        await exit(finisher)
      }
      const elapsed = Date.now() - started

      const rt = open()
      const facts = await rt.runPromise(
        SqlClient.SqlClient.use((sql) =>
          Effect.gen(function* () {
            const [inv] = yield* sql<{
              n: number
              subs: number
              paid: number
              total: string
            }>`select count(*)::int as n, count(distinct subscription_id)::int as subs, count(*) filter (where biz_status = 'success')::int as paid, coalesce(sum(amount_minor), 0)::text as total from recur_invoices where merchant_id = ${merchantId} and invoice_type = 'renewal'`
            const [per] = yield* sql<{
              worst: number
            }>`select coalesce(max(c), 0)::int as worst from (select count(*) as c from recur_invoices where merchant_id = ${merchantId} and invoice_type = 'renewal' group by subscription_id, cycle_index) x`
            const [tr] = yield* sql<{
              n: number
              ok: number
            }>`select count(*)::int as n, count(*) filter (where trade_status = 'succeeded')::int as ok from recur_trades where merchant_id = ${merchantId}`
            const [paidBy] = yield* sql<{
              n: number
            }>`select count(distinct i.trade_id)::int as n from recur_invoices i join recur_trades t on t.id = i.trade_id and t.merchant_id = i.merchant_id where i.merchant_id = ${merchantId} and i.invoice_type = 'renewal' and t.trade_status = 'succeeded'`
            return { inv: inv!, worst: per!.worst, trades: tr!, paidBy: paidBy!.n }
          })
        )
      )
      await rt.dispose()
      report(
        `crash mid-billing: ${n} due subscriptions (seeded in ${(seeded / 1000).toFixed(1)} s), ${kills} kill -9 of the worker, then one worker to the end (${rounds * (databaseUrl ? 5 : 8)} s), ${(elapsed / 1000).toFixed(1)} s; renewal invoices ${facts.inv.n} for ${facts.inv.subs} subscriptions, max per cycle ${facts.worst}, paid ${facts.inv.paid}, trades ${facts.trades.n} (${facts.trades.ok} succeeded), Σ ${facts.inv.total} minor units`
      )
      expect(facts.worst).toBe(1)
      expect([facts.inv.n, facts.inv.subs, facts.inv.paid, facts.paidBy]).toEqual([n, n, n, n])
      expect(facts.trades).toEqual({ n: 2 * n, ok: 2 * n })
      expect(facts.inv.total).toBe(String(3000 * n))
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
      if (databaseUrl) {
        const client = new pg.Client({ connectionString: databaseUrl })
        await client.connect()
        await client.query(`drop schema if exists "${schema}" cascade`).finally(() => client.end())
      }
    }
  })
})
