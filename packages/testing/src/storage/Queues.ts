/**
 * The storage contract's queues: the outbox, the work queue (one by one and in batches),
 * idempotency records and, on adapters that run two transactions at once, the claim and counter
 * races. Registered in order by `StorageContract.suite`.
 *
 * @since 0.1.0
 */
import { describe, expect, type Vitest } from "@effect/vitest"
import { Entities, Ids, Store } from "@recur/core"
import { Effect, Result, Option } from "effect"
import * as Fixtures from "../Fixtures.js"
import type { Options } from "../StorageContract.js"

const Storage = Store.Storage

/**
 * Registers the queue tests of the storage contract.
 *
 * @since 0.1.0
 */
export const queues = (it: Vitest.MethodsNonLive<Store.Storage>, options: Options) => {
  const customers = Effect.map(Storage, (s) => s.repository(Entities.customer))

  it.effect("outbox: append, claim with a lease, complete, sequences", () =>
    Effect.gen(function* () {
      const { outbox } = yield* Storage
      const m = yield* Fixtures.merchantId
      const ids = yield* Effect.forEach([1, 2, 3], () => Ids.make("evt"))
      const now = 4_000_000_000_000 + Math.floor(Math.random() * 1_000_000)
      expect(yield* outbox.nextSequence(m, "sub_x")).toBe(1)
      yield* outbox.append(
        ids.map((id, i) => ({
          id,
          merchant_id: m,
          type: "v2.test",
          business_id: "sub_x",
          content: `{"n":${i}}`,
          sequence: i + 1,
          created_at: now + i
        }))
      )
      expect(yield* outbox.nextSequence(m, "sub_x")).toBe(4)
      const mine = (events: ReadonlyArray<Store.OutboxEvent>) => events.filter((e) => e.merchant_id === m)
      const first = mine(yield* outbox.claim({ now: now + 10, limit: 1000, leaseMs: 30_000, owner: "w1" }))
      expect(first.map((e) => e.id)).toEqual(ids)
      expect(mine(yield* outbox.claim({ now: now + 20, limit: 1000, leaseMs: 30_000, owner: "w2" }))).toEqual([])
      expect(yield* outbox.complete(ids[0]!, "w2")).toBe(false)
      expect(yield* outbox.complete(ids[0]!, "w1")).toBe(true)
      const again = mine(yield* outbox.claim({ now: now + 40_000, limit: 1000, leaseMs: 30_000, owner: "w2" }))
      expect(again.map((e) => e.id)).toEqual(ids.slice(1))
      expect(again[0]!.content).toBe(`{"n":1}`)
      // many at once: only the lease owner's, each once
      expect(yield* outbox.completeMany([], "w2")).toBe(0)
      expect(yield* outbox.completeMany([ids[1]!, ids[2]!, ids[0]!], "w1")).toBe(0)
      expect(yield* outbox.completeMany([ids[1]!, ids[2]!, ids[0]!, ids[1]!], "w2")).toBe(2)
      expect(yield* outbox.completeMany([ids[1]!], "w2")).toBe(0)
      expect(mine(yield* outbox.claim({ now: now + 100_000, limit: 1000, leaseMs: 30_000, owner: "w3" }))).toEqual([])
    })
  )

  it.effect("work queue: due items only, leased, completed once, reschedules win", () =>
    Effect.gen(function* () {
      const { workQueue } = yield* Storage
      const m = yield* Fixtures.merchantId
      yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_1", due_at: 100 })
      yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_2", due_at: 200 })
      yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_2", due_at: 300 })
      expect(Option.getOrThrow(yield* workQueue.nextDue(m))).toBe(100)
      const claim = (now: number, owner: string) =>
        workQueue.claim({ now, limit: 10, leaseMs: 1000, owner, merchantId: m })
      const got = yield* claim(250, "w1")
      expect(got.map((w) => [w.subject_id, w.attempts, w.lane])).toEqual([["sub_1", 1, "live"]])
      expect(yield* claim(260, "w2")).toEqual([])
      // rescheduled while leased: the old claim cannot complete it
      yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_1", due_at: 5000 })
      expect(yield* workQueue.complete(got[0]!, "w1")).toBe(false)
      const later = yield* claim(6000, "w2")
      expect(later.map((w) => w.subject_id).sort()).toEqual(["sub_1", "sub_2"])
      for (const w of later) expect(yield* workQueue.complete(w, "w2")).toBe(true)
      expect(Option.isNone(yield* workQueue.nextDue(m))).toBe(true)
      yield* workQueue.schedule({ lane: "frozen", merchant_id: m, kind: "renewal", subject_id: "sub_f", due_at: 1 })
      expect(yield* claim(10_000, "w3")).toEqual([])
      const frozen = yield* workQueue.claim({
        now: 10_000,
        limit: 10,
        leaseMs: 1000,
        owner: "w3",
        merchantId: m,
        lane: "frozen"
      })
      expect(frozen.map((w) => [w.lane, w.subject_id])).toEqual([["frozen", "sub_f"]])
      yield* workQueue.complete(frozen[0]!, "w3")
      yield* workQueue.schedule({ merchant_id: m, kind: "trial_end", subject_id: "sub_3", due_at: 1 })
      yield* workQueue.cancel(m, "trial_end", "sub_3")
      expect(yield* claim(10_000, "w3")).toEqual([])
    })
  )

  it.effect(
    "work queue: a failed item is retried later, then set aside; attempts count until a reschedule; nextDue skips both",
    () =>
      Effect.gen(function* () {
        const { workQueue } = yield* Storage
        const m = yield* Fixtures.merchantId
        const claim = (now: number, owner: string) =>
          workQueue.claim({ now, limit: 10, leaseMs: 1000, owner, merchantId: m })
        yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_bad", due_at: 100 })
        yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_ok", due_at: 900 })
        const [bad] = yield* claim(100, "w1")
        expect([bad!.subject_id, bad!.attempts]).toEqual(["sub_bad", 1])
        expect(yield* workQueue.retryLater(bad!, "someone-else", 5000)).toBe(false)
        expect(yield* workQueue.retryLater(bad!, "w1", 5000)).toBe(true)
        // not claimable before 5000; the next item the merchant can run is sub_ok at 900
        expect(Option.getOrThrow(yield* workQueue.nextDue(m))).toBe(900)
        expect((yield* claim(4999, "w2")).map((w) => w.subject_id)).toEqual(["sub_ok"])
        const again = yield* claim(5000, "w3")
        expect(again.map((w) => [w.subject_id, w.attempts])).toEqual([["sub_bad", 2]])
        expect(yield* workQueue.setAside(again[0]!, "w1")).toBe(false)
        expect(yield* workQueue.setAside(again[0]!, "w3")).toBe(true)
        expect((yield* claim(1_000_000, "w4")).map((w) => w.subject_id)).toEqual(["sub_ok"])
        expect(
          (yield* workQueue.listSetAside({ merchantId: m, limit: 10 })).map((w) => [
            w.lane,
            w.kind,
            w.subject_id,
            w.attempts
          ])
        ).toEqual([["held", "renewal", "sub_bad", 2]])
        expect(yield* workQueue.listSetAside({ merchantId: "mch_nobody", limit: 10 })).toEqual([])
        yield* workQueue.cancel(m, "renewal", "sub_ok")
        expect(Option.isNone(yield* workQueue.nextDue(m))).toBe(true)
        // scheduling it again releases it, with a fresh count
        yield* workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: "sub_bad", due_at: 2_000_000 })
        expect(yield* workQueue.listSetAside({ merchantId: m, limit: 10 })).toEqual([])
        expect((yield* claim(2_000_000, "w5")).map((w) => [w.subject_id, w.attempts])).toEqual([["sub_bad", 1]])
      })
  )

  it.effect("work queue and outbox in batches: scheduleMany, cancelMany, completeMany, nextSequences", () =>
    Effect.gen(function* () {
      const { outbox, workQueue } = yield* Storage
      const m = yield* Fixtures.merchantId
      const other = yield* Fixtures.merchantId
      yield* workQueue.scheduleMany([])
      yield* workQueue.scheduleMany([
        { merchant_id: m, kind: "renewal", subject_id: "sub_1", due_at: 100 },
        { merchant_id: m, kind: "renewal", subject_id: "sub_2", due_at: 200 },
        { merchant_id: m, kind: "charge", subject_id: "trd_1", due_at: 150 },
        // the same key twice in one call: the later wins
        { merchant_id: m, kind: "renewal", subject_id: "sub_2", due_at: 120 },
        { merchant_id: other, kind: "renewal", subject_id: "sub_1", due_at: 100 }
      ])
      const claim = (now: number, owner: string, merchantId = m) =>
        workQueue.claim({ now, limit: 10, leaseMs: 1000, owner, merchantId })
      const got = yield* claim(1000, "w1")
      expect(got.map((w) => [w.kind, w.subject_id, w.due_at])).toEqual([
        ["renewal", "sub_1", 100],
        ["renewal", "sub_2", 120],
        ["charge", "trd_1", 150]
      ])
      // a reschedule of a claimed item (as a renewal does for its next period) is not completed by the old claim
      yield* workQueue.scheduleMany([{ merchant_id: m, kind: "renewal", subject_id: "sub_1", due_at: 5000 }])
      expect(yield* workQueue.completeMany([], "w1")).toBe(0)
      expect(yield* workQueue.completeMany(got, "w2")).toBe(0)
      expect(
        yield* workQueue.completeMany(
          got.filter((w) => w.kind === "renewal"),
          "w1"
        )
      ).toBe(1)
      yield* workQueue.cancelMany([])
      yield* workQueue.cancelMany([
        { merchant_id: m, kind: "charge", subject_id: "trd_1" },
        { merchant_id: m, kind: "charge", subject_id: "trd_none" }
      ])
      expect(Option.getOrThrow(yield* workQueue.nextDue(m))).toBe(5000)
      expect((yield* claim(10_000, "w3")).map((w) => [w.kind, w.subject_id])).toEqual([["renewal", "sub_1"]])
      // another merchant's items were never touched
      expect((yield* claim(10_000, "w3", other)).map((w) => w.subject_id)).toEqual(["sub_1"])

      const seq = (n: number, business_id: string, merchant_id = m) =>
        Effect.map(Ids.make("evt"), (id) => ({
          id,
          merchant_id,
          type: "v2.test",
          business_id,
          content: "{}",
          sequence: n,
          created_at: 1
        }))
      yield* outbox.append([
        yield* seq(1, "trd_a"),
        yield* seq(2, "trd_a"),
        yield* seq(1, "inv_b"),
        yield* seq(7, "trd_c", other)
      ])
      const next = yield* outbox.nextSequences(m, ["trd_a", "inv_b", "trd_c", "trd_a"])
      expect([next.get("trd_a"), next.get("inv_b"), next.get("trd_c")]).toEqual([3, 2, 1])
      expect((yield* outbox.nextSequences(m, [])).size).toBe(0)
    })
  )

  it.effect("idempotency records: one per (merchant, Request-Id)", () =>
    Effect.gen(function* () {
      const { idempotency } = yield* Storage
      const m = yield* Fixtures.merchantId
      const rec = {
        merchant_id: m,
        request_id: "req-1",
        fingerprint: "POST /x h1",
        state: "in_progress" as const,
        status: null,
        response: null,
        created_at: 1000,
        expires_at: 1000 + 86_400_000
      }
      expect(yield* idempotency.begin(rec)).toEqual({ created: true })
      const again = yield* idempotency.begin({ ...rec, created_at: 2000 })
      expect(again.created === false && again.existing.state).toBe("in_progress")
      yield* idempotency.complete(m, "req-1", 200, `{"code":"success"}`, 1000 + 7 * 86_400_000)
      const done = yield* idempotency.begin({ ...rec, created_at: 3000 })
      expect(done.created === false && [done.existing.status, done.existing.response]).toEqual([
        200,
        `{"code":"success"}`
      ])
      // completing extends the record's life: it still answers after an in-progress lock would have expired
      const later = yield* idempotency.begin({ ...rec, created_at: 1000 + 2 * 86_400_000 })
      expect(later.created === false && later.existing.state).toBe("completed")
      // an in-progress record left by a crashed request is taken over once its lock expires
      expect(yield* idempotency.begin({ ...rec, request_id: "req-3", created_at: 0, expires_at: 60_000 })).toEqual({
        created: true
      })
      expect((yield* idempotency.begin({ ...rec, request_id: "req-3", created_at: 59_999 })).created).toBe(false)
      expect(yield* idempotency.begin({ ...rec, request_id: "req-3", created_at: 60_000 })).toEqual({ created: true })
      const other = yield* Fixtures.merchantId
      expect(yield* idempotency.begin({ ...rec, merchant_id: other })).toEqual({ created: true })
      yield* idempotency.release(m, "req-1")
      expect(yield* idempotency.begin({ ...rec, created_at: 4000 })).toEqual({ created: true })
      expect(yield* idempotency.begin({ ...rec, request_id: "req-2", created_at: 0, expires_at: 10 })).toEqual({
        created: true
      })
      expect(yield* idempotency.begin({ ...rec, request_id: "req-2", created_at: 20 })).toEqual({ created: true })
    })
  )

  if (options.concurrent) {
    describe("concurrency", () => {
      it.effect("two concurrent claimers never get the same work item", () =>
        Effect.gen(function* () {
          const { workQueue } = yield* Storage
          const m = yield* Fixtures.merchantId
          yield* Effect.forEach(
            Array.from({ length: 200 }, (_, i) => i),
            (i) => workQueue.schedule({ merchant_id: m, kind: "renewal", subject_id: `sub_${i}`, due_at: i })
          )
          const worker = (owner: string) =>
            Effect.gen(function* () {
              const got: Array<string> = []
              for (;;) {
                const batch = yield* workQueue.claim({ now: 1000, limit: 7, leaseMs: 60_000, owner, merchantId: m })
                if (batch.length === 0) return got
                got.push(...batch.map((w) => w.subject_id))
              }
            })
          const [a, b] = yield* Effect.all([worker("a"), worker("b")], { concurrency: 2 })
          expect(a.length + b.length).toBe(200)
          expect(new Set([...a, ...b]).size).toBe(200)
          expect(a.length).toBeGreaterThan(0)
          expect(b.length).toBeGreaterThan(0)
        })
      )

      it.effect("concurrent transactions taking numbers, some rolled back: the committed ones are 1..n exactly", () =>
        Effect.gen(function* () {
          const storage = yield* Storage
          const m = yield* Fixtures.merchantId
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 24 }, (_, i) => i),
            (i) =>
              Effect.result(
                storage.withTransaction(
                  Effect.gen(function* () {
                    const n = yield* storage.counters.take(m, "invoice:RACE", 1)
                    if (i % 3 === 0) return yield* Effect.fail(`rolled back ${n}` as const)
                    return n
                  })
                )
              ),
            { concurrency: 8 }
          )
          const committed = outcomes.filter(Result.isSuccess).map((r) => r.success)
          expect(committed).toHaveLength(16)
          expect([...committed].sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
        })
      )

      it.effect("concurrent inserts of one unique value: exactly one wins", () =>
        Effect.gen(function* () {
          const repo = yield* customers
          const m = yield* Fixtures.merchantId
          const attempts = yield* Effect.forEach(
            Array.from({ length: 8 }, () => 0),
            () => Fixtures.customer(m, { payer_id: "race" })
          )
          const results = yield* Effect.forEach(attempts, (c) => Effect.result(repo.insert(c)), { concurrency: 8 })
          expect(results.filter(Result.isSuccess)).toHaveLength(1)
        })
      )
    })
  }
}
