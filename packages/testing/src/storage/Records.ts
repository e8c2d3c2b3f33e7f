/**
 * The storage contract's records: CRUD with a version check, exact values, every filter kind,
 * pagination in both directions, the page rules, unique constraints, batches, transactions and
 * counters. Registered in order by `StorageContract.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import { Entities, Ids, Store } from "@recur/core"
import { Effect, Result, Option } from "effect"
import * as Fixtures from "../Fixtures.js"

const Storage = Store.Storage

/**
 * Registers the record tests of the storage contract.
 *
 * @since 0.1.0
 */
export const records = (it: Vitest.MethodsNonLive<Store.Storage>) => {
  const customers = Effect.map(Storage, (s) => s.repository(Entities.customer))

  it.effect("inserts, reads, updates with a version check and removes", () =>
    Effect.gen(function* () {
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const c = yield* Fixtures.customer(m, { metadata: { plan: "pro" }, address: null })
      yield* repo.insert(c)
      const read = Option.getOrThrow(yield* repo.get(m, c.id))
      expect(read).toEqual({ value: c, version: 1 })
      const v2 = yield* repo.update({ ...c, name: "Grace" }, 1)
      expect(v2).toBe(2)
      expect(Option.getOrThrow(yield* repo.get(m, c.id)).value.name).toBe("Grace")
      const stale = yield* Effect.result(repo.update({ ...c, name: "Stale" }, 1))
      expect(Result.isFailure(stale) && stale.failure._tag).toBe("VersionConflict")
      expect(Option.getOrThrow(yield* repo.findBy(m, "email", c.email!)).value.id).toBe(c.id)
      expect(yield* repo.remove(m, c.id)).toBe(true)
      expect(Option.isNone(yield* repo.get(m, c.id))).toBe(true)
      expect(yield* repo.remove(m, c.id)).toBe(false)
    })
  )

  it.effect("keeps bigint-sized values and nested data exactly", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const repo = storage.repository(Entities.invoice)
      const m = yield* Fixtures.merchantId
      const inv = yield* Fixtures.invoice(m, { amount: "9999999999999999.99", metadata: { ключ: "värde" } })
      yield* repo.insert(inv)
      const read = Option.getOrThrow(yield* repo.get(m, inv.invoice_id)).value
      expect(read).toEqual(inv)
      const page = yield* repo.list(m, {
        limit: 10,
        filters: [{ column: "amount_minor", op: "in", values: ["999999999999999999"] }]
      })
      expect(page.list.map((i) => i.invoice_id)).toEqual([inv.invoice_id])
    })
  )

  it.effect("filters in the store: in, overlaps, null checks, created_at ranges", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const base = Date.UTC(2026, 0, 1)
      const made = yield* Effect.forEach([0, 1, 2, 3, 4], (i) =>
        Fixtures.customer(m, {
          created_at: base + i * 1000,
          payer_id: i % 2 === 0 ? `payer-${i}` : null,
          type: i % 2 === 0 ? "customer" : "guest"
        })
      )
      yield* Effect.forEach(made, (c) => repo.insert(c))
      const ids = (p: Store.Page<Entities.CustomerRecord>) => p.list.map((c) => c.id)
      expect(
        ids(yield* repo.list(m, { limit: 10, filters: [{ column: "type", op: "in", values: ["customer"] }] }))
      ).toEqual([made[4]!.id, made[2]!.id, made[0]!.id])
      expect(
        ids(
          yield* repo.list(m, { limit: 10, filters: [{ column: "payer_id", op: "in", values: ["payer-2", "nope"] }] })
        )
      ).toEqual([made[2]!.id])
      expect(ids(yield* repo.list(m, { limit: 10, filters: [{ column: "payer_id", op: "is_null" }] }))).toEqual([
        made[3]!.id,
        made[1]!.id
      ])
      expect((yield* repo.list(m, { limit: 10, filters: [{ column: "payer_id", op: "not_null" }] })).list).toHaveLength(
        3
      )
      expect(ids(yield* repo.list(m, { limit: 10, created: { gt: base + 1000, lte: base + 3000 } }))).toEqual([
        made[3]!.id,
        made[2]!.id
      ])
      expect(ids(yield* repo.list(m, { limit: 10, created: { gte: base + 1000, lt: base + 3000 } }))).toEqual([
        made[2]!.id,
        made[1]!.id
      ])
      expect(
        ids(
          yield* repo.list(m, {
            limit: 10,
            filters: [{ column: "deleted", op: "in", values: [false] }],
            created: { lt: base + 1000 }
          })
        )
      ).toEqual([made[0]!.id])

      const products = storage.repository(Entities.product)
      const p = (price_ids: ReadonlyArray<string>) =>
        Effect.map(
          Ids.make("prd"),
          (id): Entities.ProductRecord => ({
            id,
            merchant_id: m,
            name: "P",
            status: "active",
            merchant_product_id: null,
            category_id: "cat_1",
            description: null,
            image_url: null,
            created_by: null,
            quantity_unit: null,
            features: [],
            entitlements: {},
            metadata: {},
            price_ids,
            created_at: Ids.timestampOf(id),
            updated_at: 0
          })
        )
      const p1 = yield* p(["pri_a", "pri_b"])
      const p2 = yield* p(["pri_c"])
      yield* products.insert(p1)
      yield* products.insert(p2)
      expect(
        (yield* products.list(m, {
          limit: 10,
          filters: [{ column: "price_ids", op: "overlaps", values: ["pri_b", "pri_x"] }]
        })).list.map((x) => x.id)
      ).toEqual([p1.id])
    })
  )

  it.effect("paginates newest first in both directions, ties on created_at broken by id", () =>
    Effect.gen(function* () {
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const at = Date.UTC(2026, 1, 1)
      // 23 rows in groups of 4 sharing one created_at
      const rows = yield* Effect.forEach(
        Array.from({ length: 23 }, (_, i) => i),
        (i) => Fixtures.customer(m, { created_at: at + Math.floor(i / 4) * 1000 })
      )
      yield* Effect.forEach(rows, (c) => repo.insert(c))
      const expected = [...rows].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((c) => c.id)

      const forward: Array<string> = []
      let cursor: string | undefined
      for (;;) {
        const page = yield* repo.list(m, { limit: 5, starting_after: cursor })
        forward.push(...page.list.map((c) => c.id))
        if (!page.has_more) break
        cursor = page.list[page.list.length - 1]!.id
      }
      expect(forward).toEqual(expected)

      const backward: Array<string> = []
      let before: string | undefined = expected[expected.length - 1]
      for (;;) {
        const page = yield* repo.list(m, { limit: 5, ending_before: before })
        backward.unshift(...page.list.map((c) => c.id))
        if (!page.has_more) break
        before = page.list[0]!.id
      }
      expect(backward).toEqual(expected.slice(0, -1))

      const first = yield* repo.list(m, { limit: 100 })
      expect([first.list.length, first.has_more]).toEqual([23, false])
      const exact = yield* repo.list(m, { limit: 23 })
      expect(exact.has_more).toBe(false)
      const one = yield* repo.list(m, { limit: 1, starting_after: expected[21] })
      expect([one.list.map((c) => c.id), one.has_more]).toEqual([[expected[22]], false])
    })
  )

  it.effect("enforces the page rules: limit 1..100, one cursor, the cursor must be the merchant's", () =>
    Effect.gen(function* () {
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const other = yield* Fixtures.merchantId
      const foreign = yield* Fixtures.customer(other)
      yield* repo.insert(foreign)
      const fail = (q: Store.ListQuery) => Effect.flip(repo.list(m, q))
      expect((yield* fail({ limit: 0 }))._tag).toBe("InvalidPage")
      expect((yield* fail({ limit: 101 }))._tag).toBe("InvalidPage")
      expect((yield* fail({ limit: 1.5 }))._tag).toBe("InvalidPage")
      expect(yield* fail({ limit: 10, starting_after: "a", ending_before: "b" })).toMatchObject({
        reason: "both_cursors"
      })
      expect((yield* fail({ limit: 10, starting_after: foreign.id }))._tag).toBe("CursorNotFound")
      expect((yield* fail({ limit: 10, ending_before: "cus_missing" }))._tag).toBe("CursorNotFound")
    })
  )

  it.effect("unique constraints surface as typed errors, per merchant, ignoring nulls", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const other = yield* Fixtures.merchantId
      yield* repo.insert(yield* Fixtures.customer(m, { payer_id: "p-1" }))
      const dup = yield* Effect.flip(repo.insert(yield* Fixtures.customer(m, { payer_id: "p-1" })))
      expect(dup).toMatchObject({ _tag: "UniqueViolation", entity: "customer", constraint: "customer_payer_id" })
      yield* repo.insert(yield* Fixtures.customer(other, { payer_id: "p-1" }))
      yield* repo.insert(yield* Fixtures.customer(m, { payer_id: null }))
      yield* repo.insert(yield* Fixtures.customer(m, { payer_id: null }))
      const second = yield* Fixtures.customer(m, { payer_id: "p-2" })
      yield* repo.insert(second)
      expect((yield* Effect.flip(repo.update({ ...second, payer_id: "p-1" }, 1)))._tag).toBe("UniqueViolation")
      expect((yield* Effect.flip(repo.insert(second)))._tag).toBe("UniqueViolation")

      const invoices = storage.repository(Entities.invoice)
      yield* invoices.insert(yield* Fixtures.invoice(m, { cycle_index: 3, invoice_type: "renewal" }))
      expect(
        (yield* Effect.flip(invoices.insert(yield* Fixtures.invoice(m, { cycle_index: 3, invoice_type: "renewal" }))))
          .constraint
      ).toBe("invoice_cycle")
      yield* invoices.insert(yield* Fixtures.invoice(m, { cycle_index: 3, invoice_type: "upgrade" }))
      yield* invoices.insert(yield* Fixtures.invoice(m, { cycle_index: 3, invoice_type: "upgrade" }))
      yield* invoices.insert(yield* Fixtures.invoice(m, { cycle_index: 4, invoice_type: "renewal" }))
    })
  )

  it.effect("batches: getMany is tenant-scoped, insertMany skips every conflict, updateMany is all or none", () =>
    Effect.gen(function* () {
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const other = yield* Fixtures.merchantId
      const existing = yield* Fixtures.customer(m, { payer_id: "taken", metadata: { n: "0" } })
      yield* repo.insert(existing)
      const foreign = yield* Fixtures.customer(other, { payer_id: "free-1" })
      yield* repo.insert(foreign)
      const fresh = yield* Effect.forEach([1, 2, 3], (i) =>
        Fixtures.customer(m, { payer_id: `free-${i}`, address: null, metadata: { n: String(i) } })
      )
      const clash = yield* Fixtures.customer(m, { payer_id: "taken" }) // an existing unique value
      const twin = yield* Fixtures.customer(m, { payer_id: "free-2" }) // a duplicate within the batch
      const noPayer = yield* Fixtures.customer(m, { payer_id: null }) // nulls never conflict
      expect(yield* repo.insertMany([])).toEqual([])
      const inserted = yield* repo.insertMany([
        fresh[0]!,
        clash,
        fresh[1]!,
        existing,
        twin,
        fresh[2]!,
        noPayer,
        fresh[0]!
      ])
      expect(inserted.map((c) => c.id)).toEqual([fresh[0]!.id, fresh[1]!.id, fresh[2]!.id, noPayer.id])
      // the other merchant's "free-1" did not conflict; the losers were not written
      expect(Option.isNone(yield* repo.get(m, clash.id))).toBe(true)
      expect(Option.isNone(yield* repo.get(m, twin.id))).toBe(true)

      const many = yield* repo.getMany(m, [fresh[0]!.id, fresh[2]!.id, foreign.id, "cus_missing", fresh[0]!.id])
      expect([...many.keys()].sort()).toEqual([fresh[0]!.id, fresh[2]!.id].sort())
      expect(many.get(fresh[2]!.id)).toEqual({ value: fresh[2], version: 1 })
      expect((yield* repo.getMany(m, [])).size).toBe(0)

      const versions = yield* repo.updateMany([
        { value: { ...fresh[0]!, name: "One" }, expectedVersion: 1 },
        { value: { ...existing, name: "Zero", metadata: { n: "00" } }, expectedVersion: 1 }
      ])
      expect(versions).toEqual([2, 2])
      expect(Option.getOrThrow(yield* repo.get(m, existing.id))).toEqual({
        value: { ...existing, name: "Zero", metadata: { n: "00" } },
        version: 2
      })
      expect(Option.getOrThrow(yield* repo.findBy(m, "payer_id", "taken")).value.id).toBe(existing.id)

      // one stale record: nothing changes
      const stale = yield* Effect.flip(
        repo.updateMany([
          { value: { ...fresh[1]!, name: "Two" }, expectedVersion: 1 },
          { value: { ...fresh[0]!, name: "Stale" }, expectedVersion: 1 }
        ])
      )
      expect(stale).toMatchObject({ _tag: "VersionConflict", id: fresh[0]!.id })
      expect(Option.getOrThrow(yield* repo.get(m, fresh[1]!.id))).toEqual({ value: fresh[1], version: 1 })
      // another merchant's record is never updated through a batch
      const hijack = yield* Effect.flip(
        repo.updateMany([{ value: { ...foreign, merchant_id: m, name: "hijack" }, expectedVersion: 1 }])
      )
      expect(hijack._tag).toBe("VersionConflict")
      expect(Option.getOrThrow(yield* repo.get(other, foreign.id)).value.name).toBe(foreign.name)
      // a unique violation is typed and changes nothing
      const unique = yield* Effect.flip(
        repo.updateMany([
          { value: { ...fresh[1]!, name: "Two" }, expectedVersion: 1 },
          { value: { ...fresh[2]!, payer_id: "taken" }, expectedVersion: 1 }
        ])
      )
      expect(unique).toMatchObject({ _tag: "UniqueViolation", constraint: "customer_payer_id" })
      expect(Option.getOrThrow(yield* repo.get(m, fresh[1]!.id)).version).toBe(1)
    })
  )

  it.effect("batches inside a transaction roll back with it", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const made = yield* Effect.forEach([1, 2], () => Fixtures.customer(m))
      const failed = yield* Effect.result(
        storage.withTransaction(
          Effect.gen(function* () {
            yield* repo.insertMany(made)
            yield* repo.updateMany([{ value: { ...made[0]!, name: "x" }, expectedVersion: 1 }])
            return yield* Effect.fail("boom" as const)
          })
        )
      )
      expect(Result.isFailure(failed)).toBe(true)
      expect(
        (yield* repo.getMany(
          m,
          made.map((c) => c.id)
        )).size
      ).toBe(0)
    })
  )

  it.effect("a transaction that fails midway leaves no row and no event", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const repo = yield* customers
      const m = yield* Fixtures.merchantId
      const a = yield* Fixtures.customer(m)
      const b = yield* Fixtures.customer(m)
      const event = (id: string): Store.OutboxEvent => ({
        id,
        merchant_id: m,
        type: "v2.test",
        business_id: a.id,
        content: "{}",
        sequence: 1,
        created_at: 1
      })
      const evtId = yield* Ids.make("evt")
      const failed = yield* Effect.result(
        storage.withTransaction(
          Effect.gen(function* () {
            yield* repo.insert(a)
            yield* storage.outbox.append([event(evtId)])
            return yield* Effect.fail("injected failure after the first write" as const)
          })
        )
      )
      expect(Result.isFailure(failed)).toBe(true)
      const died = yield* Effect.exit(storage.withTransaction(Effect.andThen(repo.insert(b), Effect.die("boom"))))
      expect(died._tag).toBe("Failure")
      expect(Option.isNone(yield* repo.get(m, a.id))).toBe(true)
      expect(Option.isNone(yield* repo.get(m, b.id))).toBe(true)
      expect((yield* storage.repository(Entities.webhookEvent).list(m, { limit: 10 })).list).toEqual([])
      // and a successful one commits both
      yield* storage.withTransaction(Effect.andThen(repo.insert(a), storage.outbox.append([event(evtId)])))
      expect(Option.isSome(yield* repo.get(m, a.id))).toBe(true)
      expect((yield* storage.repository(Entities.webhookEvent).list(m, { limit: 10 })).list.map((e) => e.id)).toEqual([
        evtId
      ])
    })
  )

  it.effect("counters: gapless per merchant and series; a rolled-back take leaves no hole", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      const m = yield* Fixtures.merchantId
      const other = yield* Fixtures.merchantId
      expect(yield* storage.counters.take(m, "invoice:INV", 1)).toBe(1)
      expect(yield* storage.counters.take(m, "invoice:INV", 3)).toBe(2)
      expect(yield* storage.counters.take(m, "credit_note:INV", 1)).toBe(1)
      expect(yield* storage.counters.take(other, "invoice:INV", 1)).toBe(1)
      const failed = yield* Effect.result(
        storage.withTransaction(
          Effect.andThen(storage.counters.take(m, "invoice:INV", 2), Effect.fail("injected" as const))
        )
      )
      expect(Result.isFailure(failed)).toBe(true)
      // a crash midway (a defect) gives the numbers back too
      const crashed = yield* Effect.exit(
        storage.withTransaction(Effect.andThen(storage.counters.take(m, "invoice:INV", 1), Effect.die("crash")))
      )
      expect(crashed._tag).toBe("Failure")
      expect(yield* storage.withTransaction(storage.counters.take(m, "invoice:INV", 1))).toBe(5)
    })
  )

  it.effect(
    "scan pages every merchant's records by id; a rewrite of them in a transaction commits or rolls back whole",
    () =>
      Effect.gen(function* () {
        const storage = yield* Storage
        const keys = storage.repository(Entities.apiKey)
        const [m1, m2] = [yield* Fixtures.merchantId, yield* Fixtures.merchantId]
        const mine: Array<Entities.ApiKeyRecord> = []
        for (const m of [m1, m2, m1]) {
          const id = yield* Ids.make("key")
          const key = { id, merchant_id: m, lookup_hash: `scan-${id}`, ciphertext: "old", last4: "abcd" }
          mine.push({ ...key, mode: "sandbox", status: "active", expires_at: null, replaced_by: null, created_at: 1 })
        }
        yield* keys.insertMany(mine)
        const scanAll = Effect.gen(function* () {
          const seen: Array<Store.Versioned<Entities.ApiKeyRecord>> = []
          let after: string | undefined
          while (true) {
            const page = yield* keys.scan({ after, limit: 2 })
            expect(page.length).toBeLessThanOrEqual(2)
            if (page.length === 0) return seen
            seen.push(...page)
            after = page[page.length - 1]!.value.id
          }
        })
        const ids = new Set(mine.map((k) => k.id))
        const first = (yield* scanAll).filter((r) => ids.has(r.value.id))
        // every merchant's, each once, in id order
        expect(first.map((r) => r.value.id)).toEqual(mine.map((k) => k.id).sort())
        const rewrite = storage.withTransaction(
          Effect.gen(function* () {
            yield* Effect.orDie(
              keys.updateMany(
                first.map((r) => ({ value: { ...r.value, ciphertext: "new" }, expectedVersion: r.version }))
              )
            )
            return yield* Effect.die("crash mid-rotation")
          })
        )
        expect((yield* Effect.exit(rewrite))._tag).toBe("Failure")
        expect((yield* scanAll).filter((r) => ids.has(r.value.id)).map((r) => r.value.ciphertext)).toEqual([
          "old",
          "old",
          "old"
        ])
        yield* storage.withTransaction(
          Effect.orDie(
            keys.updateMany(
              first.map((r) => ({ value: { ...r.value, ciphertext: "new" }, expectedVersion: r.version }))
            )
          )
        )
        expect(Option.getOrThrow(yield* keys.get(m2, mine[1]!.id)).value.ciphertext).toBe("new")
        expect((yield* scanAll).filter((r) => ids.has(r.value.id)).map((r) => r.value.ciphertext)).toEqual([
          "new",
          "new",
          "new"
        ])
      })
  )

  it.effect("idempotency: scanCompleted pages every merchant's completed records; complete rewrites an answer", () =>
    Effect.gen(function* () {
      const { idempotency } = yield* Storage
      const [m1, m2] = [yield* Fixtures.merchantId, yield* Fixtures.merchantId]
      const rec = (merchant_id: string, request_id: string) => ({
        merchant_id,
        request_id,
        fingerprint: "POST /x h",
        state: "in_progress" as const,
        status: null,
        response: null,
        created_at: 1000,
        expires_at: 1000 + 86_400_000
      })
      for (const [m, r] of [
        [m1, "a"],
        [m1, "b"],
        [m2, "a"],
        [m2, "open"]
      ] as const)
        yield* idempotency.begin(rec(m, r))
      for (const [m, r] of [
        [m1, "a"],
        [m1, "b"],
        [m2, "a"]
      ] as const)
        yield* idempotency.complete(m, r, 201, `sealed-${r}`, 5000)
      const all: Array<Store.IdempotencyRecord> = []
      let after: { readonly merchant_id: string; readonly request_id: string } | undefined
      while (true) {
        const page = yield* idempotency.scanCompleted({ after, limit: 2 })
        if (page.length === 0) break
        all.push(...page)
        after = page[page.length - 1]!
      }
      const ours = all.filter((r) => r.merchant_id === m1 || r.merchant_id === m2)
      expect(ours.map((r) => [r.merchant_id, r.request_id, r.status, r.response, r.expires_at])).toEqual(
        [
          [m1, "a", 201, "sealed-a", 5000],
          [m1, "b", 201, "sealed-b", 5000],
          [m2, "a", 201, "sealed-a", 5000]
        ].sort((x, y) => (`${x[0]}` < `${y[0]}` ? -1 : `${x[0]}` > `${y[0]}` ? 1 : 0))
      )
      yield* idempotency.complete(m2, "a", 201, "resealed", 5000)
      const back = yield* idempotency.begin({ ...rec(m2, "a"), created_at: 2000 })
      expect(back.created === false && [back.existing.status, back.existing.response]).toEqual([201, "resealed"])
    })
  )
}
