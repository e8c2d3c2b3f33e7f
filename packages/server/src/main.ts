/**
 * The `recur` command line: `serve` (default), `migrate`, `merchant create`, `settings`,
 * `key rotate`, `key revoke`, `master-key rotate`, `worker`, `subscription show`, `invoices list`,
 * `export`.
 *
 * @since 0.1.0
 */
import { NodeRuntime } from "@effect/platform-node"
import { MasterKeyRotation, Merchant, Merchants, PaymentSettings, Secrets } from "@recur/core"
import { ErrorReplies } from "@recur/contract"
import { DataDirLock, MasterKey, Migrations, Pg } from "@recur/sql"
import { Cause, Clock, Console, Data, Effect, Exit, Layer, Option, Redacted, Runtime, Stream } from "effect"
import * as Config from "./Config.js"
import * as Reports from "./Reports.js"
import * as Server from "./Server.js"

const args = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const has = (name: string) => args.includes(`--${name}`)

/** The duration a flag gives (`--grace 3m`), up to ten years; a mistake fails with a one-line message. */
const durationFlag = (name: string, fallback: string): Effect.Effect<number, Error> => {
  const text = flag(name) ?? fallback
  const m = /^(\d{1,12})(ms|s|m|h|d)?$/.exec(text)
  const ms = m
    ? Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "ms"] as number)
    : NaN
  return Number.isFinite(ms) && ms <= 3650 * 86_400_000
    ? Effect.succeed(ms)
    : Effect.fail(new Error(`--${name} ${text} is not a duration up to 3650d (e.g. 90s, 3m, 7d)`))
}

/** The positional argument at `index` (flags and their values skipped). */
const positional = (index: number): string | undefined => {
  const words: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith("--")) {
      if (!["--json", "--live", "--sandbox"].includes(args[i]!)) i++
    } else words.push(args[i]!)
  }
  return words[index]
}

/** `--merchant`, which every command reading a merchant's data needs. */
const merchantFlag = Effect.suspend(() => {
  const merchant = flag("merchant")
  return merchant === undefined || merchant.startsWith("--")
    ? tell("this command needs --merchant <merchant id> (mch_…; `recur merchant create` prints it)")
    : Effect.succeed(merchant)
})

/** An instant flag (`--from 2026-01-01`), undefined when absent; a mistake is told in one line. */
const instantFlag = (name: string) =>
  Effect.suspend(() => {
    const text = flag(name)
    if (text === undefined) return Effect.succeed(undefined)
    const at = Reports.parseInstant(text)
    return at === undefined
      ? tell(`--${name} ${text} is not a date (2026-01-01) or an ISO 8601 instant (2026-01-01T12:00:00Z)`)
      : Effect.succeed(at)
  })

/**
 * Writes to stdout and waits while its buffer is full ('drain'): an export's next page is read
 * only once the reader has taken the one before, so memory stays one page however large the export.
 */
let stdoutWatched = false
const writeOut = (chunk: string): Effect.Effect<void, Error> =>
  Effect.callback<void, Error>((resume) => {
    // the reader went away (`recur export … | head`): what it wanted is written, stop quietly
    if (!stdoutWatched) {
      stdoutWatched = true
      process.stdout.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "EPIPE") process.exit(0)
      })
    }
    const ok = process.stdout.write(chunk, (error) => {
      if (error) resume(Effect.fail(error))
      else if (ok) resume(Effect.void)
    })
    if (!ok) process.stdout.once("drain", () => resume(Effect.void))
  })

const usage = `recur <command>
  serve                                   start the API server and the worker (default)
  migrate                                 run the database migrations
  merchant create --name N --currency C [--live] [--frozen-time T] [--invoice-prefix P] [--json]
  merchant payments --merchant M --sandbox
  merchant payments --merchant M --stripe-publishable-key P [--stripe-secret-key K] [--stripe-webhook-secret S]
                                          (the secrets also from STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET,
                                          which keeps them out of the shell's history)
  settings show --merchant M [--json]     the merchant's proration and dunning settings
  settings proration show|set <policy> --merchant M
                                          per_second, per_day or fixed_days(n)
  settings set --merchant M [--proration-policy P] [--proration-credit refund|credit_balance]
               [--dunning-final-state unpaid|canceled] [--dunning-retry-days 1,3,5|default]
               [--dunning-on-decline hard=stop,soft=retry,expired_card=stop|default]
               [--invoice-draft-grace-seconds N] [--json]
  key rotate --merchant M [--grace 3m]
  key revoke --merchant M --key K
  master-key rotate [--grace 7d] [--new-key K]
                                          re-encrypt every stored secret under a new master key in one
                                          transaction; links signed before keep opening for the grace.
                                          Data directory: the new key replaces master.key (stop the server
                                          first). RECUR_MASTER_KEY (PostgreSQL): the new key is --new-key
                                          (or RECUR_MASTER_KEY_NEW), else one is generated and printed once;
                                          then set RECUR_MASTER_KEY=<new>, RECUR_MASTER_KEY_PREVIOUS=<old>,
                                          RECUR_MASTER_KEY_PREVIOUS_UNTIL=<printed instant> and restart
  worker                                  run the billing worker and webhook dispatcher alone
                                          (RECUR_WORKER_METRICS_PORT: its own GET /metrics)
  subscription show <id> --merchant M [--json]
                                          state, price, next invoice, latest invoices, event history
  invoices list --merchant M [--customer C] [--subscription S] [--status success,failed,…]
                [--since T] [--until T] [--limit N (20, up to 10000)] [--json]
  export customers|subscriptions|invoices|refunds --merchant M [--from T] [--to T] > out.csv
                                          CSV (RFC 4180) of the records created from T (included) to T
                                          (excluded), newest first, streamed page by page
                                          T: 2026-01-01 (midnight UTC) or an ISO 8601 instant
  On a PGlite data directory these need the server stopped (one process per data directory).`

const withEngine = <A, E>(f: (config: Config.ServerConfig) => Effect.Effect<A, E, Server.Engine>) =>
  Effect.flatMap(Config.load, (config) => Effect.provide(f(config), Server.engine(config)))

const program = Effect.gen(function* () {
  const [command = "serve", sub] = args
  switch (command) {
    case "serve":
      return yield* Effect.flatMap(Config.load, (config) => Layer.launch(Server.serve(config)))
    case "migrate":
      return yield* withEngine(() => Console.log("migrations are up to date"))
    case "worker":
      // like `serve`: no spans unless RECUR_OTLP_URL sends them somewhere (or RECUR_TRACING asks)
      return yield* withEngine((config) => {
        const work = Server.workers(`worker-${process.pid}`, { concurrency: config.workerConcurrency })
        // with RECUR_WORKER_METRICS_PORT, its own GET /metrics beside the work
        const served =
          config.workerMetricsPort === undefined
            ? work
            : Effect.all([work, Layer.launch(Server.workerMetrics(config, config.workerMetricsPort))], {
                concurrency: 2,
                discard: true
              })
        return Option.isSome(config.otlpUrl)
          ? served.pipe(Effect.provide(Server.otlp(config.otlpUrl.value)))
          : served.pipe(Effect.withTracerEnabled(config.tracing))
      })
    case "merchant": {
      if (sub === "payments") {
        const merchant = flag("merchant")
        if (!merchant) return yield* tell("merchant payments needs --merchant")
        const secret = flag("stripe-secret-key") ?? process.env.STRIPE_SECRET_KEY
        const webhook = flag("stripe-webhook-secret") ?? process.env.STRIPE_WEBHOOK_SECRET
        const publishable = flag("stripe-publishable-key")
        const input = has("sandbox")
          ? { provider: "sandbox" }
          : {
              provider: "stripe",
              ...(secret ? { secret_key: secret } : {}),
              ...(publishable ? { publishable_key: publishable } : {}),
              ...(webhook ? { webhook_secret: webhook } : {})
            }
        return yield* withEngine(() =>
          PaymentSettings.PaymentSettings.use((p) => p.set(merchant, input)).pipe(
            Effect.flatMap((view) =>
              Console.log(
                has("json")
                  ? JSON.stringify(view)
                  : view.provider === "sandbox"
                    ? `Merchant ${merchant} takes payments with the sandbox`
                    : `Merchant ${merchant} takes payments with Stripe (secret key …${view.secret_key_last4}); point Stripe's webhooks at ${view.webhook_url}${view.webhook_secret_set ? "" : " and set --stripe-webhook-secret"}`
              )
            ),
            Effect.catchTag("InvalidParameter", (e) =>
              tell(`${ErrorReplies.paramName(e.param, e.entry)}: ${e.reason}`)
            ),
            Effect.catchTag("ProcessorUnreachable", (e) => tell(e.message))
          )
        )
      }
      if (sub !== "create") return yield* Console.error(usage)
      const name = flag("name")
      const currency = flag("currency")
      if (!name || !currency) return yield* Effect.fail(new Error("merchant create needs --name and --currency"))
      const frozen = flag("frozen-time")
      const prefix = flag("invoice-prefix")
      return yield* withEngine(() =>
        Effect.gen(function* () {
          const created = yield* (yield* Merchants.Merchants).create({
            name,
            currency,
            mode: has("live") ? "live" : "sandbox",
            ...(frozen ? { frozen_time: Date.parse(frozen) } : {}),
            ...(prefix ? { invoice_prefix: prefix } : {})
          })
          if (has("json"))
            yield* Console.log(JSON.stringify({ merchant_id: created.merchant.merchant_id, api_key: created.api_key }))
          else yield* Console.log(`Merchant ${created.merchant.merchant_id}\nAPI key: ${created.api_key}`)
        })
      )
    }
    case "settings":
      return yield* settingsCommand(sub)
    case "key": {
      const merchant = flag("merchant")
      if (!merchant) return yield* Effect.fail(new Error("key commands need --merchant"))
      if (sub === "rotate") {
        return yield* withEngine(() =>
          Effect.flatMap(durationFlag("grace", "3m"), (graceMs) =>
            Merchants.Merchants.use((m) => m.rotateKey(merchant, { graceMs }))
          ).pipe(
            Effect.flatMap((k) =>
              Console.log(
                has("json") ? JSON.stringify({ key_id: k.key_id, api_key: k.api_key }) : `New API key: ${k.api_key}`
              )
            )
          )
        )
      }
      if (sub === "revoke") {
        const key = flag("key")
        if (!key) return yield* Effect.fail(new Error("key revoke needs --key (the key id)"))
        return yield* withEngine(() =>
          Merchants.Merchants.use((m) => m.revokeKey(merchant, key)).pipe(Effect.andThen(Console.log(`Revoked ${key}`)))
        )
      }
      return yield* Console.error(usage)
    }
    case "subscription": {
      if (sub !== "show") return yield* Console.error(usage)
      const id = positional(2)
      if (id === undefined)
        return yield* tell(
          "subscription show needs the subscription id: recur subscription show sub_… --merchant mch_…"
        )
      const merchant = yield* merchantFlag
      return yield* withEngine(() =>
        Effect.flatMap(Reports.subscriptionDetail(merchant, id), (detail) =>
          Console.log(has("json") ? JSON.stringify(Reports.subscriptionJson(detail)) : Reports.subscriptionText(detail))
        )
      )
    }
    case "invoices": {
      if (sub !== "list") return yield* Console.error(usage)
      const merchant = yield* merchantFlag
      const since = yield* instantFlag("since")
      const until = yield* instantFlag("until")
      const limitText = flag("limit") ?? "20"
      const limit = /^\d{1,5}$/.test(limitText) ? Number(limitText) : Number.NaN
      if (!(limit >= 1 && limit <= 10_000)) return yield* tell(`--limit ${limitText} is not a number from 1 to 10000`)
      const status = flag("status")
        ?.split(",")
        .map((x) => x.trim())
        .filter((x) => x !== "")
      const unknown = status?.find((x) => !Reports.invoiceStatuses.includes(x))
      if (unknown !== undefined)
        return yield* tell(`--status ${unknown} is not an invoice status (${Reports.invoiceStatuses.join(", ")})`)
      const customer = flag("customer")
      const subscription = flag("subscription")
      return yield* withEngine(() =>
        Effect.gen(function* () {
          yield* Reports.merchant(merchant)
          const list = yield* Reports.invoiceList(merchant, {
            customer,
            subscription,
            status,
            from: since,
            to: until,
            limit
          })
          if (has("json")) return yield* writeOut(list.map((i) => `${JSON.stringify(i)}\n`).join(""))
          yield* Console.log(list.length === 0 ? "No invoices" : Reports.invoiceTable(list))
        })
      )
    }
    case "export": {
      const kind = Reports.exportKinds.find((k) => k === sub)
      if (kind === undefined)
        return yield* tell(
          `export needs what to export: ${Reports.exportKinds.join(", ")} (recur export invoices --merchant mch_… --from 2026-01-01 --to 2026-02-01 > out.csv)`
        )
      const merchant = yield* merchantFlag
      const from = yield* instantFlag("from")
      const to = yield* instantFlag("to")
      if (from !== undefined && to !== undefined && to <= from) return yield* tell("--to must be after --from")
      return yield* withEngine(() =>
        Effect.andThen(
          Reports.merchant(merchant),
          Stream.runForEach(Reports.exportCsv(kind, merchant, { from, to }), writeOut)
        )
      )
    }
    case "master-key": {
      if (sub !== "rotate") return yield* Console.error(usage)
      return yield* rotateMasterKey
    }
    default:
      return yield* Console.error(usage)
  }
})

/** A merchant's billing settings in one line each, as `settings show` prints them. */
const describeSettings = (s: Merchant.BillingSettings) =>
  [
    `proration_policy: ${s.proration_policy}`,
    `proration_credit: ${s.proration_credit}`,
    `dunning_final_state: ${s.dunning_final_state}`,
    `dunning_retry_days: ${s.dunning_retry_days === null ? "default" : s.dunning_retry_days.join(",")}`,
    `dunning_on_decline: ${
      s.dunning_on_decline === null
        ? "default"
        : Object.entries(s.dunning_on_decline)
            .map(([k, v]) => `${k}=${v}`)
            .join(",")
    }`,
    `invoice_draft_grace_seconds: ${s.invoice_draft_grace_seconds}`
  ].join("\n")

/**
 * `--dunning-on-decline hard=stop,soft=retry` (the classes given change; `default`, the engine's
 * policy); a mistake is one line.
 */
const onDeclineFlag = (text: string | undefined) => {
  if (text === undefined) return Effect.succeed(undefined)
  if (text === "default") return Effect.succeed(null)
  const rules: Record<string, "retry" | "stop"> = {}
  for (const pair of text.split(",")) {
    const [key, action, ...rest] = pair.split("=").map((p) => p.trim())
    if (
      rest.length > 0 ||
      (key !== "hard" && key !== "soft" && key !== "expired_card") ||
      (action !== "retry" && action !== "stop")
    )
      return tell(
        "--dunning-on-decline must be class=action pairs (hard, soft, expired_card; retry or stop) or default"
      )
    rules[key] = action
  }
  return Effect.succeed(
    rules as {
      readonly hard?: "retry" | "stop"
      readonly soft?: "retry" | "stop"
      readonly expired_card?: "retry" | "stop"
    }
  )
}

/** `--dunning-retry-days 1,3,5` (or `default`, the engine's policy); a mistake is one line. */
const retryDaysFlag = (text: string | undefined) => {
  if (text === undefined) return Effect.succeed(undefined)
  if (text === "default") return Effect.succeed(null)
  const days = text.split(",").map((d) => (/^\d{1,3}$/.test(d.trim()) ? Number(d.trim()) : NaN))
  return days.every(Number.isInteger)
    ? Effect.succeed(days)
    : tell("--dunning-retry-days must be whole days separated by commas (1,3,5) or default")
}

/**
 * `recur settings`: the merchant's proration and dunning settings, the ones
 * `POST /api/v1/billing_settings` changes, read (`show`) or changed (`set`, `proration set`).
 */
const settingsCommand = (sub: string | undefined) =>
  Effect.gen(function* () {
    const merchant = flag("merchant")
    if (!merchant) return yield* tell("settings commands need --merchant")
    const [, , action, value] = args
    const read = sub === "show" || (sub === "proration" && action === "show")
    const patch =
      sub === "proration" && action === "set"
        ? value === undefined || value.startsWith("--")
          ? yield* tell("settings proration set needs a policy: per_second, per_day or fixed_days(n)")
          : { proration_policy: value }
        : sub === "set"
          ? {
              proration_policy: flag("proration-policy"),
              proration_credit: flag("proration-credit") as Merchant.BillingSettings["proration_credit"] | undefined,
              dunning_final_state: flag("dunning-final-state") as
                | Merchant.BillingSettings["dunning_final_state"]
                | undefined,
              dunning_retry_days: yield* retryDaysFlag(flag("dunning-retry-days")),
              dunning_on_decline: yield* onDeclineFlag(flag("dunning-on-decline")),
              // a number that is not a whole number of seconds is refused by the settings (named)
              invoice_draft_grace_seconds:
                flag("invoice-draft-grace-seconds") === undefined
                  ? undefined
                  : Number(flag("invoice-draft-grace-seconds"))
            }
          : undefined
    if (!read && patch === undefined) return yield* Console.error(usage)
    if (patch !== undefined) {
      const credit = patch.proration_credit
      if (credit !== undefined && credit !== "refund" && credit !== "credit_balance")
        return yield* tell("--proration-credit must be refund or credit_balance")
      const final = "dunning_final_state" in patch ? patch.dunning_final_state : undefined
      if (final !== undefined && final !== "unpaid" && final !== "canceled")
        return yield* tell("--dunning-final-state must be unpaid or canceled")
    }
    return yield* withEngine(() =>
      Merchants.Merchants.use((m) =>
        patch === undefined ? m.get(merchant) : m.setBillingSettings(merchant, patch)
      ).pipe(
        Effect.map(Merchant.billingSettingsOf),
        Effect.flatMap((view) =>
          Console.log(
            has("json")
              ? JSON.stringify(view)
              : sub === "proration"
                ? `Merchant ${merchant} prorates ${view.proration_policy}`
                : describeSettings(view)
          )
        ),
        Effect.catchTag("InvalidParameter", (e) => tell(`${ErrorReplies.paramName(e.param, e.entry)}: ${e.reason}`)),
        Effect.catchTag("NotFound", () => tell(`no merchant ${merchant}`))
      )
    )
  })

/**
 * `recur master-key rotate`: every secret re-encrypted under the new key in one transaction, with
 * the old key in the ring. In a data directory the new key is written as `master.key.next` first
 * and promoted after, so a crash at any point still starts (and running the command again finishes
 * the rotation with the same key).
 */
const rotateMasterKey = Effect.gen(function* () {
  const graceMs = yield* durationFlag("grace", "7d")
  const config = yield* Config.load
  const inDataDir = Option.isNone(config.databaseUrl) && process.env.RECUR_MASTER_KEY === undefined
  const given = flag("new-key") ?? process.env.RECUR_MASTER_KEY_NEW
  if (given !== undefined && !MasterKey.isValid(given))
    return yield* tell("--new-key must be 64 hexadecimal characters (32 bytes)")
  if (inDataDir && given !== undefined)
    return yield* tell("--new-key is for RECUR_MASTER_KEY (PostgreSQL): a data directory makes its own")
  const pending = inDataDir ? yield* MasterKey.nextInDataDir(config.dataDir) : undefined
  const next = Redacted.make(given ?? (pending !== undefined ? Redacted.value(pending) : MasterKey.generate()))
  // said before anything is encrypted under it: a crash after the commit must not lose the only copy
  if (!inDataDir && given === undefined)
    yield* Console.log(`New master key (shown once; keep it with your backups): ${Redacted.value(next)}`)
  const ring = {
    ...config,
    masterKey: next,
    previousMasterKeys: [{ key: config.masterKey }, ...config.previousMasterKeys]
  }
  const now = yield* Clock.currentTimeMillis
  const until = now + graceMs
  const done = yield* Effect.provide(
    Effect.gen(function* () {
      if (inDataDir) yield* MasterKey.writeNext(config.dataDir, next)
      const counts = yield* MasterKeyRotation.resealAll()
      if (inDataDir) yield* MasterKey.promoteNext(config.dataDir, until, now)
      return counts
    }),
    Server.engine(ring)
  )
  const secrets = done.api_keys + done.payment_processors + done.webhook_endpoints + done.idempotent_answers
  const what =
    `Master key rotated to key ${Secrets.keyIdOf(next)} (was ${Secrets.keyIdOf(config.masterKey)}): ` +
    `${secrets} stored secrets re-encrypted, ${done.invoice_links} invoice links signed again; ` +
    `links signed under the old key open until ${new Date(until).toISOString()}`
  yield* Console.log(
    inDataDir
      ? what
      : `${what}. Now set RECUR_MASTER_KEY to the new key, RECUR_MASTER_KEY_PREVIOUS to the old one and RECUR_MASTER_KEY_PREVIOUS_UNTIL=${new Date(until).toISOString()}, and restart every Recur process`
  )
})

// a shutdown by signal (SIGTERM, SIGINT) interrupts the program: that is a clean exit, code 0
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

/** An error already told to the operator in one line: exit 1, without a stack trace. */
class Told extends Data.TaggedError("Told") {
  override readonly [Runtime.errorReported] = false
}

/** Tells the operator what is wrong in one line on stderr (`recur: …`) and exits 1, without a stack trace. */
const tell = (message: string) => Effect.andThen(Console.error(`recur: ${message}`), Effect.fail(new Told()))

/** Every mistake in the configuration, each on its own line (`recur: …`), and exit 1. */
const tellAll = (problems: ReadonlyArray<string>) =>
  Effect.andThen(
    Effect.forEach(problems, (p) => Console.error(`recur: ${p}`)),
    Effect.fail(new Told())
  )

/** Errors whose message is the whole story for an operator (the data directory's state). */
const operatorError = (
  e: unknown
): e is DataDirLock.DataDirLocked | Pg.DataDirUnrecognised | Pg.DataDirUnreadable | Migrations.SchemaNewerThanCode =>
  e instanceof DataDirLock.DataDirLocked ||
  e instanceof Pg.DataDirUnrecognised ||
  e instanceof Pg.DataDirUnreadable ||
  e instanceof Migrations.SchemaNewerThanCode

// another process holds the data directory, it is damaged, or a newer Recur migrated the store: say so in one line
const told = (program as Effect.Effect<unknown, unknown>).pipe(
  Effect.catchIf(operatorError, (e) => Effect.andThen(Console.error(`recur: ${e.message}`), Effect.fail(new Told()))),
  Effect.catchIf(
    (e): e is Config.ConfigProblems => e instanceof Config.ConfigProblems,
    (e) => tellAll(e.problems)
  )
)

/**
 * A failure's story on one line: its message and its causes' (a server that cannot listen fails
 * with an empty message and the system's reason as its cause), a tag where a message is empty.
 */
const oneLine = (e: unknown) => {
  const parts: Array<string> = []
  let at: unknown = e
  for (let depth = 0; at !== undefined && at !== null && depth < 5; depth++) {
    const message = typeof at === "object" && "message" in at ? String(at.message).trim() : String(at).trim()
    const tag = typeof at === "object" && "_tag" in at ? String(at._tag) : ""
    const said = message !== "" ? message : tag
    if (said !== "" && !parts.includes(said)) parts.push(said)
    at = typeof at === "object" && "cause" in at ? at.cause : undefined
  }
  return parts
    .join(": ")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join("; ")
}

// a mistake in the command line or the configuration (a failure, not a defect): one line on
// stderr and exit 1, never a stack trace; a defect (a bug) still prints its cause
const toldAll = told.pipe(
  Effect.catchIf(
    (e) => !(e instanceof Told),
    (e) => tell(oneLine(e))
  )
)

// every log line (the request log, the worker's and the webhooks' lines) as RECUR_LOG_FORMAT and
// RECUR_LOG_LEVEL say, with its secrets redacted
// (a mistake in the log settings is told with every other mistake in the configuration)
const logged = Effect.flatMap(
  Effect.catch(Config.logging, () => Effect.flatMap(Config.problems, tellAll)),
  (settings) => Effect.provide(toldAll, Server.logging(settings))
)
NodeRuntime.runMain(logged, { teardown })
