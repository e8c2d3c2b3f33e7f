/**
 * An adapter of the FX port (`Ports.FxRates`) on the European Central Bank's euro foreign
 * exchange reference rates (the daily XML feed): "the real-time rate of the day" for a checkout's
 * `target_currency` without a `merchant_rate`.
 *
 * - Fetched at most once per publishing day: the ECB publishes around 16:00 CET on working days;
 *   the rates kept are current until 15:00 UTC of the next working day ({@link expectedDay}), and
 *   a fetch that found no newer day is not repeated before then. A failed fetch is retried no
 *   sooner than {@link RETRY_AFTER_MS} later; meanwhile the kept rates (or the table) answer.
 * - Read strictly ({@link parseFeed}): at most {@link MAX_FEED_BYTES}, within a timeout, the
 *   feed's own structure or nothing.
 * - Kept in storage (`Entities.fxSnapshot`): a restart does not fetch again.
 * - Cross rates through the euro, rounded once to ten significant digits (`FxRates.crossRate`).
 * - Rates older than {@link MAX_AGE_DAYS} days count as missing; then the static table
 *   (`fxStatic`) answers, and with neither the checkout is refused (400 naming `target_currency`).
 * - Time only from Effect's `Clock`.
 *
 * @since 0.1.0
 */
import { Entities, Ports, Store } from "@recur/core"
import { Clock, Duration, Effect, Layer, Option, Result, Semaphore } from "effect"
import * as Decimal from "@recur/core/Decimal"

/** The ECB's daily feed. */
export const ECB_DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"

/** The largest feed read (the real one is about 1.5 KiB): a larger answer is refused unread. */
export const MAX_FEED_BYTES = 64 * 1024

/** How long a fetch may take before it is given up. */
export const FETCH_TIMEOUT = Duration.seconds(10)

/** Rates published more than this many days before today count as missing (a long holiday weekend is 4). */
export const MAX_AGE_DAYS = 5

/** The least time between two fetches when the last one failed. */
export const RETRY_AFTER_MS = 15 * 60 * 1000

/** The hour (UTC) after which a working day's rates are surely published (16:00 CET is 15:00 UTC, 14:00 in summer). */
const PUBLISHED_BY_UTC_HOUR = 15

const SNAPSHOT_ID = "ecb"

/** Why a feed was not used. */
export class FeedRefused extends Error {
  readonly _tag = "FeedRefused"
}

/** A day's reference rates: units of each currency per euro, as published. */
export interface Feed {
  readonly date: string
  readonly rates: Readonly<Record<string, string>>
}

const ATTRIBUTE = /\s+([A-Za-z][\w:.-]*)\s*=\s*(?:'([^'<>&]*)'|"([^"<>&]*)")/gy
const RATE = /^\d{1,7}(?:\.\d{1,8})?$/
const CURRENCY = /^[A-Z]{3}$/

const attributesOf = (text: string): Record<string, string> | undefined => {
  const out: Record<string, string> = {}
  ATTRIBUTE.lastIndex = 0
  let at = 0
  while (at < text.length) {
    if (/^\s*\/?$/.test(text.slice(at))) break
    ATTRIBUTE.lastIndex = at
    const m = ATTRIBUTE.exec(text)
    if (m === null || m[1]! in out) return undefined
    out[m[1]!] = m[2] ?? m[3] ?? ""
    at = ATTRIBUTE.lastIndex
  }
  return out
}

const validDate = (date: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return false
  const t = Date.parse(`${date}T00:00:00Z`)
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === date
}

/**
 * Reads the ECB's daily feed strictly: a `gesmes:Envelope` holding one `Cube time="YYYY-MM-DD"`
 * of 1–100 `Cube currency="XXX" rate="d.ddd"` (each currency once, each rate positive and at most
 * 7 integer and 8 fraction digits, no euro). No DTD, entity, comment or CDATA; nothing bigger
 * than {@link MAX_FEED_BYTES}. Anything else is refused, never half-read.
 */
export const parseFeed = (xml: string): Result.Result<Feed, FeedRefused> => {
  const refuse = (why: string) => Result.fail(new FeedRefused(`the ECB feed is refused: ${why}`))
  if (xml.length > MAX_FEED_BYTES) return refuse("too large")
  if (xml.includes("<!")) return refuse("a DTD, comment or CDATA section")
  const body = xml.replace(/^\uFEFF?\s*<\?xml[^?]*\?>\s*/, "")
  if (!body.startsWith("<gesmes:Envelope") || !/<\/gesmes:Envelope>\s*$/.test(body))
    return refuse("not a gesmes:Envelope")
  if (body.includes("<?")) return refuse("a processing instruction")
  const cubes = [...body.matchAll(/<Cube\b([^<>]*)>/g)]
  if (cubes.length !== (body.match(/<Cube/g) ?? []).length) return refuse("a malformed Cube element")
  const closes = (body.match(/<\/Cube\s*>/g) ?? []).length
  let date: string | undefined
  const rates: Record<string, string> = {}
  let outer = 0
  for (const [, raw = ""] of cubes) {
    const selfClosing = raw.trimEnd().endsWith("/")
    const attrs = attributesOf(raw)
    if (attrs === undefined) return refuse("malformed attributes")
    const keys = Object.keys(attrs).sort().join(",")
    if (keys === "" && !selfClosing) outer += 1
    else if (keys === "time" && !selfClosing) {
      if (date !== undefined) return refuse("more than one day")
      if (!validDate(attrs.time!)) return refuse(`not a date: ${attrs.time}`)
      date = attrs.time
    } else if (keys === "currency,rate" && selfClosing) {
      const { currency = "", rate = "" } = attrs
      if (!CURRENCY.test(currency) || currency === "EUR") return refuse(`not a currency: ${currency}`)
      if (currency in rates) return refuse(`${currency} twice`)
      if (!RATE.test(rate) || !/[1-9]/.test(rate)) return refuse(`not a rate: ${rate}`)
      rates[currency] = rate
    } else return refuse("an unexpected Cube")
  }
  if (outer !== 1 || date === undefined || closes !== 2) return refuse("not one day of rates")
  const count = Object.keys(rates).length
  if (count < 1 || count > 100) return refuse(`${count} rates`)
  return Result.succeed({ date, rates })
}

const DAY_MS = 86_400_000

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/**
 * The newest publishing day whose rates are surely out at `nowMs`: today from 15:00 UTC on a
 * working day (Monday–Friday), else the working day before. ECB holidays (TARGET closing days)
 * are not listed: on one the feed keeps the day before, which is then fetched once and kept.
 */
export const expectedDay = (nowMs: number): string => {
  let t = nowMs
  if (new Date(t).getUTCHours() < PUBLISHED_BY_UTC_HOUR) t -= DAY_MS
  for (;;) {
    const weekday = new Date(t).getUTCDay()
    if (weekday !== 0 && weekday !== 6) return dayOf(t)
    t -= DAY_MS
  }
}

/** When a day's rates are surely published: 15:00 UTC that day. */
const publishedBy = (day: string): number => Date.parse(`${day}T00:00:00Z`) + PUBLISHED_BY_UTC_HOUR * 3_600_000

/** How a feed is fetched: the URL and an abort signal to an HTTP status and the body's bytes (bounded). */
export type Fetch = (
  url: string,
  signal: AbortSignal
) => Promise<{ readonly status: number; readonly body: Uint8Array }>

/**
 * `globalThis.fetch`, reading at most `MAX_FEED_BYTES + 1` bytes of the body (a larger answer is
 * cut there and refused by {@link parseFeed}'s size check).
 */
export const fetchBounded: Fetch = async (url, signal) => {
  const response = await fetch(url, { signal, redirect: "follow", headers: { accept: "application/xml, text/xml" } })
  const declared = Number(response.headers.get("content-length") ?? "0")
  if (declared > MAX_FEED_BYTES) {
    await response.body?.cancel()
    return { status: response.status, body: new Uint8Array(MAX_FEED_BYTES + 1) }
  }
  const chunks: Array<Uint8Array> = []
  let size = 0
  const reader = response.body?.getReader()
  if (reader !== undefined)
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
      if (size > MAX_FEED_BYTES) {
        await reader.cancel()
        break
      }
    }
  const body = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    body.set(c, at)
    at += c.length
  }
  return { status: response.status, body }
}

/** Options of {@link layer}. */
export interface EcbOptions {
  /** The fallback table (`{ "USD:JPY": "150.5" }`), as `fxStatic` reads it. Default: none. */
  readonly fallback?: Readonly<Record<string, string>>
  /** The feed's address. Default: {@link ECB_DAILY_URL}. */
  readonly url?: string
  /** How to fetch it. Default: {@link fetchBounded}. */
  readonly fetch?: Fetch
  /** The fetch's time limit. Default: {@link FETCH_TIMEOUT}. */
  readonly timeout?: Duration.Input
}

/**
 * The FX port on the ECB's daily reference rates, kept in `Store.Storage`, with `fallback` (a
 * static table) for what the feed does not have or when its rates are stale or unreachable.
 *
 * @example
 * Engine.layer.pipe(Layer.provideMerge(EcbRates.layer({ fallback: { "USD:EUR": "0.92" } })), Layer.provideMerge(storage))
 * @since 0.1.0
 */
export const layer = (options: EcbOptions = {}): Layer.Layer<Ports.FxRates, never, Store.Storage> =>
  Layer.effect(
    Ports.FxRates,
    Effect.gen(function* () {
      const storage = yield* Store.Storage
      const repo = storage.repository(Entities.fxSnapshot)
      const fallback = yield* Ports.FxRates.pipe(Effect.provide(Ports.fxStatic(options.fallback ?? {})))
      const fetchFeed = options.fetch ?? fetchBounded
      const url = options.url ?? ECB_DAILY_URL
      const timeout = options.timeout ?? FETCH_TIMEOUT
      const lock = yield* Semaphore.make(1)
      let lastFailure = Number.NEGATIVE_INFINITY

      const stored = repo.get(Entities.FX_SNAPSHOT_OWNER, SNAPSHOT_ID)

      /** Fetches and parses the feed; fails with why it was not used. */
      const download = Effect.gen(function* () {
        const answer = yield* Effect.tryPromise({
          try: (signal) => fetchFeed(url, signal),
          catch: (e) => new FeedRefused(`the ECB feed could not be fetched: ${String(e)}`)
        }).pipe(
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => Effect.fail(new FeedRefused("the ECB feed did not answer in time"))
          })
        )
        if (answer.status !== 200) return yield* Effect.fail(new FeedRefused(`the ECB feed answered ${answer.status}`))
        if (answer.body.length > MAX_FEED_BYTES) return yield* Effect.fail(new FeedRefused("the ECB feed is too large"))
        const text = yield* Effect.try({
          try: () => new TextDecoder("utf-8", { fatal: true }).decode(answer.body),
          catch: () => new FeedRefused("the ECB feed is not UTF-8")
        })
        const parsed = parseFeed(text)
        return Result.isSuccess(parsed) ? parsed.success : yield* Effect.fail(parsed.failure)
      })

      /** The kept rates, fetched first when a newer publishing day is due (one caller at a time). */
      const current = lock.withPermit(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const kept = Option.map(yield* stored, (v) => v)
          const due = expectedDay(now)
          const snapshot = Option.getOrUndefined(Option.map(kept, (k) => k.value))
          const fresh = snapshot !== undefined && snapshot.published_on >= due
          const triedToday = snapshot !== undefined && snapshot.fetched_at >= publishedBy(due)
          if (fresh || triedToday || now - lastFailure < RETRY_AFTER_MS) return snapshot
          const fetched = yield* Effect.result(download)
          if (Result.isFailure(fetched)) {
            lastFailure = now
            yield* Effect.logWarning(fetched.failure.message)
            return snapshot
          }
          const next: Entities.FxSnapshot = {
            id: SNAPSHOT_ID,
            merchant_id: Entities.FX_SNAPSHOT_OWNER,
            base: "EUR",
            published_on: fetched.success.date,
            fetched_at: now,
            // an older day than the one kept (a feed served from a stale cache) never replaces it
            rates:
              snapshot !== undefined && snapshot.published_on > fetched.success.date
                ? snapshot.rates
                : fetched.success.rates
          }
          const write = Option.match(kept, {
            onNone: () => repo.insert(next),
            onSome: (k) =>
              repo.update(
                snapshot!.published_on > fetched.success.date
                  ? { ...next, published_on: snapshot!.published_on }
                  : next,
                k.version
              )
          })
          // another process wrote the day first: its copy is as good as ours
          yield* Effect.ignore(write)
          return Option.getOrUndefined(Option.map(yield* stored, (v) => v.value))
        })
      )

      const perEuro = (snapshot: Entities.FxSnapshot, currency: string): Decimal.Decimal | undefined => {
        if (currency === snapshot.base) return Decimal.make(1n)
        const text = snapshot.rates[currency]
        return text === undefined ? undefined : Result.getOrUndefined(Decimal.parse(text))
      }

      return {
        rate: (source, target) =>
          Effect.gen(function* () {
            if (source === target) return Option.some(Decimal.make(1n))
            const snapshot = yield* current
            const now = yield* Clock.currentTimeMillis
            const young =
              snapshot !== undefined &&
              Date.parse(`${dayOf(now)}T00:00:00Z`) - Date.parse(`${snapshot.published_on}T00:00:00Z`) <=
                MAX_AGE_DAYS * DAY_MS
            if (snapshot !== undefined && young) {
              const s = perEuro(snapshot, source)
              const t = perEuro(snapshot, target)
              if (s !== undefined && t !== undefined) return Option.some(Ports.crossRate(s, t))
            }
            return yield* fallback.rate(source, target)
          })
      }
    })
  )
