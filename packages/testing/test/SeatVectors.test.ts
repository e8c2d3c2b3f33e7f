/**
 * The seat-change vectors of docs/proration.md ("Seat changes: several in one cycle"), read from
 * the document itself and replayed on the whole engine (memory storage): a Team plan 49.00 with
 * 5 × Seat 12.00 paid on Jan 1, seats 5 → 8 then 8 → 6 in the same cycle, under every policy and
 * the modes that prorate; each change's quote, what it moved at once, and the next invoice.
 */
import { expect, layer } from "@effect/vitest"
import { Entities, ItemChanges, type ItemRules, Renewals, SandboxClock, Store } from "@recur/core"
import { Effect, Option } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { MemoryStorage, ScenarioKit } from "../src/index.js"

const doc = readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "proration.md"), "utf8")
const table = doc.slice(doc.indexOf("<!-- vectors:seats -->"), doc.indexOf("<!-- /vectors:seats -->"))
const rows = table
  .split("\n")
  .filter((l) => l.startsWith("| ") && !l.startsWith("| policy") && !l.startsWith("|---"))
  .map((l) =>
    l
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim())
  )

/** The two changes of a run: when, and to how many seats. */
const changes = [
  { at: "2026-01-11T12:00:00Z", seats: 8n },
  { at: "2026-01-21T06:00:00Z", seats: 6n }
] as const

/** Replays the two changes for `policy` and `mode`: per change its quote numbers, then the next invoice. */
const replay = (policy: string, mode: ItemRules.ItemProration) =>
  Effect.gen(function* () {
    const merchantId = yield* ScenarioKit.merchantAt("2026-01-01T00:00:00Z", { proration_policy: policy })
    const team = yield* ScenarioKit.monthly(
      merchantId,
      yield* ScenarioKit.productOf(merchantId, "Team"),
      "49.00",
      {},
      "Team plan"
    )
    const seat = yield* ScenarioKit.monthly(
      merchantId,
      yield* ScenarioKit.productOf(merchantId, "Seats"),
      "12.00",
      {},
      "Seat"
    )
    const sub = (yield* ScenarioKit.checkout(merchantId, {
      line_items: [
        { price_id: team, quantity: "1" },
        { price_id: seat, quantity: "5" }
      ]
    })).subscriptionId
    const items = yield* ItemChanges.ItemChanges
    const seatItem = (yield* items.list(merchantId, sub))[1]!.id
    const out: Array<ReadonlyArray<string>> = []
    for (const c of changes) {
      yield* (yield* SandboxClock.SandboxClock).advanceClock(merchantId, Date.parse(c.at))
      const change: ItemRules.ItemChangeCommand = {
        subscriptionId: sub as never,
        items: [{ id: Option.some(seatItem), priceId: Option.none(), quantity: Option.some(c.seats), deleted: false }],
        proration: mode,
        quoteId: Option.none()
      }
      const quote = yield* items.preview(merchantId, change)
      const done = yield* items.commit(merchantId, { ...change, quoteId: Option.some(quote.quote_id) })
      expect(done.quote).toEqual(quote)
      out.push([quote.credit, quote.charge, quote.outcome, quote.total])
    }
    const rec = Option.getOrThrow(
      yield* Effect.orDie((yield* Store.Storage).repository(Entities.subscription).get(merchantId, sub))
    ).value
    const next = Option.getOrThrow(yield* (yield* Renewals.Renewals).upcomingOf(merchantId, rec))
    return { out, next: next.amount, balance: rec.subscription.credit_balance }
  })

layer(ScenarioKit.engine(MemoryStorage.layer), { timeout: "120 seconds" })(
  "docs/proration.md seat-change vectors",
  (it) => {
    it("the table has every policy × prorating mode × change", () => {
      expect(rows.length).toBe(12)
      expect(new Set(rows.map((r) => r[0]))).toEqual(new Set(["per_second", "per_day", "fixed_days(30)"]))
    })
    const runs = new Map<string, Array<ReadonlyArray<string>>>()
    for (const r of rows) {
      const key = `${r[0]} ${r[1]}`
      runs.set(key, [...(runs.get(key) ?? []), r])
    }
    for (const [key, expected] of runs)
      it.effect(
        key,
        () =>
          Effect.gen(function* () {
            const [policy, mode] = key.split(" ") as [string, ItemRules.ItemProration]
            const { out, next, balance } = yield* replay(policy, mode)
            // | policy | proration | seats | at | credit | charge | outcome | now | next | balance |
            expect(
              expected.map((r) => [r[4], r[5], r[6], r[7]]),
              JSON.stringify({ out, next, balance })
            ).toEqual(out)
            for (const r of expected) expect([r[8], r[9]]).toEqual([next, balance])
          }),
        60_000
      )
  }
)
