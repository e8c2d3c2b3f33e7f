/**
 * The contract every {@link Store.Storage} adapter must pass: CRUD, every filter kind,
 * pagination in both directions with `created_at` ties, the 1..100 limit, unique constraints
 * as typed errors, rollback, tenant isolation, the outbox, the work queue and idempotency
 * records. Run it against a new adapter with {@link suite}.
 *
 * @example
 * import { StorageContract } from "@recur/testing"
 * StorageContract.suite("my adapter", myStorageLayer)
 * @since 0.1.0
 */
import { describe, expect, layer } from "@effect/vitest"
import { Discount, Entities, Ids, Invoice, Store } from "@recur/core"
import { DateTime, Effect, Result, type Layer, Option } from "effect"
import * as Fixtures from "./Fixtures.js"

/**
 * Options of the suite.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The adapter can run two transactions at once (real Postgres): also test claim races. */
  readonly concurrent?: boolean
  readonly timeout?: number
}

const Storage = Store.Storage

/**
 * Registers the storage contract suite for an adapter layer. The layer is built once for the
 * file; every test works in fresh merchants, so tests do not see each other's rows.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>, options: Options = {}) =>
  layer(storage, { timeout: "60 seconds" })(`Storage contract: ${name}`, (it) => {
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
        expect(
          (yield* repo.list(m, { limit: 10, filters: [{ column: "payer_id", op: "not_null" }] })).list
        ).toHaveLength(3)
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
        const expected = [...rows]
          .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1))
          .map((c) => c.id)

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
        expect((yield* storage.repository(Entities.webhookEvent).list(m, { limit: 10 })).list.map((e) => e.id)).toEqual(
          [evtId]
        )
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

    it.effect("an issued invoice keeps its snapshot (parties, lines, taxes, totals) through later status moves", () =>
      Effect.gen(function* () {
        const storage = yield* Storage
        const m = yield* Fixtures.merchantId
        const invoices = storage.repository(Entities.invoice)
        const issued = yield* Fixtures.invoice(m, {
          biz_status: "pending",
          number: "INV-000007",
          customer_name: "Erika Mustermann",
          customer_email: "erika@example.de",
          customer_address: "Unter den Linden 1, Berlin, DE",
          merchant_name: "Acme GmbH",
          subtotal: "30.00",
          tax_amount: "5.70",
          lines: [
            new Invoice.InvoiceLine({
              kind: "subscription",
              description: "Pro monthly × 1",
              quantity: "1",
              amount: "30.00",
              period_start: null,
              period_end: null
            })
          ],
          tax_lines: [
            new Invoice.InvoiceTaxLine({
              tax_rate_id: null,
              name: "MwSt",
              percentage: "19",
              country: "DE",
              region: null,
              inclusive: false,
              taxable_amount: "30.00",
              amount: "5.70"
            })
          ]
        })
        yield* invoices.insert(issued)
        const read = Option.getOrThrow(yield* invoices.get(m, issued.invoice_id))
        expect(read.value).toEqual(issued)
        const paid = Result.getOrThrow(Invoice.move(read.value, "paid")).value
        yield* invoices.update(paid, read.version)
        const after = Option.getOrThrow(yield* invoices.get(m, issued.invoice_id)).value
        expect(after.biz_status).toBe("success")
        const { biz_status: _a, ...kept } = after
        const { biz_status: _b, ...before } = issued
        expect(kept).toEqual(before)
      })
    )

    it.effect("tenant isolation: no method reaches another merchant's rows", () =>
      Effect.gen(function* () {
        const repo = yield* customers
        const a = yield* Fixtures.merchantId
        const b = yield* Fixtures.merchantId
        const theirs = yield* Fixtures.customer(b, { payer_id: "shared" })
        yield* repo.insert(theirs)
        expect(Option.isNone(yield* repo.get(a, theirs.id))).toBe(true)
        expect(Option.isNone(yield* repo.findBy(a, "payer_id", "shared"))).toBe(true)
        expect((yield* repo.list(a, { limit: 100 })).list).toEqual([])
        expect(yield* repo.remove(a, theirs.id)).toBe(false)
        expect((yield* Effect.flip(repo.update({ ...theirs, merchant_id: a, name: "hijack" }, 1)))._tag).toBe(
          "VersionConflict"
        )
        expect(Option.getOrThrow(yield* repo.get(b, theirs.id)).value.name).toBe(theirs.name)
      })
    )

    it.effect("discount redemptions: durable rows counted by discount and customer, per merchant", () =>
      Effect.gen(function* () {
        const repo = (yield* Storage).repository(Entities.discountRedemption)
        const m = yield* Fixtures.merchantId
        const other = yield* Fixtures.merchantId
        const redemption = (merchant: string, discount: string, customer: string, sub: string | null, at: number) =>
          Effect.map(
            Ids.make(Ids.prefixes.discountRedemption),
            (redemption_id) =>
              new Discount.Redemption({
                redemption_id,
                merchant_id: merchant,
                discount_id: discount,
                customer_id: customer,
                subscription_id: sub,
                redeemed_at: DateTime.makeUnsafe(at)
              })
          )
        const rows = [
          yield* redemption(m, "dsc_a", "cus_1", "sub_1", 1_000),
          yield* redemption(m, "dsc_a", "cus_1", "sub_2", 2_000),
          yield* redemption(m, "dsc_a", "cus_2", null, 3_000),
          yield* redemption(m, "dsc_b", "cus_1", "sub_1", 4_000),
          yield* redemption(other, "dsc_a", "cus_1", "sub_9", 5_000)
        ]
        for (const r of rows) yield* repo.insert(r)
        const count = (merchant: string, discount: string, customer: string) =>
          Effect.map(
            repo.list(merchant, {
              limit: 100,
              filters: [
                { column: "discount_id", op: "in", values: [discount] },
                { column: "customer_id", op: "in", values: [customer] }
              ]
            }),
            (page) => page.list.map((r) => r.subscription_id)
          )
        expect(yield* count(m, "dsc_a", "cus_1")).toEqual(["sub_2", "sub_1"])
        expect(yield* count(m, "dsc_a", "cus_2")).toEqual([null])
        expect(yield* count(m, "dsc_b", "cus_2")).toEqual([])
        expect(yield* count(other, "dsc_a", "cus_1")).toEqual(["sub_9"])
        expect(Option.getOrThrow(yield* repo.get(m, rows[0]!.redemption_id)).value).toEqual(rows[0])
      })
    )

    it.effect("processor customers: one per provider, account and customer, read back by id, found by reference", () =>
      Effect.gen(function* () {
        const repo = (yield* Storage).repository(Entities.processorCustomer)
        const m = yield* Fixtures.merchantId
        const other = yield* Fixtures.merchantId
        const row = (merchant: string, account: string, customer: string, reference: string, at: number) => ({
          id: Entities.processorCustomerId("stripe", account, customer),
          merchant_id: merchant,
          provider: "stripe",
          account_id: account,
          customer_id: customer,
          reference,
          created_at: at
        })
        const a = row(m, "acct_a", "cus_1", "cus_stripeA1", 1_000)
        const b = row(m, "acct_b", "cus_1", "cus_stripeB1", 2_000)
        // the same customer kept twice (two first payments at once): the first stays
        expect((yield* repo.insertMany([a, b, { ...a, reference: "cus_other" }])).map((r) => r.reference)).toEqual([
          "cus_stripeA1",
          "cus_stripeB1"
        ])
        expect(yield* repo.insertMany([{ ...a, reference: "cus_later" }])).toEqual([])
        expect(
          Option.getOrThrow(yield* repo.get(m, Entities.processorCustomerId("stripe", "acct_a", "cus_1"))).value
        ).toEqual(a)
        expect(Option.isNone(yield* repo.get(other, Entities.processorCustomerId("stripe", "acct_a", "cus_1")))).toBe(
          true
        )
        const byReference = yield* repo.list(m, {
          limit: 100,
          filters: [{ column: "reference", op: "in", values: ["cus_stripeB1", "cus_unknown"] }]
        })
        expect(byReference.list.map((r) => [r.account_id, r.customer_id])).toEqual([["acct_b", "cus_1"]])
        const byCustomer = yield* repo.list(m, {
          limit: 100,
          filters: [{ column: "customer_id", op: "in", values: ["cus_1"] }]
        })
        expect(byCustomer.list.map((r) => r.account_id)).toEqual(["acct_b", "acct_a"])
      })
    )

    it.effect("lookup finds a unique value across merchants (API keys by hash)", () =>
      Effect.gen(function* () {
        const keys = (yield* Storage).repository(Entities.apiKey)
        const m = yield* Fixtures.merchantId
        const id = yield* Ids.make("key")
        const hash = `hash-${id}`
        yield* keys.insert({
          id,
          merchant_id: m,
          lookup_hash: hash,
          ciphertext: "c",
          last4: "abcd",
          mode: "sandbox",
          status: "active",
          expires_at: null,
          replaced_by: null,
          created_at: 1
        })
        expect(Option.getOrThrow(yield* keys.lookup("lookup_hash", hash)).value.merchant_id).toBe(m)
        expect(Option.isNone(yield* keys.lookup("lookup_hash", "nope"))).toBe(true)
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
  })
