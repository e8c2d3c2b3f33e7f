// The FX adapter on the ECB's daily reference rates, offline: a recorded feed file (today's
// structure) served by a fake fetch, and the refusals — malformed XML, HTTP 500, a timeout, an
// oversized answer — each falling back to the static table. Time only from the TestClock.
import { describe, expect, it } from "@effect/vitest"
import { Entities, Ports, Store } from "@recur/core"
import * as Decimal from "@recur/core/Decimal"
import { MemoryStorage } from "@recur/memory"
import { Pg } from "@recur/sql"
import { Effect, Fiber, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import * as EcbRates from "../src/fx/EcbRates.js"

const FEED = readFileSync(new URL("./fixtures/eurofxref-daily.xml", import.meta.url), "utf8")
const bytes = (text: string) => new TextEncoder().encode(text)
const feedOn = (day: string, usd = "1.0832") =>
  FEED.replace("time='2026-11-26'", `time='${day}'`).replace("rate='1.0832'", `rate='${usd}'`)

/** A fake feed: answers what `next` says, counting the calls. */
const fakeFetch = () => {
  const state = {
    calls: 0,
    next: (): Promise<{ status: number; body: Uint8Array }> => Promise.resolve({ status: 200, body: bytes(FEED) })
  }
  const fetch: EcbRates.Fetch = () => {
    state.calls += 1
    return state.next()
  }
  return { state, fetch }
}

const rateOf = (source: string, target: string) =>
  Effect.map(
    Ports.FxRates.use((fx) => fx.rate(source, target)),
    Option.map((d) => Decimal.format(d))
  )

/** The adapter over `storage`, with `fallback`, run on `effect`. */
const withEcb = <A, E>(
  storage: Layer.Layer<Store.Storage>,
  fetch: EcbRates.Fetch,
  effect: Effect.Effect<A, E, Ports.FxRates>,
  fallback: Record<string, string> = {}
) => effect.pipe(Effect.provide(EcbRates.layer({ fetch, fallback }).pipe(Layer.provide(storage))))

const at = (iso: string) => TestClock.setTime(Date.parse(iso))

/** A storage layer built once: the same records across several adapter instances (a restart). */
const built = (layer: Layer.Layer<Store.Storage, unknown>) =>
  Effect.map(Effect.orDie(Layer.build(layer)), (ctx) => Layer.succeedContext(ctx))
const sharedStorage = built(MemoryStorage.layer)

const url = process.env.RECUR_TEST_DATABASE_URL
const stores: ReadonlyArray<readonly [string, () => Layer.Layer<Store.Storage, unknown>]> = [
  ["memory", () => MemoryStorage.layer],
  ["PGlite", () => Pg.layerPglite()],
  ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
]

describe("the ECB reference-rate feed", () => {
  it("reads the recorded feed: its day and 29 rates", { timeout: 10_000 }, () => {
    const feed = EcbRates.parseFeed(FEED)
    expect(Result.isSuccess(feed)).toBe(true)
    if (Result.isSuccess(feed)) {
      expect(feed.success.date).toBe("2026-11-26")
      expect(Object.keys(feed.success.rates)).toHaveLength(29)
      expect(feed.success.rates.USD).toBe("1.0832")
      expect(feed.success.rates.IDR).toBe("18034.37")
    }
  })

  it("refuses anything but the feed's own structure", { timeout: 10_000 }, () => {
    const refused = (xml: string) => Result.isFailure(EcbRates.parseFeed(xml))
    expect(refused(FEED.slice(0, FEED.length - 40))).toBe(true) // truncated
    expect(refused("<html><body>Service unavailable</body></html>")).toBe(true)
    expect(refused("")).toBe(true)
    expect(refused(FEED.replace("<gesmes:Envelope", '<!DOCTYPE x [<!ENTITY e "x">]><gesmes:Envelope'))).toBe(true)
    expect(refused(FEED.replace("rate='162.45'", "rate='1e5'"))).toBe(true)
    expect(refused(FEED.replace("rate='162.45'", "rate='-162.45'"))).toBe(true)
    expect(refused(FEED.replace("rate='162.45'", "rate='0.000'"))).toBe(true)
    expect(refused(FEED.replace("currency='JPY'", "currency='USD'"))).toBe(true) // twice
    expect(refused(FEED.replace("currency='JPY'", "currency='EUR'"))).toBe(true)
    expect(refused(FEED.replace("currency='JPY'", "currency='jpy'"))).toBe(true)
    expect(refused(FEED.replace("time='2026-11-26'", "time='2026-02-30'"))).toBe(true)
    expect(refused(FEED.replace("rate='162.45'/>", "rate='162.45'>"))).toBe(true) // not closed
    expect(
      refused(FEED.replace("<Cube currency='USD' rate='1.0832'/>", "<Cube currency='USD' rate='1.0832' x='1'/>"))
    ).toBe(true)
    expect(refused(FEED.replace("</Cube>\n\t</Cube>", "</Cube>\n<Cube time='2026-11-25'></Cube>\n\t</Cube>"))).toBe(
      true
    )
    expect(refused(FEED.replace("<Cube currency='USD'", "<Cube currency='USD\" rate=\"2'"))).toBe(true)
    expect(refused(FEED + " ".repeat(EcbRates.MAX_FEED_BYTES))).toBe(true)
    // the same feed with double quotes and no declaration is still the feed
    expect(refused(FEED.replace(/'/g, '"').replace(/^<\?xml[^>]*>\s*/, ""))).toBe(false)
  })

  it("the publishing day due: today from 15:00 UTC on a working day, else the working day before", () => {
    expect(EcbRates.expectedDay(Date.parse("2026-11-26T14:59:00Z"))).toBe("2026-11-25")
    expect(EcbRates.expectedDay(Date.parse("2026-11-26T15:00:00Z"))).toBe("2026-11-26")
    expect(EcbRates.expectedDay(Date.parse("2026-11-28T20:00:00Z"))).toBe("2026-11-27") // Saturday
    expect(EcbRates.expectedDay(Date.parse("2026-11-30T09:00:00Z"))).toBe("2026-11-27") // Monday morning
  })

  for (const [name, store] of stores)
    it.effect(
      `fetches once per publishing day, keeps the day in storage (a restart does not fetch), derives cross rates through the euro (${name})`,
      () =>
        Effect.gen(function* () {
          const storage = yield* built(store())
          const fake = fakeFetch()
          yield* at("2026-11-26T16:00:00Z")
          const first = yield* withEcb(
            storage,
            fake.fetch,
            Effect.all([rateOf("EUR", "USD"), rateOf("USD", "JPY"), rateOf("USD", "EUR"), rateOf("IDR", "EUR")])
          )
          expect(first.map(Option.getOrNull)).toEqual(["1.0832", "149.9723043", "0.9231905465", "0.000055449677"])
          expect(fake.state.calls).toBe(1)
          // kept: the same day asks nothing more, nor does a new instance over the same storage
          yield* at("2026-11-26T23:00:00Z")
          expect(Option.getOrNull(yield* withEcb(storage, fake.fetch, rateOf("GBP", "USD")))).toBe("1.297012513")
          expect(fake.state.calls).toBe(1)
          const kept = yield* Effect.provide(
            Store.Storage.use((s) => s.repository(Entities.fxSnapshot).get(Entities.FX_SNAPSHOT_OWNER, "ecb")),
            storage
          )
          expect(Option.map(kept, (k) => k.value.published_on)).toEqual(Option.some("2026-11-26"))
          // the next morning: yesterday's rates are still the newest published
          yield* at("2026-11-27T10:00:00Z")
          yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD"))
          expect(fake.state.calls).toBe(1)
          // after 15:00 UTC: the new day is fetched once
          fake.state.next = () => Promise.resolve({ status: 200, body: bytes(feedOn("2026-11-27", "1.0900")) })
          yield* at("2026-11-27T15:30:00Z")
          expect(Option.getOrNull(yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD")))).toBe("1.09")
          yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD"))
          expect(fake.state.calls).toBe(2)
          // the weekend: Friday's rates, nothing fetched
          yield* at("2026-11-29T12:00:00Z")
          yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD"))
          expect(fake.state.calls).toBe(2)
          // a holiday: the feed still says Friday; fetched once that day, not again
          fake.state.next = () => Promise.resolve({ status: 200, body: bytes(feedOn("2026-11-27", "1.0900")) })
          yield* at("2026-11-30T16:00:00Z")
          yield* withEcb(storage, fake.fetch, Effect.all([rateOf("EUR", "USD"), rateOf("EUR", "JPY")]))
          yield* at("2026-11-30T22:00:00Z")
          yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD"))
          expect(fake.state.calls).toBe(3)
        }),
      { timeout: 60_000 }
    )

  it.effect(
    "a pair the feed lacks comes from the static table; with neither there is no rate",
    () =>
      Effect.gen(function* () {
        const fake = fakeFetch()
        yield* at("2026-11-26T16:00:00Z")
        const [table, none, identity] = yield* withEcb(
          MemoryStorage.layer,
          fake.fetch,
          Effect.all([rateOf("USD", "XAF"), rateOf("USD", "XOF"), rateOf("XOF", "XOF")]),
          { "USD:XAF": "605.5" }
        )
        expect([Option.getOrNull(table), Option.getOrNull(none), Option.getOrNull(identity)]).toEqual([
          "605.5",
          null,
          "1"
        ])
      }),
    { timeout: 20_000 }
  )

  it.effect(
    "HTTP 500, malformed XML and an oversized answer are refused: the table answers, and a failed fetch waits 15 minutes",
    () =>
      Effect.gen(function* () {
        const fallback = { "EUR:USD": "1.05" }
        for (const answer of [
          { status: 500, body: bytes("Internal Server Error") },
          { status: 200, body: bytes(FEED.slice(0, 600)) },
          { status: 200, body: bytes(FEED.replace("</gesmes:Envelope>", `${" ".repeat(70_000)}</gesmes:Envelope>`)) },
          { status: 200, body: new Uint8Array([0xff, 0xfe, 0x00]) }
        ]) {
          const fake = fakeFetch()
          fake.state.next = () => Promise.resolve(answer)
          yield* at("2026-11-26T16:00:00Z")
          const storage = yield* sharedStorage
          const rates = yield* withEcb(
            storage,
            fake.fetch,
            Effect.gen(function* () {
              const first = yield* rateOf("EUR", "USD")
              yield* TestClock.adjust("10 minutes")
              const second = yield* rateOf("EUR", "USD")
              expect(fake.state.calls).toBe(1)
              fake.state.next = () => Promise.resolve({ status: 200, body: bytes(FEED) })
              yield* TestClock.adjust("6 minutes")
              const third = yield* rateOf("EUR", "USD")
              return [first, second, third].map(Option.getOrNull)
            }),
            fallback
          )
          expect(rates).toEqual(["1.05", "1.05", "1.0832"])
          expect(fake.state.calls).toBe(2)
        }
      }),
    { timeout: 20_000 }
  )

  it.effect(
    "a feed that does not answer is given up after the timeout: the table answers",
    () =>
      Effect.gen(function* () {
        let aborted = false
        const hanging: EcbRates.Fetch = (_url, signal) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener("abort", () => {
              aborted = true
              reject(new Error("aborted"))
            })
          })
        yield* at("2026-11-26T16:00:00Z")
        const fiber = yield* Effect.forkChild(
          withEcb(MemoryStorage.layer, hanging, rateOf("EUR", "USD"), { "EUR:USD": "1.05" })
        )
        yield* TestClock.adjust("11 seconds")
        expect(Option.getOrNull(yield* Fiber.join(fiber))).toBe("1.05")
        expect(aborted).toBe(true)
      }),
    { timeout: 20_000 }
  )

  it.effect(
    "rates published more than five days ago count as missing",
    () =>
      Effect.gen(function* () {
        const storage = yield* sharedStorage
        const fake = fakeFetch()
        fake.state.next = () => Promise.resolve({ status: 200, body: bytes(feedOn("2026-11-18")) })
        yield* at("2026-11-18T16:00:00Z")
        expect(Option.getOrNull(yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD")))).toBe("1.0832")
        // eight days later the feed is down: the kept rates are too old, only the table answers
        fake.state.next = () => Promise.resolve({ status: 503, body: bytes("") })
        yield* at("2026-11-23T10:00:00Z") // five days: still used
        expect(Option.getOrNull(yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD")))).toBe("1.0832")
        yield* at("2026-11-26T16:00:00Z")
        expect(Option.getOrNull(yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD")))).toBeNull()
        expect(Option.getOrNull(yield* withEcb(storage, fake.fetch, rateOf("EUR", "USD"), { "EUR:USD": "1.05" }))).toBe(
          "1.05"
        )
      }),
    { timeout: 20_000 }
  )
})

describe("cross rates through the euro", () => {
  it("one rounding step: half to even at ten significant digits, at most twelve decimals", () => {
    const d = (s: string) => Result.getOrThrow(Decimal.parse(s))
    const cross = (a: string, b: string) => Decimal.format(Ports.crossRate(d(a), d(b)))
    expect(cross("1.0832", "162.45")).toBe("149.9723043")
    expect(cross("1", "1.0832")).toBe("1.0832")
    expect(cross("3", "1")).toBe("0.3333333333")
    expect(cross("3", "2")).toBe("0.6666666667")
    expect(cross("18034.37", "1")).toBe("0.000055449677")
    expect(cross("1", "18034.37")).toBe("18034.37")
    expect(cross("7", "7")).toBe("1")
    expect(Ports.CROSS_RATE_SIGNIFICANT_DIGITS).toBe(10)
  })
})

describe("the default fetch, against a local server (no internet)", () => {
  it("reads the feed, and cuts an answer larger than the bound, declared or not", async () => {
    const { createServer } = await import("node:http")
    const big = "x".repeat(EcbRates.MAX_FEED_BYTES + 10)
    const server = createServer((req, res) => {
      if (req.url === "/feed") return void res.writeHead(200, { "content-type": "text/xml" }).end(FEED)
      if (req.url === "/declared") return void res.writeHead(200, { "content-length": String(big.length) }).end(big)
      if (req.url === "/chunked") {
        res.writeHead(200, { "content-type": "text/xml" })
        res.write(big.slice(0, 40_000))
        return void res.end(big.slice(40_000))
      }
      res.writeHead(500).end("boom")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
    try {
      const signal = new AbortController().signal
      const feed = await EcbRates.fetchBounded(`${base}/feed`, signal)
      expect([feed.status, new TextDecoder().decode(feed.body)]).toEqual([200, FEED])
      for (const path of ["/declared", "/chunked"]) {
        const cut = await EcbRates.fetchBounded(`${base}${path}`, signal)
        expect([path, cut.body.length > EcbRates.MAX_FEED_BYTES]).toEqual([path, true])
        expect(cut.body.length).toBeLessThanOrEqual(EcbRates.MAX_FEED_BYTES + 65_536)
      }
      expect((await EcbRates.fetchBounded(`${base}/other`, signal)).status).toBe(500)
    } finally {
      server.close()
    }
  }, 20_000)
})
