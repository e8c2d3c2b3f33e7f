/**
 * Server configuration from the environment, validated at start.
 *
 * @since 0.1.0
 */
import { Checkout, DunningPolicy, Portal, type Secrets, TaxRates } from "@recur/core"
import { ErrorReplies } from "@recur/contract"
import * as Decimal from "@recur/core/Decimal"
import { Http } from "@recur/http"
import { Config, Data, Effect, type LogLevel, Option, Redacted, Result } from "effect"
import { MasterKey } from "@recur/sql"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"

/**
 * Every mistake in the server's configuration at once, one per line: an operator fixes them all
 * in one go instead of one per start. The CLI prints each as its own `recur: …` line.
 *
 * @since 0.1.0
 */
export class ConfigProblems extends Data.TaggedError("ConfigProblems")<{ readonly problems: ReadonlyArray<string> }> {
  override get message() {
    return this.problems.join("\n")
  }
}

/**
 * The validated configuration.
 *
 * @since 0.1.0
 */
export interface ServerConfig {
  readonly port: number
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<string>
  /** `RECUR_DATABASE_SCHEMA`: Recur's tables in their own PostgreSQL schema (created if missing). */
  readonly databaseSchema: Option.Option<string>
  readonly masterKey: Redacted.Redacted<string>
  /**
   * The master keys `masterKey` replaced (a rotation): `RECUR_MASTER_KEY_PREVIOUS` (comma-separated)
   * with `RECUR_MASTER_KEY_PREVIOUS_UNTIL` (the instant their links stop opening), or the data
   * directory's `master.key.previous` and `master.key.next`.
   */
  readonly previousMasterKeys: ReadonlyArray<Secrets.PreviousKey>
  /** `RECUR_WEBHOOKS_ALLOW_PRIVATE=true`: live merchants may also target private networks. */
  readonly allowPrivateWebhooks: boolean
  /** `RECUR_RATE_LIMIT`: `<per second>/<burst>` per API key (`100/200`), or `off`. */
  readonly rateLimit: { readonly perSecond: number; readonly burst: number } | false
  /** Largest request body in bytes (`RECUR_MAX_BODY_BYTES`, 1 MiB): larger ones get 413. */
  readonly maxBodyBytes: number
  /**
   * `RECUR_TRUSTED_PROXIES`: comma-separated addresses or CIDR networks of the proxies in front of
   * the server whose `X-Forwarded-For` names the client (the card-testing guard counts pay
   * attempts per client address). Default none: the client is the TCP peer.
   */
  readonly trustedProxies: ReadonlyArray<string>
  /** `RECUR_ACCESS_LOG=false`: no log line per request (default on). */
  readonly accessLog: boolean
  /** `RECUR_TRACING=true`: keep Effect's spans (for a tracer you provide); off by default. */
  readonly tracing: boolean
  /** `RECUR_WORKER_CONCURRENCY`: subscriptions a worker bills at once (8 on PostgreSQL, 1 on PGlite). */
  readonly workerConcurrency: number
  /**
   * `RECUR_DUNNING_RETRY_DAYS` (`1,3,5,7`), `RECUR_DUNNING_FINAL_STATE` (`unpaid` or `canceled`)
   * and `RECUR_DUNNING_ON_DECLINE` (`hard=stop,soft=retry,expired_card=stop`, the classes given
   * replace the default's): the default dunning policy.
   */
  readonly dunning: {
    readonly retryDays: ReadonlyArray<number>
    readonly finalState: "unpaid" | "canceled"
    readonly onDecline: Readonly<Record<"hard" | "soft" | "expired_card", "retry" | "stop">>
  }
  /**
   * `RECUR_TAX_RATES`: tax rates for every merchant without its own for a customer's country and
   * region — a JSON array (`[{"name":"VAT","percentage":"19","country":"DE","inclusive":true}]`),
   * or `@<path>` of a file holding one. Default: none.
   */
  readonly taxRates: ReadonlyArray<TaxRates.TaxRateCommand>
  /** `RECUR_PORTAL_SETTINGS`: the customer portal's settings for merchants without their own. */
  readonly portal: Portal.ConfiguredSettings
  /**
   * `RECUR_SMTP_URL`: the SMTP server customer notifications are sent through
   * (`smtp://host:587`, `smtps://user:password@host:465`; `?tls.rejectUnauthorized=false` for a
   * test server). Default: none — messages merchants turn on wait in the outbox.
   */
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  /**
   * `RECUR_FX_SOURCE`: where the rate of a checkout's `target_currency` without `merchant_rate`
   * comes from — `static` (default: `RECUR_FX_RATES` only) or `ecb` (the ECB's daily euro
   * reference rates, `RECUR_FX_RATES` as fallback).
   */
  readonly fxSource: "static" | "ecb"
  /** `RECUR_FX_RATES`: a JSON object of rates (`{"USD:EUR":"0.92"}`), or `@<path>` of a file holding one. Default: none. */
  readonly fxRates: Readonly<Record<string, string>>
  /** `RECUR_STRIPE_API_BASE`: another Stripe API host (a local fake or stripe-mock); Stripe's by default. */
  readonly stripeApiBase: Option.Option<string>
  /** `RECUR_STRIPE_JS_URL`: where pages load Stripe.js from (a local copy in tests); Stripe's by default. */
  readonly stripeJsUrl: Option.Option<string>
  /** `RECUR_METRICS_TOKEN`: the bearer token `GET /metrics` requires; none by default (open). */
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  /**
   * `RECUR_OTLP_URL`: an OTLP/HTTP collector (`http://collector:4318`, or its full
   * `…/v1/traces` URL) the server sends its spans to; off by default.
   */
  readonly otlpUrl: Option.Option<string>
  /**
   * `RECUR_WORKER_METRICS_PORT`: `recur worker` serves `GET /metrics` (and `/healthz`) on this
   * port (0: any free one), behind `RECUR_METRICS_TOKEN`; unset, the worker listens on nothing.
   */
  readonly workerMetricsPort?: number | undefined
}

/**
 * How the server logs: `RECUR_LOG_FORMAT` and `RECUR_LOG_LEVEL`.
 *
 * @since 0.1.0
 */
export interface LogSettings {
  /** `json` (default): one JSON object per line; `pretty`: logfmt for people reading a terminal. */
  readonly format: "json" | "pretty"
  /** The least severe level written (default `Info`). */
  readonly level: LogLevel.LogLevel
}

const LEVELS: Record<string, LogLevel.LogLevel> = {
  all: "All",
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  warning: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None",
  off: "None"
}

/**
 * Parses `RECUR_LOG_LEVEL` (case-insensitive: trace, debug, info, warn, error, fatal, none).
 *
 * @since 0.1.0
 */
export const parseLogLevel = (text: string): LogLevel.LogLevel | undefined => LEVELS[text.trim().toLowerCase()]

/**
 * Reads `RECUR_LOG_FORMAT` (`json`, or `pretty`) and `RECUR_LOG_LEVEL` (`info`).
 *
 * @since 0.1.0
 */
export const logging = Effect.gen(function* () {
  const formatText = (yield* Config.String("RECUR_LOG_FORMAT").pipe(Config.withDefault("json"))).trim().toLowerCase()
  const format =
    formatText === "json" ? "json" : formatText === "pretty" || formatText === "logfmt" ? "pretty" : undefined
  const levelText = yield* Config.String("RECUR_LOG_LEVEL").pipe(Config.withDefault("info"))
  const level = parseLogLevel(levelText)
  const problems = [
    ...(format === undefined ? [`RECUR_LOG_FORMAT must be json or pretty, not ${JSON.stringify(formatText)}`] : []),
    ...(level === undefined
      ? [
          `RECUR_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, none, not ${JSON.stringify(levelText)}`
        ]
      : [])
  ]
  if (format === undefined || level === undefined) return yield* new ConfigProblems({ problems })
  return { format, level } satisfies LogSettings
})

const RATE = /^(\d+(?:\.\d+)?)(?:\/(\d+))?$/

/**
 * Parses `RECUR_DUNNING_ON_DECLINE`: `class=action` pairs, comma-separated (`hard=stop,soft=retry`),
 * over the default (hard and expired cards stop, soft declines retry); empty is the default.
 *
 * @since 0.1.0
 */
export const parseDeclineRules = (
  text: string
): Readonly<Record<"hard" | "soft" | "expired_card", "retry" | "stop">> | undefined => {
  const rules: Record<"hard" | "soft" | "expired_card", "retry" | "stop"> = {
    hard: "stop",
    soft: "retry",
    expired_card: "stop"
  }
  for (const pair of text.split(",").map((p) => p.trim())) {
    if (pair === "") continue
    const [key, action, ...rest] = pair.split("=").map((p) => p.trim())
    if (rest.length > 0 || (key !== "hard" && key !== "soft" && key !== "expired_card")) return undefined
    if (action !== "retry" && action !== "stop") return undefined
    rules[key] = action
  }
  return rules
}

/**
 * Parses `RECUR_DUNNING_RETRY_DAYS`: 1 to 10 increasing whole days from 1 to 60, comma-separated.
 *
 * @since 0.1.0
 */
export const parseRetryDays = (text: string): ReadonlyArray<number> | undefined => {
  const days = text.split(",").map((d) => (/^\s*\d{1,2}\s*$/.test(d) ? Number(d) : Number.NaN))
  return DunningPolicy.validRetryDays(days) ? days : undefined
}

/** Parses `RECUR_RATE_LIMIT`: `off`, `<per second>` or `<per second>/<burst>`. */
export const parseRateLimit = (text: string): ServerConfig["rateLimit"] | undefined => {
  const t = text.trim().toLowerCase()
  if (t === "off" || t === "false" || t === "0") return false
  const m = RATE.exec(t)
  if (!m) return undefined
  const perSecond = Number(m[1])
  const burst = m[2] !== undefined ? Number(m[2]) : Math.ceil(perSecond * 2)
  return perSecond > 0 && burst >= 1 ? { perSecond, burst } : undefined
}

/** The JSON of a setting given inline or as `@<path>` of a file; undefined when empty. */
const jsonSetting = (name: string, text: string, what: string): Result.Result<unknown, string> => {
  const t = text.trim()
  if (t === "") return Result.succeed(undefined)
  let source = t
  if (t.startsWith("@")) {
    try {
      source = readFileSync(resolve(t.slice(1)), "utf8")
    } catch (e) {
      return Result.fail(`${name}: cannot read ${t.slice(1)}: ${(e as Error).message}`)
    }
  }
  try {
    return Result.succeed(JSON.parse(source))
  } catch {
    return Result.fail(`${name} must be ${what}, or @<path> of a file holding one`)
  }
}

/**
 * Reads `RECUR_TAX_RATES`: inline JSON, or `@<path>` of a JSON file; every entry checked as the
 * API checks a tax rate. An error message names what is wrong.
 *
 * @since 0.1.0
 */
export const parseTaxRates = (text: string): Result.Result<ReadonlyArray<TaxRates.TaxRateCommand>, string> =>
  Result.flatMap(jsonSetting("RECUR_TAX_RATES", text, "a JSON array of tax rates"), (parsed) => {
    if (parsed === undefined) return Result.succeed([])
    if (!Array.isArray(parsed) || parsed.some((e) => typeof e !== "object" || e === null || Array.isArray(e)))
      return Result.fail(
        "RECUR_TAX_RATES must be a JSON array of objects (name, percentage, country, region, inclusive)"
      )
    const entries = parsed as ReadonlyArray<TaxRates.TaxRateCommand>
    const checked = TaxRates.checkTable(entries)
    return Result.isFailure(checked)
      ? Result.fail(`RECUR_TAX_RATES: ${checked.failure.param} ${checked.failure.reason}`)
      : Result.succeed(entries)
  })

/**
 * Reads `RECUR_FX_RATES`: inline JSON or `@<path>` of a JSON file, an object of
 * `"<SOURCE>:<TARGET>"` currency pairs to decimal rates (`{"USD:EUR":"0.92"}`), each rate
 * positive, at most 1000000 and with at most 12 decimals (as a `merchant_rate`).
 *
 * @since 0.1.0
 */
export const parseFxRates = (text: string): Result.Result<Readonly<Record<string, string>>, string> =>
  Result.flatMap(jsonSetting("RECUR_FX_RATES", text, "a JSON object of rates"), (parsed) => {
    if (parsed === undefined) return Result.succeed({})
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return Result.fail('RECUR_FX_RATES must be a JSON object of rates, e.g. {"USD:EUR":"0.92"}')
    for (const [pair, rate] of Object.entries(parsed)) {
      if (!/^[A-Z]{3}:[A-Z]{3}$/.test(pair))
        return Result.fail(`RECUR_FX_RATES: ${JSON.stringify(pair)} is not a currency pair like "USD:EUR"`)
      const decimal = typeof rate === "string" ? Decimal.parse(rate) : undefined
      if (decimal === undefined || Result.isFailure(decimal) || !Checkout.rateInBounds(decimal.success))
        return Result.fail(`RECUR_FX_RATES: ${pair} ${Checkout.RATE_RULE} (as a string)`)
    }
    return Result.succeed(parsed as Record<string, string>)
  })

/**
 * Reads `RECUR_PORTAL_SETTINGS`: the customer portal's settings for merchants without their own,
 * inline JSON or `@<path>` of a JSON file (`{"cancel":false,"switch_prices":["pri_…","pri_…"]}`).
 *
 * @since 0.1.0
 */
export const parsePortalSettings = (text: string): Result.Result<Portal.ConfiguredSettings, string> =>
  Result.flatMap(jsonSetting("RECUR_PORTAL_SETTINGS", text, "a JSON object"), (parsed) => {
    if (parsed === undefined) return Result.succeed({})
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return Result.fail(
        "RECUR_PORTAL_SETTINGS must be a JSON object (payment_method_update, cancel, invoice_history, switch_prices, adjust_quantities)"
      )
    const known = ["payment_method_update", "cancel", "invoice_history", "switch_prices", "adjust_quantities"]
    const unknown = Object.keys(parsed).find((k) => !known.includes(k))
    if (unknown !== undefined) return Result.fail(`RECUR_PORTAL_SETTINGS: unknown setting ${JSON.stringify(unknown)}`)
    const settings = parsed as Portal.ConfiguredSettings
    const checked = Portal.configured(settings)
    return Result.isFailure(checked)
      ? Result.fail(
          `RECUR_PORTAL_SETTINGS: ${ErrorReplies.paramName(checked.failure.param, checked.failure.entry)} ${checked.failure.reason}`
        )
      : Result.succeed(settings)
  })

/**
 * `RECUR_TRUSTED_PROXIES`: comma-separated IP addresses or CIDR networks (`10.0.0.0/8,127.0.0.1`),
 * or empty; each is checked as `Http.trustedNetworks` reads it.
 *
 * @since 0.1.0
 */
export const parseTrustedProxies = (text: string): Result.Result<ReadonlyArray<string>, string> => {
  const proxies = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
  try {
    Http.trustedNetworks(proxies)
    return Result.succeed(proxies)
  } catch (e) {
    return Result.fail(`RECUR_TRUSTED_PROXIES: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/**
 * Reads `PORT` (4000), `RECUR_PUBLIC_URL`, `RECUR_DATA_DIR` (`./.recur`), `DATABASE_URL`,
 * `RECUR_DATABASE_SCHEMA`, `RECUR_MASTER_KEY` (generated into the data directory for the
 * embedded default, required with Postgres), `RECUR_MASTER_KEY_PREVIOUS` and
 * `RECUR_MASTER_KEY_PREVIOUS_UNTIL` (after a rotation, with `RECUR_MASTER_KEY`), `RECUR_RATE_LIMIT` (`100/200`, or `off`),
 * `RECUR_MAX_BODY_BYTES` (`1048576`), `RECUR_TRUSTED_PROXIES` (none), `RECUR_ACCESS_LOG` (`true`), `RECUR_WEBHOOKS_ALLOW_PRIVATE` (`false`), `RECUR_WORKER_CONCURRENCY`,
 * `RECUR_DUNNING_RETRY_DAYS` (`1,3,5,7`), `RECUR_DUNNING_FINAL_STATE` (`unpaid`), `RECUR_DUNNING_ON_DECLINE`
 * (`hard=stop,soft=retry,expired_card=stop`), `RECUR_TAX_RATES`,
 * `RECUR_PORTAL_SETTINGS`, `RECUR_SMTP_URL` (none), `RECUR_FX_SOURCE` (`static`), `RECUR_FX_RATES` (none), `RECUR_METRICS_TOKEN` (none), `RECUR_OTLP_URL` (none) and
 * `RECUR_WORKER_METRICS_PORT` (none).
 *
 * @since 0.1.0
 */
export const load = Effect.suspend(() => settings(true))

/**
 * The mistakes in the configuration {@link load} reads, without touching the data directory
 * (no master key is made): none is an empty list.
 *
 * @since 0.1.0
 */
export const problems: Effect.Effect<ReadonlyArray<string>> = Effect.suspend(() => settings(false)).pipe(
  Effect.as([] as ReadonlyArray<string>),
  Effect.catch((e) => Effect.succeed(e instanceof ConfigProblems ? e.problems : [e.message]))
)

const BOOLEANS: Record<string, boolean> = {
  true: true,
  yes: true,
  on: true,
  "1": true,
  y: true,
  false: false,
  no: false,
  off: false,
  "0": false,
  n: false
}

const settings = (complete: boolean) =>
  Effect.gen(function* () {
    const problems: Array<string> = []
    const problem = (message: string) => void problems.push(message)
    /** A whole number from the environment, or `fallback`; a mistake is noted with `rule`'s words. */
    const int = (name: string, fallback: number, valid: (n: number) => boolean, rule: string) =>
      Effect.map(Config.option(Config.String(name)), (o) => {
        if (Option.isNone(o)) return fallback
        const t = o.value.trim()
        const n = /^-?\d{1,12}$/.test(t) ? Number(t) : Number.NaN
        if (Number.isInteger(n) && valid(n)) return n
        problem(`${name} ${rule}, not ${JSON.stringify(o.value)}`)
        return fallback
      })
    const bool = (name: string, fallback: boolean) =>
      Effect.map(Config.option(Config.String(name)), (o) => {
        if (Option.isNone(o)) return fallback
        const b = BOOLEANS[o.value.trim().toLowerCase()]
        if (b !== undefined) return b
        problem(`${name} must be true or false, not ${JSON.stringify(o.value)}`)
        return fallback
      })
    // the log settings are the CLI's first read; named again here so that all mistakes show at once
    yield* Effect.catch(logging, (e) =>
      Effect.sync(() => (e instanceof ConfigProblems ? e.problems : [e.message]).forEach(problem))
    )
    // 0: the system picks a free port (tests); the server prints the one it listens on
    const port = yield* int(
      "PORT",
      4000,
      (n) => n >= 0 && n <= 65535,
      "must be a port number from 0 to 65535 (0: any free port)"
    )
    const publicUrl = yield* Config.String("RECUR_PUBLIC_URL").pipe(Config.withDefault(`http://localhost:${port}`))
    const dataDir = resolve(yield* Config.String("RECUR_DATA_DIR").pipe(Config.withDefault("./.recur")))
    const databaseUrl = yield* Config.option(Config.String("DATABASE_URL"))
    const databaseSchema = yield* Config.option(Config.String("RECUR_DATABASE_SCHEMA"))
    const allowPrivateWebhooks = yield* bool("RECUR_WEBHOOKS_ALLOW_PRIVATE", false)
    const rateText = yield* Config.String("RECUR_RATE_LIMIT").pipe(Config.withDefault("100/200"))
    const rateLimit = parseRateLimit(rateText) ?? { perSecond: 100, burst: 200 }
    if (parseRateLimit(rateText) === undefined)
      problem(
        `RECUR_RATE_LIMIT must be "off" or "<per second>/<burst>" (e.g. 100/200), not ${JSON.stringify(rateText)}`
      )
    const maxBodyBytes = yield* int(
      "RECUR_MAX_BODY_BYTES",
      1024 * 1024,
      (n) => n >= 1024 && n <= 64 * 1024 * 1024,
      "must be between 1024 and 67108864 (64 MiB)"
    )
    const trustedProxies = parseTrustedProxies(
      yield* Config.String("RECUR_TRUSTED_PROXIES").pipe(Config.withDefault(""))
    )
    if (Result.isFailure(trustedProxies)) problem(trustedProxies.failure)
    const accessLog = yield* bool("RECUR_ACCESS_LOG", true)
    const tracing = yield* bool("RECUR_TRACING", false)
    // PGlite is one connection: its transactions run one at a time whatever the worker does
    const workerConcurrency = yield* int(
      "RECUR_WORKER_CONCURRENCY",
      Option.isSome(databaseUrl) ? 8 : 1,
      (n) => n >= 1 && n <= 64,
      "must be between 1 and 64"
    )
    const retryText = yield* Config.String("RECUR_DUNNING_RETRY_DAYS").pipe(Config.withDefault("1,3,5,7"))
    const retryDays = parseRetryDays(retryText) ?? [1, 3, 5, 7]
    if (parseRetryDays(retryText) === undefined)
      problem(
        `RECUR_DUNNING_RETRY_DAYS must be 1 to 10 increasing whole days from 1 to 60, comma-separated (e.g. 1,3,5,7), not ${JSON.stringify(retryText)}`
      )
    const finalText = yield* Config.String("RECUR_DUNNING_FINAL_STATE").pipe(Config.withDefault("unpaid"))
    const finalState = finalText === "canceled" ? "canceled" : "unpaid"
    if (finalText !== "unpaid" && finalText !== "canceled")
      problem(`RECUR_DUNNING_FINAL_STATE must be unpaid or canceled, not ${JSON.stringify(finalText)}`)
    const onDeclineText = yield* Config.String("RECUR_DUNNING_ON_DECLINE").pipe(Config.withDefault(""))
    const onDecline = parseDeclineRules(onDeclineText)
    if (onDecline === undefined)
      problem(
        `RECUR_DUNNING_ON_DECLINE must be comma-separated class=action pairs, each class hard, soft or expired_card and each action retry or stop (e.g. hard=stop,soft=retry,expired_card=stop), not ${JSON.stringify(onDeclineText)}`
      )
    const dunning = {
      retryDays,
      finalState,
      onDecline: onDecline ?? { hard: "stop", soft: "retry", expired_card: "stop" }
    } as const
    const taxRates = parseTaxRates(yield* Config.String("RECUR_TAX_RATES").pipe(Config.withDefault("")))
    if (Result.isFailure(taxRates)) problem(taxRates.failure)
    const portal = parsePortalSettings(yield* Config.String("RECUR_PORTAL_SETTINGS").pipe(Config.withDefault("")))
    if (Result.isFailure(portal)) problem(portal.failure)
    const smtpUrl = yield* Config.option(Config.Redacted("RECUR_SMTP_URL"))
    if (Option.isSome(smtpUrl) && !/^smtps?:\/\/[^\s]+$/.test(Redacted.value(smtpUrl.value)))
      problem("RECUR_SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:password@smtp.example.com:465")
    const fxText = yield* Config.String("RECUR_FX_SOURCE").pipe(Config.withDefault("static"))
    const fxSource = fxText === "ecb" ? "ecb" : "static"
    if (fxText !== "static" && fxText !== "ecb")
      problem(`RECUR_FX_SOURCE must be static or ecb, not ${JSON.stringify(fxText)}`)
    const fxRates = parseFxRates(yield* Config.String("RECUR_FX_RATES").pipe(Config.withDefault("")))
    if (Result.isFailure(fxRates)) problem(fxRates.failure)
    const stripeApiBase = yield* Config.option(Config.String("RECUR_STRIPE_API_BASE"))
    if (Option.isSome(stripeApiBase) && !/^https?:\/\/[^/\s]+\/?$/.test(stripeApiBase.value))
      problem("RECUR_STRIPE_API_BASE must be an http(s) origin, e.g. http://127.0.0.1:12111")
    const stripeJsUrl = yield* Config.option(Config.String("RECUR_STRIPE_JS_URL"))
    if (Option.isSome(stripeJsUrl) && !/^https?:\/\/[^\s"'<>]+$/.test(stripeJsUrl.value))
      problem("RECUR_STRIPE_JS_URL must be an http(s) URL")
    const metricsToken = yield* Config.option(Config.Redacted("RECUR_METRICS_TOKEN"))
    if (Option.isSome(metricsToken) && !/^\S{16,}$/.test(Redacted.value(metricsToken.value)))
      problem("RECUR_METRICS_TOKEN must be at least 16 characters, without spaces")
    const otlpUrl = yield* Config.option(Config.String("RECUR_OTLP_URL"))
    if (Option.isSome(otlpUrl) && !/^https?:\/\/[^\s]+$/.test(otlpUrl.value))
      problem("RECUR_OTLP_URL must be an http(s) URL, e.g. http://127.0.0.1:4318")
    const workerMetricsText = yield* Config.option(Config.String("RECUR_WORKER_METRICS_PORT"))
    const workerMetricsPort = Option.match(workerMetricsText, {
      onNone: () => undefined,
      onSome: (text) => {
        const n = /^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
        if (Number.isInteger(n) && n >= 0 && n <= 65535) return n
        problem("RECUR_WORKER_METRICS_PORT must be a port number from 0 to 65535 (0: any free port)")
        return undefined
      }
    })
    const master = yield* masterKeys(dataDir, databaseUrl, problem, complete && problems.length === 0)
    if (problems.length > 0 || master === undefined) return yield* new ConfigProblems({ problems })
    return {
      port,
      publicUrl,
      dataDir,
      databaseUrl,
      databaseSchema,
      masterKey: master.masterKey,
      previousMasterKeys: master.previousMasterKeys,
      allowPrivateWebhooks,
      rateLimit: rateLimit,
      maxBodyBytes,
      trustedProxies: Result.getOrElse(trustedProxies, () => []),
      accessLog,
      tracing,
      workerConcurrency,
      dunning,
      taxRates: Result.getOrElse(taxRates, () => []),
      portal: Result.getOrElse(portal, () => ({})),
      smtpUrl,
      fxSource,
      fxRates: Result.getOrElse(fxRates, () => ({})),
      stripeApiBase,
      stripeJsUrl,
      metricsToken,
      otlpUrl,
      workerMetricsPort
    } satisfies ServerConfig
  })

/**
 * The master keys: `RECUR_MASTER_KEY` and its predecessors, checked; else (no database URL) the
 * data directory's, made there on first start — only when `touch` (a configuration without
 * mistakes). Undefined when none is known yet (a mistake was noted, or not touched).
 */
const masterKeys = (
  dataDir: string,
  databaseUrl: Option.Option<string>,
  problem: (message: string) => void,
  touch: boolean
) =>
  Effect.gen(function* () {
    const configured = yield* Config.option(Config.Redacted("RECUR_MASTER_KEY"))
    if (Option.isSome(configured)) {
      let ok = true
      if (!MasterKey.isValid(Redacted.value(configured.value))) {
        problem("RECUR_MASTER_KEY must be 64 hexadecimal characters (32 bytes)")
        ok = false
      }
      const previous = Redacted.value(
        yield* Config.Redacted("RECUR_MASTER_KEY_PREVIOUS").pipe(Config.withDefault(Redacted.make("")))
      )
        .split(",")
        .map((k) => k.trim())
        .filter((k) => k !== "")
      if (previous.some((k) => !MasterKey.isValid(k))) {
        problem("RECUR_MASTER_KEY_PREVIOUS must be 64 hexadecimal characters (32 bytes), comma-separated")
        ok = false
      }
      const untilText = yield* Config.option(Config.String("RECUR_MASTER_KEY_PREVIOUS_UNTIL"))
      const until = Option.map(untilText, (t) => Date.parse(t))
      if (Option.isSome(until) && Number.isNaN(until.value)) {
        problem("RECUR_MASTER_KEY_PREVIOUS_UNTIL must be an ISO 8601 instant, e.g. 2026-12-03T12:00:00Z")
        ok = false
      }
      if (!ok) return undefined
      return {
        masterKey: configured.value,
        previousMasterKeys: previous.map(
          (k): Secrets.PreviousKey => ({ key: Redacted.make(k), until: Option.getOrUndefined(until) })
        )
      }
    }
    if (Option.isSome(databaseUrl)) {
      problem(new MasterKey.MasterKeyRequired({ setting: "RECUR_MASTER_KEY", storage: "DATABASE_URL" }).message)
      return undefined
    }
    if (!touch) return undefined
    // beside the data, as createBilling keeps it; a missing key beside existing data is refused
    const ring = yield* Effect.result(MasterKey.ringInDataDir(dataDir))
    if (Result.isFailure(ring)) {
      problem(ring.failure.message)
      return undefined
    }
    return { masterKey: ring.success.current, previousMasterKeys: ring.success.previous }
  })
