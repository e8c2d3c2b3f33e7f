import { describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type AddressInfo, createServer } from "node:net"
import { fileURLToPath } from "node:url"
import * as Config from "../src/Config.js"
import { Migrations, Pg } from "@recur/sql"
import { Effect, Result } from "effect"
import { SqlClient } from "effect/sql"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const fakeMain = fileURLToPath(new URL("../../payment-stripe/test/fake/main.ts", import.meta.url))

/** The local Stripe fake in a process of its own (the CLI runs with spawnSync), knowing `accounts`. */
const stripeFake = async (accounts: ReadonlyArray<Record<string, unknown>>) => {
  const child = spawn(process.execPath, ["--import", "tsx", fakeMain, JSON.stringify(accounts)], { cwd: root })
  const base = await new Promise<string>((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Error(`the fake did not start: ${out}`)), 30_000)
    child.stdout.on("data", (d) => {
      out += String(d)
      const line = /\{"base":"([^"]+)"\}/.exec(out)
      if (line) {
        clearTimeout(timer)
        resolve(line[1]!)
      }
    })
  })
  return { base, close: () => child.kill("SIGTERM") }
}
const recur = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  spawnSync(process.execPath, ["--conditions=source", "--import", "tsx", main, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000
  })

describe("recur CLI and server", () => {
  it("serve: prints the demo key, answers requests, and shuts down cleanly on SIGTERM; data survives a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "recur-serve-"))
    // port 0: the system picks a free port, and the server says which one it listens on
    const start = () =>
      spawn(process.execPath, ["--conditions=source", "--import", "tsx", main, "serve"], {
        cwd: root,
        env: { ...process.env, PORT: "0", RECUR_DATA_DIR: dataDir }
      })
    const portOf = (out: string) => {
      const m = /Recur listening on port (\d+): http:\/\/localhost:(\d+) /.exec(out)
      expect(m?.[1], out).toBe(m?.[2])
      expect(Number(m?.[1])).toBeGreaterThan(0)
      return m![1]!
    }
    try {
      const server = start()
      let out = ""
      server.stdout.on("data", (d) => (out += String(d)))
      server.stderr.on("data", (d) => (out += String(d)))
      const key = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no key printed: ${out}`)), 60_000)
        const check = setInterval(() => {
          const m = /Demo API key: (sk_test_\w+)/.exec(out)
          if (m && out.includes("listening")) {
            clearTimeout(timer)
            clearInterval(check)
            resolve(m[1]!)
          }
        }, 100)
      })
      let port = portOf(out)
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/front/customer/create`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "request-id": "cli-1", "content-type": "application/json" },
        body: JSON.stringify({ payer_id: "survivor" })
      })
      expect(res.status).toBe(200)
      // through node:http: a multipart upload is refused at once (415), an oversized body by its length (413)
      const headers = { authorization: `Bearer ${key}`, "request-id": "cli-hostile" }
      const form = new FormData()
      form.set("payer_id", "multipart")
      const multipart = await fetch(`http://127.0.0.1:${port}/api/v1/front/customer/create`, {
        method: "POST",
        headers,
        body: form,
        signal: AbortSignal.timeout(20_000)
      })
      expect([multipart.status, ((await multipart.json()) as { code: string }).code]).toEqual([
        415,
        "unsupported_media_type"
      ])
      const huge = await fetch(`http://127.0.0.1:${port}/api/v1/front/customer/create`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ payer_id: "huge", name: "x".repeat(3 * 1024 * 1024) }),
        signal: AbortSignal.timeout(20_000)
      })
      expect([huge.status, ((await huge.json()) as { code: string }).code]).toEqual([413, "payload_too_large"])
      // the directory is this server's: a CLI command on it is refused, naming the server, in one line
      const refused = recur(["merchant", "create", "--name", "Second", "--currency", "USD"], {
        RECUR_DATA_DIR: dataDir
      })
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain(`is in use by process ${server.pid}`)
      expect(refused.stderr).not.toContain("    at ")
      const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)))
      server.kill("SIGTERM")
      expect(await exited).toBe(0)

      // a live merchant without Stripe keys: named at the next start, which still serves the others
      const liveShop = recur(["merchant", "create", "--name", "Live", "--currency", "USD", "--live", "--json"], {
        RECUR_DATA_DIR: dataDir
      })
      expect(liveShop.status, liveShop.stderr).toBe(0)
      const liveId = JSON.parse(liveShop.stdout.trim().split("\n").at(-1)!).merchant_id as string

      // restart on the same data: no second demo merchant, the customer is still there
      const again = start()
      let out2 = ""
      again.stdout.on("data", (d) => (out2 += String(d)))
      again.stderr.on("data", (d) => (out2 += String(d)))
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(out2)), 60_000)
        const check = setInterval(() => {
          if (out2.includes("listening") && out2.includes("existing data") && out2.includes("payments refused")) {
            clearTimeout(timer)
            clearInterval(check)
            resolve()
          }
        }, 100)
      })
      port = portOf(out2)
      expect(out2).toContain(`Recur: payments refused: merchant ${liveId} is live and has no payment processor`)
      const list = await fetch(`http://127.0.0.1:${port}/api/v1/front/customer?payer_ids=survivor`, {
        headers: { authorization: `Bearer ${key}`, "request-id": "cli-2" }
      })
      expect(((await list.json()) as { data: { list: Array<unknown> } }).data.list).toHaveLength(1)
      const done = new Promise<number | null>((resolve) => again.on("exit", (code) => resolve(code)))
      again.kill("SIGINT")
      expect(await done).toBe(0)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 150_000)

  it("a mistake in the command line or the configuration is one line on stderr and exit 1, never a stack trace", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "recur-cli-"))
    try {
      const told = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
        const r = recur(args, { RECUR_DATA_DIR: dataDir, ...env })
        return { status: r.status, stderr: r.stderr.trim(), stdout: r.stdout.trim() }
      }
      expect(told(["merchant", "create", "--name", "Acme"])).toEqual({
        status: 1,
        stderr: "recur: merchant create needs --name and --currency",
        stdout: ""
      })
      expect(told(["migrate"], { PORT: "99999" })).toEqual({
        status: 1,
        stderr: 'recur: PORT must be a port number from 0 to 65535 (0: any free port), not "99999"',
        stdout: ""
      })
      // several mistakes at once: each told on its own line, all in one go, and nothing touched
      const several = told(["serve"], {
        PORT: "abc",
        RECUR_RATE_LIMIT: "fast",
        RECUR_LOG_LEVEL: "loud",
        RECUR_ACCESS_LOG: "maybe",
        RECUR_MAX_BODY_BYTES: "12",
        RECUR_DUNNING_FINAL_STATE: "gone"
      })
      expect(several.status).toBe(1)
      expect(several.stderr.split("\n")).toEqual([
        'recur: RECUR_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, none, not "loud"',
        'recur: PORT must be a port number from 0 to 65535 (0: any free port), not "abc"',
        'recur: RECUR_RATE_LIMIT must be "off" or "<per second>/<burst>" (e.g. 100/200), not "fast"',
        'recur: RECUR_MAX_BODY_BYTES must be between 1024 and 67108864 (64 MiB), not "12"',
        'recur: RECUR_ACCESS_LOG must be true or false, not "maybe"',
        'recur: RECUR_DUNNING_FINAL_STATE must be unpaid or canceled, not "gone"'
      ])
      expect(existsSync(join(dataDir, "master.key"))).toBe(false)
      expect(told(["key", "rotate", "--merchant", "mch_x", "--grace", "5y"]).stderr).toBe(
        "recur: --grace 5y is not a duration up to 3650d (e.g. 90s, 3m, 7d)"
      )
      const master = told(["master-key", "rotate", "--grace", "99999d"])
      expect(master.status).toBe(1)
      expect(master.stderr).toBe("recur: --grace 99999d is not a duration up to 3650d (e.g. 90s, 3m, 7d)")
      // a port another process holds: the system's reason, on one line
      const holder = createServer()
      await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
      try {
        const busy = told(["serve"], { PORT: String((holder.address() as AddressInfo).port) })
        expect(busy.status).toBe(1)
        expect(busy.stderr).toMatch(/^recur: ServeError: listen EADDRINUSE[^\n]*$/)
      } finally {
        await new Promise((resolve) => holder.close(resolve))
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 300_000)

  it("settings: a merchant's proration and dunning settings shown and set; a mistake is one line, nothing saved", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "recur-settings-"))
    try {
      const env = { RECUR_DATA_DIR: dataDir }
      const created = recur(["merchant", "create", "--name", "Acme", "--currency", "USD", "--json"], env)
      expect(created.status, created.stderr).toBe(0)
      const m = JSON.parse(created.stdout.trim().split("\n").at(-1)!).merchant_id as string
      const set = recur(["settings", "proration", "set", "per_day", "--merchant", m], env)
      expect(set.status, set.stderr).toBe(0)
      expect(set.stdout.trim().split("\n").at(-1)).toBe(`Merchant ${m} prorates per_day`)
      const bad = recur(["settings", "proration", "set", "weekly", "--merchant", m], env)
      expect([bad.status, bad.stderr.trim()]).toEqual([
        1,
        "recur: proration_policy: must be per_second, per_day or fixed_days(n)"
      ])
      const dunning = recur(
        [
          "settings",
          "set",
          "--merchant",
          m,
          "--dunning-retry-days",
          "1,3,5",
          "--dunning-final-state",
          "canceled",
          "--dunning-on-decline",
          "hard=retry",
          "--json"
        ],
        env
      )
      expect(dunning.status, dunning.stderr).toBe(0)
      // the policy set before, kept; nothing of the refused one saved
      expect(JSON.parse(dunning.stdout.trim().split("\n").at(-1) ?? "null"), dunning.stdout).toEqual({
        proration_policy: "per_day",
        proration_credit: "refund",
        dunning_final_state: "canceled",
        dunning_retry_days: [1, 3, 5],
        dunning_on_decline: { hard: "retry", soft: "retry", expired_card: "stop" },
        invoice_draft_grace_seconds: 0,
        usage_adjustments: "automatic"
      })
      const badRule = recur(["settings", "set", "--merchant", m, "--dunning-on-decline", "hard=later"], env)
      expect([badRule.status, badRule.stderr.trim()]).toEqual([
        1,
        "recur: --dunning-on-decline must be class=action pairs (hard, soft, expired_card; retry or stop) or default"
      ])
      const unknown = recur(["settings", "show", "--merchant", "mch_unknown"], env)
      expect([unknown.status, unknown.stderr.trim()]).toEqual([1, "recur: no merchant mch_unknown"])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 300_000)

  it("merchant create --json, key rotate, and clear configuration errors", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "recur-cli-"))
    let fake: Awaited<ReturnType<typeof stripeFake>> | undefined
    try {
      const created = recur(["merchant", "create", "--name", "Acme", "--currency", "EUR", "--json"], {
        RECUR_DATA_DIR: dataDir
      })
      expect(created.status).toBe(0)
      const { api_key, merchant_id } = JSON.parse(created.stdout.trim().split("\n").at(-1)!) as {
        merchant_id: string
        api_key: string
      }
      expect(merchant_id).toMatch(/^mch_/)
      expect(api_key).toMatch(/^sk_test_/)
      const rotated = recur(["key", "rotate", "--merchant", merchant_id, "--grace", "1m", "--json"], {
        RECUR_DATA_DIR: dataDir
      })
      expect(rotated.status).toBe(0)
      expect(JSON.parse(rotated.stdout.trim().split("\n").at(-1)!).api_key).toMatch(/^sk_test_/)
      // the merchant's Stripe keys: the secrets from the environment, out of the shell's history;
      // verified with Stripe (the local fake) before they are saved
      const started = await stripeFake([
        { secret_key: "sk_test_cliMerchantKey1", publishable_key: "pk_test_cliMerchantKey1" },
        { secret_key: "sk_test_cliOtherAccount", publishable_key: "pk_test_cliOtherAccount" }
      ])
      fake = started
      const withFake = { RECUR_DATA_DIR: dataDir, RECUR_STRIPE_API_BASE: started.base }
      // a publishable key of another account, a key Stripe does not know: refused, nothing saved
      const foreign = recur(
        [
          "merchant",
          "payments",
          "--merchant",
          merchant_id,
          "--stripe-publishable-key",
          "pk_test_cliOtherAccount",
          "--json"
        ],
        { ...withFake, STRIPE_SECRET_KEY: "sk_test_cliMerchantKey1" }
      )
      expect(foreign.status).not.toBe(0)
      // one line on stderr, no stack trace
      expect(foreign.stderr.trim()).toMatch(
        /^recur: publishable_key: belongs to another Stripe account than the secret key \(acct_\w+\)$/
      )
      const unknown = recur(
        ["merchant", "payments", "--merchant", merchant_id, "--stripe-publishable-key", "pk_test_cliMerchantKey1"],
        { ...withFake, STRIPE_SECRET_KEY: "sk_test_cliNotAKeyOfStripe" }
      )
      expect(unknown.status).not.toBe(0)
      expect(unknown.stderr.trim()).toBe(
        "recur: secret_key: Stripe does not accept this secret key (rolled, deleted or mistyped)"
      )
      expect(unknown.stderr + unknown.stdout).not.toContain("sk_test_cliNotAKeyOfStripe")
      const stripe = recur(
        [
          "merchant",
          "payments",
          "--merchant",
          merchant_id,
          "--stripe-publishable-key",
          "pk_test_cliMerchantKey1",
          "--json"
        ],
        {
          ...withFake,
          STRIPE_SECRET_KEY: "sk_test_cliMerchantKey1",
          STRIPE_WEBHOOK_SECRET: "whsec_cliMerchantSecret"
        }
      )
      expect(stripe.status, stripe.stderr).toBe(0)
      const view = JSON.parse(stripe.stdout.trim().split("\n").at(-1)!)
      expect(view).toMatchObject({ provider: "stripe", secret_key_last4: "Key1", webhook_secret_set: true })
      expect(stripe.stdout).not.toContain("sk_test_cliMerchantKey1")
      // Stripe not answering (nothing listens there): one line, exit 1, nothing saved
      const silent = recur(
        ["merchant", "payments", "--merchant", merchant_id, "--stripe-publishable-key", "pk_test_cliOtherAccount"],
        {
          RECUR_DATA_DIR: dataDir,
          RECUR_STRIPE_API_BASE: "http://127.0.0.1:9",
          STRIPE_SECRET_KEY: "sk_test_cliOtherAccount"
        }
      )
      expect(silent.status).toBe(1)
      expect(silent.stderr.trim()).toMatch(/^recur: [^\n]+$/)
      expect(silent.stderr).not.toContain("sk_test_cliOtherAccount")
      const live = recur(
        ["merchant", "payments", "--merchant", merchant_id, "--stripe-secret-key", "sk_live_cliMerchantKey1"],
        { RECUR_DATA_DIR: dataDir }
      )
      expect(live.status).not.toBe(0)
      expect(live.stderr.trim()).toBe(
        "recur: secret_key: must be a Stripe test secret key: sk_test_ or rk_test_ followed by 8 to 247 letters and digits"
      )
      const back = recur(["merchant", "payments", "--merchant", merchant_id, "--sandbox", "--json"], {
        RECUR_DATA_DIR: dataDir
      })
      expect(JSON.parse(back.stdout.trim().split("\n").at(-1)!).provider).toBe("sandbox")
      // a live merchant never goes (back) to the sandbox
      const liveShop = recur(["merchant", "create", "--name", "Live", "--currency", "USD", "--live", "--json"], {
        RECUR_DATA_DIR: dataDir
      })
      const liveId = JSON.parse(liveShop.stdout.trim().split("\n").at(-1)!).merchant_id as string
      const liveBack = recur(["merchant", "payments", "--merchant", liveId, "--sandbox"], { RECUR_DATA_DIR: dataDir })
      expect(liveBack.status).not.toBe(0)
      expect(liveBack.stderr.trim()).toBe(
        "recur: provider: a live merchant cannot take payments with the sandbox: its payments go to its own Stripe account"
      )
      const bad = recur(["merchant", "create", "--name", "X", "--currency", "USD"], {
        DATABASE_URL: "postgres://nowhere/db",
        RECUR_DATA_DIR: dataDir
      })
      expect(bad.status).not.toBe(0)
      expect(bad.stderr + bad.stdout).toContain("RECUR_MASTER_KEY is required")
      const badLimit = recur(["migrate"], { RECUR_RATE_LIMIT: "fast", RECUR_DATA_DIR: dataDir })
      expect(badLimit.status).not.toBe(0)
      expect(badLimit.stderr + badLimit.stdout).toContain("RECUR_RATE_LIMIT must be")
      const badDunning = recur(["migrate"], { RECUR_DUNNING_FINAL_STATE: "forgotten", RECUR_DATA_DIR: dataDir })
      expect(badDunning.status).not.toBe(0)
      expect(badDunning.stderr + badDunning.stdout).toContain("RECUR_DUNNING_FINAL_STATE must be")
      const badTax = recur(["migrate"], {
        RECUR_TAX_RATES: '[{"name":"VAT","percentage":"19%","country":"DE"}]',
        RECUR_DATA_DIR: dataDir
      })
      expect(badTax.status).not.toBe(0)
      expect(badTax.stderr + badTax.stdout).toContain("RECUR_TAX_RATES: tax_rates[0].percentage must be")

      // a lost master.key is never regenerated beside data encrypted with the old one
      renameSync(join(dataDir, "master.key"), join(dataDir, "master.key.bak"))
      const noKey = recur(["migrate"], { RECUR_DATA_DIR: dataDir })
      expect(noKey.status).not.toBe(0)
      expect(noKey.stderr + noKey.stdout).toContain("master.key is missing")
      expect(noKey.stderr + noKey.stdout).toContain("Restore master.key from your backup")
      expect(existsSync(join(dataDir, "master.key"))).toBe(false)
      renameSync(join(dataDir, "master.key.bak"), join(dataDir, "master.key"))

      // a store a newer Recur migrated is refused, in one plain sentence, and left as it was (the
      // step below damages the directory anyway: opening it again here would itself be refused)
      const stamp = (sql: string) =>
        Effect.runPromise(
          SqlClient.SqlClient.use((c) => c.unsafe(sql)).pipe(
            Effect.provide(Pg.layerPglite({ dataDir, maintenance: false }))
          )
        )
      const later = Object.keys(Migrations.migrations).length + 1
      await stamp(
        `insert into recur_migrations (migration_id, name, created_at) values (${later}, 'from_a_later_version', now())`
      )
      const newer = recur(["merchant", "create", "--name", "Y", "--currency", "USD"], { RECUR_DATA_DIR: dataDir })
      expect(newer.status).not.toBe(0)
      expect(newer.stderr).toContain(
        `recur: The database was migrated by a newer Recur (its latest migration is ${String(later).padStart(4, "0")}_from_a_later_version;`
      )
      expect(newer.stderr + newer.stdout).not.toContain("    at ")
      expect(newer.stdout).not.toContain("sk_test_")

      // a damaged data directory is refused, in one plain sentence, and left as it was
      rmSync(join(dataDir, "PG_VERSION"))
      const damaged = recur(["merchant", "create", "--name", "Y", "--currency", "USD"], { RECUR_DATA_DIR: dataDir })
      expect(damaged.status).not.toBe(0)
      expect(damaged.stderr + damaged.stdout).toContain("PG_VERSION is missing")
      expect(damaged.stderr + damaged.stdout).not.toContain("    at ")
      expect(damaged.stdout).not.toContain("sk_test_")
      expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(false)
    } finally {
      fake?.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 240_000)
})

describe("configuration", () => {
  it("RECUR_TAX_RATES: inline JSON or @file, each rate checked as the API checks it", () => {
    expect(Config.parseTaxRates("")).toEqual(Result.succeed([]))
    const rates = [{ name: "VAT", percentage: "19", country: "DE", inclusive: true }]
    expect(Config.parseTaxRates(JSON.stringify(rates))).toEqual(Result.succeed(rates))
    const dir = mkdtempSync(join(tmpdir(), "recur-tax-"))
    try {
      writeFileSync(join(dir, "rates.json"), JSON.stringify(rates))
      expect(Config.parseTaxRates(`@${join(dir, "rates.json")}`)).toEqual(Result.succeed(rates))
      expect(Result.isFailure(Config.parseTaxRates(`@${join(dir, "missing.json")}`))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    for (const [bad, says] of [
      ["{oops", "must be a JSON array"],
      ['{"name":"VAT"}', "must be a JSON array of objects"],
      ["[1]", "must be a JSON array of objects"],
      [
        '[{"name":"VAT","percentage":"19","country":"DE"},{"name":"VAT","percentage":"7","country":"DE"}]',
        "a second rate for DE"
      ],
      ['[{"name":"VAT","percentage":"19","country":"XYZ"}]', "tax_rates[0].country"]
    ] as const) {
      const r = Config.parseTaxRates(bad)
      expect([bad, Result.isFailure(r) && r.failure.includes(says)]).toEqual([bad, true])
    }
  })

  it("RECUR_PORTAL_SETTINGS: inline JSON or @file, checked for its shape", () => {
    expect(Config.parsePortalSettings("")).toEqual(Result.succeed({}))
    const settings = {
      cancel: false,
      switch_prices: ["pri_a", "pri_b"],
      adjust_quantities: [{ price_id: "pri_seats", min: 1, max: 50 }]
    }
    expect(Config.parsePortalSettings(JSON.stringify(settings))).toEqual(Result.succeed(settings))
    const dir = mkdtempSync(join(tmpdir(), "recur-portal-"))
    try {
      writeFileSync(join(dir, "portal.json"), JSON.stringify(settings))
      expect(Config.parsePortalSettings(`@${join(dir, "portal.json")}`)).toEqual(Result.succeed(settings))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    for (const [bad, says] of [
      ["{oops", "must be a JSON object"],
      ["[]", "must be a JSON object"],
      ['{"cancle":false}', 'unknown setting "cancle"'],
      ['{"cancel":"no"}', "cancel must be true or false"],
      ['{"switch_prices":"pri_a"}', "switch_prices must be an array of price ids"],
      [JSON.stringify({ switch_prices: Array.from({ length: 21 }, (_, i) => `pri_${i}`) }), "at most 20"],
      ['{"adjust_quantities":{"price_id":"pri_a"}}', "adjust_quantities must be an array"],
      ['{"adjust_quantities":[{"price_id":"pri_a","min":3,"max":2}]}', "adjust_quantities[0].max"]
    ] as const) {
      const r = Config.parsePortalSettings(bad)
      expect([bad, Result.isFailure(r) && r.failure.includes(says)]).toEqual([bad, true])
    }
  })

  it("RECUR_RATE_LIMIT: per second and burst, a default burst of twice the rate, or off", () => {
    expect(Config.parseRateLimit("100/200")).toEqual({ perSecond: 100, burst: 200 })
    expect(Config.parseRateLimit("25")).toEqual({ perSecond: 25, burst: 50 })
    expect(Config.parseRateLimit("off")).toBe(false)
    expect(Config.parseRateLimit("fast")).toBeUndefined()
    expect(Config.parseRateLimit("0/10")).toBeUndefined()
    expect(Config.parseRateLimit("10/0")).toBeUndefined()
  })

  it("RECUR_DUNNING_RETRY_DAYS: increasing whole days, comma-separated", () => {
    expect(Config.parseRetryDays("1,3,5,7")).toEqual([1, 3, 5, 7])
    expect(Config.parseRetryDays(" 2, 10 ")).toEqual([2, 10])
    for (const bad of [
      "",
      "3,1",
      "0",
      "61",
      "1.5",
      "1,,2",
      "a",
      Array.from({ length: 11 }, (_, i) => i + 1).join(",")
    ]) {
      expect(Config.parseRetryDays(bad)).toBeUndefined()
    }
  })
})
