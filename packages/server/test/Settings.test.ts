import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Config from "../src/Config.js"

// docs/operations.md "Configuration (environment)": every variable the server and the CLI read is
// in the table, and the defaults the table gives are the ones the server takes with none set.

const src = fileURLToPath(new URL("../src/", import.meta.url))
const docs = readFileSync(fileURLToPath(new URL("../../../docs/operations.md", import.meta.url)), "utf8")

/**
 * The variables the sources read: `Config.X("NAME")`, Config.ts's own readers (`int("NAME", …)`,
 * `bool(…)`, `jsonSetting(…)`, which gather every mistake) and `process.env.NAME`.
 */
const read = () => {
  const names = new Set<string>()
  for (const file of readdirSync(src).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(join(src, file), "utf8")
    for (const m of text.matchAll(
      /(?:Config\.\w+|\bint|\bbool|\bjsonSetting)\(\s*"([A-Z][A-Z0-9_]*)"[,)]|process\.env\.([A-Z][A-Z0-9_]*)/g
    ))
      names.add((m[1] ?? m[2])!)
  }
  return [...names].sort()
}

/** The first column of the configuration table's rows (a row may name several: `A` / `B`). */
const documented = () => {
  const section = docs.slice(docs.indexOf("## Configuration (environment)"))
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("|")))
  return new Set(
    table
      .split("\n")
      .filter((l) => l.startsWith("| `"))
      .flatMap((l) => [...l.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!))
  )
}

describe("the settings table", () => {
  it("names every variable the server and the CLI read", () => {
    const names = read()
    expect(names).toContain("RECUR_TRUSTED_PROXIES")
    expect(names.length).toBeGreaterThan(25)
    const table = documented()
    expect(names.filter((n) => !table.has(n))).toEqual([])
    // and no row for a variable nothing reads
    expect([...table].filter((n) => !names.includes(n))).toEqual([])
  })

  it.effect("the documented defaults are what the server takes with nothing set", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "recur-settings-"))
      try {
        const config = yield* Config.load.pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ RECUR_DATA_DIR: dir })))
        )
        expect({
          port: config.port,
          publicUrl: config.publicUrl,
          databaseUrl: Option.isSome(config.databaseUrl),
          rateLimit: config.rateLimit,
          maxBodyBytes: config.maxBodyBytes,
          trustedProxies: config.trustedProxies,
          accessLog: config.accessLog,
          tracing: config.tracing,
          allowPrivateWebhooks: config.allowPrivateWebhooks,
          workerConcurrency: config.workerConcurrency,
          dunning: config.dunning,
          taxRates: config.taxRates,
          fxSource: config.fxSource,
          fxRates: config.fxRates,
          metricsToken: Option.isSome(config.metricsToken),
          otlpUrl: Option.isSome(config.otlpUrl)
        }).toEqual({
          port: 4000,
          publicUrl: "http://localhost:4000",
          databaseUrl: false,
          rateLimit: { perSecond: 100, burst: 200 },
          maxBodyBytes: 1048576,
          trustedProxies: [],
          accessLog: true,
          tracing: false,
          allowPrivateWebhooks: false,
          workerConcurrency: 1,
          dunning: {
            retryDays: [1, 3, 5, 7],
            finalState: "unpaid",
            onDecline: { hard: "stop", soft: "retry", expired_card: "stop" }
          },
          taxRates: [],
          fxSource: "static",
          fxRates: {},
          metricsToken: false,
          otlpUrl: false
        })
        // the same defaults, as the table writes them
        for (const row of [
          "| `PORT` | `4000` |",
          "| `RECUR_RATE_LIMIT` | `100/200` |",
          "| `RECUR_MAX_BODY_BYTES` | `1048576` |",
          "| `RECUR_ACCESS_LOG` | `true` |",
          "| `RECUR_TRACING` | `false` |",
          "| `RECUR_WEBHOOKS_ALLOW_PRIVATE` | `false` |",
          "| `RECUR_WORKER_CONCURRENCY` | `8` on PostgreSQL, `1` on PGlite |",
          "| `RECUR_DUNNING_RETRY_DAYS` | `1,3,5,7` |",
          "| `RECUR_DUNNING_FINAL_STATE` | `unpaid` |",
          "| `RECUR_DUNNING_ON_DECLINE` | `hard=stop,soft=retry,expired_card=stop` |",
          "| `RECUR_FX_SOURCE` | `static` |",
          "| `RECUR_LOG_FORMAT` | `json` |",
          "| `RECUR_LOG_LEVEL` | `info` |"
        ])
          expect(docs).toContain(row)
        const logging = yield* Config.logging.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
        expect(logging).toEqual({ format: "json", level: "Info" })
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )

  it.effect("RECUR_FX_SOURCE=ecb with a fallback table; a wrong source or table stops the server naming it", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "recur-settings-fx-"))
      const load = (env: Record<string, string>) =>
        Config.load.pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ RECUR_DATA_DIR: dir, ...env })))
        )
      try {
        const ecb = yield* load({ RECUR_FX_SOURCE: "ecb", RECUR_FX_RATES: '{"USD:EUR":"0.92"}' })
        expect([ecb.fxSource, ecb.fxRates]).toEqual(["ecb", { "USD:EUR": "0.92" }])
        const problems = (env: Record<string, string>) =>
          Effect.map(Effect.flip(load(env)), (e) =>
            e instanceof Config.ConfigProblems ? e.problems.join("\n") : String(e)
          )
        expect(yield* problems({ RECUR_FX_SOURCE: "oanda" })).toContain("RECUR_FX_SOURCE must be static or ecb")
        expect(yield* problems({ RECUR_FX_RATES: '{"usd:eur":"0.92"}' })).toContain("RECUR_FX_RATES")
        expect(yield* problems({ RECUR_FX_RATES: '{"USD:EUR":0.92}' })).toContain("RECUR_FX_RATES: USD:EUR")
        expect(yield* problems({ RECUR_FX_RATES: '{"USD:EUR":"-1"}' })).toContain("RECUR_FX_RATES: USD:EUR")
        expect(yield* problems({ RECUR_FX_RATES: "[1]" })).toContain("RECUR_FX_RATES must be a JSON object")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )

  it.effect(
    "RECUR_DUNNING_ON_DECLINE: the classes given replace the default's; a wrong one stops the server naming it",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "recur-settings-dunning-"))
        const load = (env: Record<string, string>) =>
          Config.load.pipe(
            Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ RECUR_DATA_DIR: dir, ...env })))
          )
        try {
          const set = yield* load({ RECUR_DUNNING_ON_DECLINE: "hard=retry, expired_card=retry" })
          expect(set.dunning.onDecline).toEqual({ hard: "retry", soft: "retry", expired_card: "retry" })
          const problems = (env: Record<string, string>) =>
            Effect.map(Effect.flip(load(env)), (e) =>
              e instanceof Config.ConfigProblems ? e.problems.join("\n") : String(e)
            )
          for (const bad of ["hard=later", "medium=stop", "hard", "hard=stop=retry"])
            expect(yield* problems({ RECUR_DUNNING_ON_DECLINE: bad })).toContain("RECUR_DUNNING_ON_DECLINE must be")
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    60_000
  )
})
