/**
 * `recur subscription show`, `recur invoices list` and `recur export`, run as an operator runs
 * them: the `recur` script spawned against a PGlite data directory a journey wrote (a checkout
 * paid, three months renewed, a refund, customers whose names are hostile to spreadsheets), and a
 * merchant with 20,000 customers whose export is read as it is written. The export's stream is
 * also pulled in process to show a page is read only once the rows before it are written.
 */
import { describe, expect, it } from "@effect/vitest"
import { Entities, Store } from "@recur/core"
import { createBilling } from "@recur/embedded"
import { Effect, Layer, Stream } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll } from "vitest"
import * as Csv from "../src/Csv.js"
import * as Reports from "../src/Reports.js"
import { write } from "./fixtures/reportJourney.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const script = fileURLToPath(new URL("../bin/recur.mjs", import.meta.url))
const BIG = 20_000

/** The `recur` script as `pnpm recur` runs it from a clone (sources through tsx). */
const argv = (args: ReadonlyArray<string>) => ["--conditions=source", script, ...args]
const env = (dir: string) => {
  const { RECUR_MASTER_KEY: _k, DATABASE_URL: _d, ...rest } = process.env
  return { ...rest, RECUR_DATA_DIR: dir, RECUR_LOG_LEVEL: "warn" }
}

let dir = ""
let merchant = ""
let big = ""
let subscription = ""
let customer = ""

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "recur-reports-"))
  ;({ merchant, big, subscription, customer } = await write(dir, BIG))
}, 180_000)

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

const recur = (args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, argv(args), { cwd: root, env: env(dir), encoding: "utf8", timeout: 240_000 })

/** `recur` in a process of its own, its outputs collected. */
const recurAsync = (args: ReadonlyArray<string>) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, argv(args), { cwd: root, env: env(dir) })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += String(d)))
    child.stderr.on("data", (d) => (stderr += String(d)))
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

// every `recur` here starts tsx and opens PGlite: seconds each, more on a loaded machine
describe("recur subscription show, invoices list, export", { timeout: 300_000 }, () => {
  it("subscription show: state, price, the next invoice's amount and date, invoices, events oldest first", () => {
    const out = recur(["subscription", "show", subscription, "--merchant", merchant])
    expect(out.status, out.stderr).toBe(0)
    expect(out.stdout).toContain(`Subscription ${subscription}`)
    expect(out.stdout).toMatch(/status\s+active/)
    expect(out.stdout).toMatch(/Next invoice: 30\.00 USD on 2026-04-01T00:00:00\.000Z \(renewal/)
    expect(out.stdout).toMatch(/Invoices \(latest 4\)/)
    expect(out.stdout).toMatch(/INV-000003\s+2026-03-01T00:00:00\.000Z\s+success\s+renewal\s+30\.00\s+USD/)
    const events = out.stdout.slice(out.stdout.indexOf("Events ("))
    const timeline = [...events.matchAll(/^\s+(\S+Z)\s+(\S+)\s+(\S+)\s+evt_/gm)].map((m) => ({
      at: m[1]!,
      type: m[2]!
    }))
    expect(timeline.map((e) => e.at)).toEqual(timeline.map((e) => e.at).sort())
    expect(timeline[0]!.at.startsWith("2026-01-01")).toBe(true)
    expect(timeline.some((e) => e.type.includes("subscription"))).toBe(true)
    expect(timeline.some((e) => e.at.startsWith("2026-03-01"))).toBe(true)
    const types = timeline

    const json = recur(["subscription", "show", subscription, "--merchant", merchant, "--json"])
    expect(json.status, json.stderr).toBe(0)
    const detail = JSON.parse(json.stdout) as { upcoming: { amount: string }; events: Array<unknown> }
    expect(detail.upcoming.amount).toBe("30.00")
    // the saved card's processor token stays out of the output
    expect((detail as unknown as { record: { payment_token: string | null } }).record.payment_token).toBe("[redacted]")
    expect(detail.events).toHaveLength(types.length)
  })

  it("invoices list: a table, filtered by customer, subscription, status, dates and limit", () => {
    const all = recur(["invoices", "list", "--merchant", merchant])
    expect(all.status, all.stderr).toBe(0)
    const lines = all.stdout.trim().split("\n")
    expect(lines[0]).toMatch(
      /^INVOICE\s+NUMBER\s+CREATED\s+STATUS\s+TYPE\s+AMOUNT\s+CURRENCY\s+CUSTOMER\s+SUBSCRIPTION$/
    )
    expect(lines.slice(1).filter((l) => / renewal /.test(l))).toHaveLength(2)
    expect(lines.slice(1).filter((l) => / initial /.test(l))).toHaveLength(1)
    const rows = lines.length - 1
    expect(rows).toBeGreaterThanOrEqual(3)

    const filtered = recur([
      "invoices",
      "list",
      "--merchant",
      merchant,
      "--customer",
      customer,
      "--subscription",
      subscription,
      "--status",
      "success",
      "--since",
      "2026-02-01",
      "--until",
      "2026-03-01T00:00:00Z",
      "--json"
    ])
    expect(filtered.status, filtered.stderr).toBe(0)
    const invoices = filtered.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { invoice_type: string; amount: string; biz_status: string; created_at: string })
    expect(invoices.map((i) => [i.invoice_type, i.amount, i.biz_status])).toEqual([["renewal", "30.00", "success"]])
    expect(invoices[0]!.created_at.startsWith("2026-02-01")).toBe(true)

    const limited = recur(["invoices", "list", "--merchant", merchant, "--limit", "1"])
    expect(limited.stdout.trim().split("\n")).toHaveLength(2)
    const none = recur(["invoices", "list", "--merchant", merchant, "--status", "void"])
    expect(none.stdout.trim()).toBe("No invoices")
  })

  it("export: RFC 4180 CSV of invoices, refunds, subscriptions and customers in a date range; amounts from integers", () => {
    const invoices = recur(["export", "invoices", "--merchant", merchant, "--from", "2026-01-01", "--to", "2026-04-01"])
    expect(invoices.status, invoices.stderr).toBe(0)
    const rows = Csv.parse(invoices.stdout)
    expect(rows[0]).toEqual([
      "invoice_id",
      "number",
      "customer_id",
      "subscription_id",
      "invoice_type",
      "status",
      "currency",
      "amount_minor",
      "amount",
      "tax_minor",
      "tax",
      "cycle_index",
      "created_at",
      "paid_at"
    ])
    const cycles = rows.slice(1).filter((r) => r[4] !== "refund")
    // the journey's 5.00 refund: its credit note gives back, so its amounts are negative (the column sums to the net)
    expect(
      rows
        .slice(1)
        .filter((r) => r[4] === "refund")
        .map((r) => [r[7], r[8]])
    ).toEqual([["-500", "-5.00"]])
    expect(cycles).toHaveLength(3)
    for (const r of cycles) expect([r[6], r[7], r[8], r[9], r[10]]).toEqual(["USD", "3000", "30.00", "0", "0.00"])
    // newest first; every line ends CRLF
    expect(cycles.map((r) => r[12]!.slice(0, 10))).toEqual(["2026-03-01", "2026-02-01", "2026-01-01"])
    expect(invoices.stdout.split("\r\n").length).toBe(rows.length + 1)

    const february = Csv.parse(
      recur(["export", "invoices", "--merchant", merchant, "--from", "2026-02-01", "--to", "2026-03-01"]).stdout
    )
    expect(february.slice(1).map((r) => r[4])).toEqual(["renewal"])

    const refunds = Csv.parse(recur(["export", "refunds", "--merchant", merchant]).stdout)
    expect(refunds[0]).toEqual([
      "refund_id",
      "trade_id",
      "invoice_id",
      "status",
      "currency",
      "amount_minor",
      "amount",
      "reason",
      "created_at",
      "finished_at"
    ])
    expect(refunds.slice(1).map((r) => [r[4], r[5], r[6], r[7]])).toEqual([["USD", "500", "5.00", "goodwill"]])

    const subs = Csv.parse(recur(["export", "subscriptions", "--merchant", merchant]).stdout)
    expect(subs.slice(1).map((r) => [r[0], r[2], r[6]])).toEqual([[subscription, "active", "USD"]])

    const customers = Csv.parse(recur(["export", "customers", "--merchant", merchant]).stdout)
    const names = new Map(customers.slice(1).map((r) => [r[1], r[3]]))
    // a formula is shown as text; a comma, quotes and a line break survive quoting
    expect(names.get("formula")).toBe(`'=HYPERLINK("http://evil","x")`)
    expect(names.get("comma")).toBe('Acme, Inc. "the best"\nsecond line')
    expect(names.get("report-ada")).toBe("")
    expect(customers.slice(1).every((r) => r.length === customers[0]!.length)).toBe(true)
  })

  it("export of 20,000 customers: written while it is read, every row once, nothing of the other merchant", async () => {
    const child = spawn(process.execPath, argv(["export", "customers", "--merchant", big]), {
      cwd: root,
      env: env(dir)
    })
    const chunks: Array<Buffer> = []
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += String(d)))
    // the reader stops at the first rows: a streaming export cannot finish until it reads again
    const first = await new Promise<Buffer>((resolve, reject) => {
      child.stdout.once("data", (d: Buffer) => {
        child.stdout.pause()
        resolve(d)
      })
      child.once("exit", (code) => reject(new Error(`exited ${code} before writing: ${stderr}`)))
    })
    chunks.push(first)
    expect(child.exitCode).toBeNull()
    expect(Csv.parse(first.toString("utf8")).length).toBeLessThan(BIG)
    // both listened for before either can happen: stdout may close before or after the exit
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    const closed = new Promise((resolve) => child.stdout.once("close", resolve))
    child.stdout.on("data", (d: Buffer) => chunks.push(d))
    child.stdout.resume()
    const code = await exited
    await closed
    expect(code, stderr).toBe(0)
    const rows = Csv.parse(Buffer.concat(chunks).toString("utf8"))
    expect(rows).toHaveLength(BIG + 1)
    const ids = new Set(rows.slice(1).map((r) => r[0]))
    expect(ids.size).toBe(BIG)
    expect(rows[1]![1]).toBe(`big-${BIG - 1}`)
    expect(rows[BIG]![1]).toBe("big-0")
  })

  it("mistakes: one line on stderr, exit 1", async () => {
    // refused before the data directory is opened: these run side by side
    const early: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["export", "invoices"], /needs --merchant/],
      [["export", "orders", "--merchant", merchant], /export needs what to export: customers, subscriptions/],
      [["export", "invoices", "--merchant", merchant, "--from", "January"], /--from January is not a date/],
      [
        ["export", "invoices", "--merchant", merchant, "--from", "2026-02-01", "--to", "2026-01-01"],
        /--to must be after/
      ],
      [["invoices", "list", "--merchant", merchant, "--status", "paid"], /--status paid is not an invoice status/],
      [["invoices", "list", "--merchant", merchant, "--limit", "0"], /--limit 0 is not a number/],
      [["subscription", "show", "--merchant", merchant], /needs the subscription id/]
    ]
    // found missing in the data: one process at a time holds the directory
    const late: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["export", "invoices", "--merchant", "mch_unknown"], /No such merchant: mch_unknown/],
      [["subscription", "show", "sub_unknown", "--merchant", merchant], /No such subscription: sub_unknown/]
    ]
    const check = (
      args: ReadonlyArray<string>,
      message: RegExp,
      out: { status: number | null; stdout: string; stderr: string }
    ) => {
      expect(out.status, `${args.join(" ")}: ${out.stderr}`).toBe(1)
      expect(out.stdout, args.join(" ")).toBe("")
      const lines = out.stderr.trim().split("\n")
      expect(lines, args.join(" ")).toHaveLength(1)
      expect(lines[0]).toMatch(/^recur: /)
      expect(lines[0]).toMatch(message)
    }
    const results = await Promise.all(early.map(([args]) => recurAsync(args)))
    for (const [i, [args, message]] of early.entries()) check(args, message, results[i]!)
    for (const [args, message] of late) check(args, message, recur(args))
  }, 600_000)
})

describe("the export's stream", () => {
  it.effect("reads the next page only once the rows before it are written", () =>
    Effect.gen(function* () {
      let pagesRead = 0
      const written: Array<number> = []
      const counting = Layer.effect(
        Store.Storage,
        Effect.map(Effect.service(Store.Storage), (storage) =>
          Store.Storage.of({
            ...storage,
            repository: (entity) => {
              const repo = storage.repository(entity)
              return { ...repo, list: (m, q) => Effect.tap(repo.list(m, q), () => Effect.sync(() => pagesRead++)) }
            }
          })
        )
      )
      const billing = yield* Effect.promise(() => createBilling({ storage: "memory" }))
      const context = yield* Effect.promise(() => billing.context())
      const shop = yield* Effect.promise(() => billing.merchants.create({ name: "Stream", currency: "EUR" }))
      yield* Effect.gen(function* () {
        const repo = (yield* Store.Storage).repository(Entities.customer)
        yield* repo.insertMany(
          Array.from({ length: 450 }, (_, i) => ({
            id: `cus_s${String(i).padStart(25, "0")}`,
            merchant_id: shop.merchant_id,
            email: null,
            payer_id: `s-${i}`,
            name: null,
            phone: null,
            description: null,
            address: null,
            metadata: {},
            email_subscription: null,
            type: "customer" as const,
            created_at: 1_000 + i,
            updated_at: 1_000 + i,
            deleted_at: null
          }))
        )
      }).pipe(Effect.provide(context))
      yield* Stream.runForEach(Reports.exportCsv("customers", shop.merchant_id, {}), () =>
        Effect.sync(() => written.push(pagesRead))
      ).pipe(Effect.provide(counting), Effect.provide(context))
      yield* Effect.promise(() => billing.close())
      // the header before any page; then each chunk written right after its own page
      expect(written).toEqual([0, 1, 2, 3, 4, 5])
    })
  )
})
