/**
 * Issue 34 (4): the customer balance ledger on every store — memory, PGlite and PostgreSQL
 * (with RECUR_TEST_DATABASE_URL). A property (fixed seed, bounded runs): after any sequence of
 * credits and debits, each customer's balance in each currency is the sum of its entries and
 * each entry's `ending_balance` the running sum. And concurrency: many transactions crediting one
 * customer at once lose no update (a writer that read a stale balance fails `ConcurrentUpdate`,
 * rolls back and retries), so the ending balances are exactly 1×…n× the amount.
 */
import { describe, expect, it } from "@effect/vitest"
import { CustomerBalance, Entities, Store } from "@recur/core"
import { MemoryStorage } from "@recur/testing"
import { Pg } from "@recur/sql"
import { Effect, Layer, Schedule } from "effect"

const url = process.env.RECUR_TEST_DATABASE_URL
const stores: ReadonlyArray<readonly [string, () => Layer.Layer<Store.Storage, unknown>]> = [
  ["memory", () => MemoryStorage.layer],
  ["PGlite", () => Pg.layerPglite()],
  ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
]

/** A small deterministic generator (mulberry32): the property's fixed seed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const MERCHANT = "mch_ledger"

const allEntries = (storage: Store.Storage["Service"], customer: string) =>
  Effect.gen(function* () {
    const out: Array<Entities.BalanceTransactionRecord> = []
    let after: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        storage.repository(Entities.balanceTransaction).list(MERCHANT, {
          limit: 100,
          filters: [{ column: "customer_id", op: "in", values: [customer] }],
          ...(after ? { starting_after: after } : {})
        })
      )
      out.push(...page.list)
      if (!page.has_more) return out.reverse()
      after = page.list.at(-1)!.id
    }
  })

for (const [name, store] of stores)
  describe(`customer balance ledger (${name})`, () => {
    it.live(
      "property (seed 34, 8 runs of up to 30 entries): balance = Σ entries, ending balances chained, per customer and currency",
      () =>
        Effect.gen(function* () {
          const storage = yield* Store.Storage
          const next = random(34)
          for (let run = 0; run < 8; run++) {
            const customers = [`cus_r${run}a`, `cus_r${run}b`]
            const currencies = ["USD", "EUR"]
            const expected = new Map<string, bigint>()
            const steps = 1 + Math.floor(next() * 30)
            for (let i = 0; i < steps; i++) {
              const customer = customers[Math.floor(next() * 2)]!
              const currency = currencies[Math.floor(next() * 2)]!
              const amount = BigInt(Math.floor(next() * 20_001) - 10_000)
              yield* storage.withTransaction(
                CustomerBalance.record(storage, {
                  merchantId: MERCHANT,
                  customerId: customer,
                  currency,
                  amount,
                  sourceType: amount >= 0n ? "manual_adjustment" : "applied_to_invoice",
                  sourceId: null,
                  at: Date.parse("2026-01-01T00:00:00Z") + i
                })
              )
              expected.set(`${customer}:${currency}`, (expected.get(`${customer}:${currency}`) ?? 0n) + amount)
            }
            for (const customer of customers) {
              const entries = yield* allEntries(storage, customer)
              for (const currency of currencies) {
                const mine = entries.filter((e) => e.currency === currency)
                let sum = 0n
                for (const e of mine) {
                  expect(e.amount).not.toBe(0n)
                  sum += e.amount
                  expect(e.ending_balance).toBe(sum)
                }
                expect(sum).toBe(expected.get(`${customer}:${currency}`) ?? 0n)
                const balance = yield* CustomerBalance.balanceOf(storage, MERCHANT, customer, currency)
                expect(balance.amount).toBe(sum)
              }
              const rows = yield* CustomerBalance.balancesOf(storage, MERCHANT, customer)
              for (const r of rows) expect(r.entries).toBe(entries.filter((e) => e.currency === r.currency).length)
            }
          }
        }).pipe(Effect.provide(Layer.fresh(store()))),
      180_000
    )

    it.live(
      "24 transactions credit one customer at once: no lost update, ending balances 1×…24× the amount",
      () =>
        Effect.gen(function* () {
          const storage = yield* Store.Storage
          const credit = (i: number) =>
            storage
              .withTransaction(
                CustomerBalance.record(storage, {
                  merchantId: MERCHANT,
                  customerId: "cus_busy",
                  currency: "USD",
                  amount: 100n,
                  sourceType: "proration_credit",
                  sourceId: `sub_${i}`,
                  subscriptionId: `sub_${i}`,
                  at: Date.parse("2026-01-01T00:00:00Z")
                })
              )
              .pipe(
                Effect.retry({
                  while: (e) => e._tag === "ConcurrentUpdate",
                  schedule: Schedule.spaced("5 millis"),
                  times: 200
                })
              )
          yield* Effect.forEach(
            Array.from({ length: 24 }, (_, i) => i),
            credit,
            { concurrency: 8, discard: true }
          )
          const entries = yield* allEntries(storage, "cus_busy")
          expect(entries.length).toBe(24)
          expect(entries.map((e) => Number(e.ending_balance)).sort((a, b) => a - b)).toEqual(
            Array.from({ length: 24 }, (_, i) => (i + 1) * 100)
          )
          expect((yield* CustomerBalance.balanceOf(storage, MERCHANT, "cus_busy", "USD")).amount).toBe(2400n)
        }).pipe(Effect.provide(Layer.fresh(store()))),
      180_000
    )
  })
