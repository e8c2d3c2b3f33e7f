/**
 * The storage contract's snapshots and tenancy: an issued invoice's snapshot, tenant isolation,
 * discount redemptions, processor customers and lookups across merchants. Registered in order by
 * `StorageContract.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import { Discount, Entities, Ids, Invoice, Store } from "@recur/core"
import { DateTime, Effect, Result, Option } from "effect"
import * as Fixtures from "../Fixtures.js"

const Storage = Store.Storage

/**
 * Registers the snapshot and tenancy tests of the storage contract.
 *
 * @since 0.1.0
 */
export const tenancy = (it: Vitest.MethodsNonLive<Store.Storage>) => {
  const customers = Effect.map(Storage, (s) => s.repository(Entities.customer))

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
}
