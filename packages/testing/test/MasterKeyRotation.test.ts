/**
 * `MasterKeyRotation.resealAll` on memory storage: every kind of stored secret moves under the
 * current key, invoice links are signed again (the old token still verifies within the grace),
 * plain idempotent answers stay as written, and a second run changes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Entities, Ids, MasterKeyRotation, Merchant, Secrets, Store } from "@recur/core"
import { DateTime, Effect, Layer, Option, Redacted } from "effect"
import * as Fixtures from "../src/Fixtures.js"
import { MemoryStorage } from "../src/index.js"

const oldKey = Redacted.make("aa".repeat(32))
const newKey = Redacted.make("bb".repeat(32))

describe("MasterKeyRotation.resealAll (memory)", () => {
  it.effect(
    "moves every stored secret under the current key and signs invoice links again; a second run changes nothing",
    () =>
      Effect.gen(function* () {
        const storage = yield* MemoryStorage.make
        const before = yield* Secrets.make(oldKey)
        const m = yield* Fixtures.merchantId
        const keyId = yield* Ids.make("key")
        yield* storage.repository(Entities.apiKey).insert({
          id: keyId,
          merchant_id: m,
          lookup_hash: `h-${keyId}`,
          ciphertext: yield* before.encrypt("sk_test_abc"),
          last4: "_abc",
          mode: "sandbox",
          status: "active",
          expires_at: null,
          replaced_by: null,
          created_at: 1
        })
        yield* storage.repository(Entities.merchant).insert(
          new Merchant.Merchant({
            merchant_id: m,
            name: "Shop",
            currency: "USD",
            mode: "sandbox",
            frozen_time: null,
            proration_policy: "per_second",
            proration_credit: "refund",
            dunning_final_state: "unpaid",
            dunning_retry_days: null,
            invoice_prefix: "INV",
            portal_settings: null,
            payment_processor: new Merchant.PaymentProcessor({
              provider: "stripe",
              publishable_key: "pk_test_x",
              secret_key_ciphertext: yield* before.encrypt("sk_test_stripe"),
              secret_key_last4: "ripe",
              webhook_secret_ciphertext: yield* before.encrypt("whsec_stripe")
            }),
            created_at: DateTime.makeUnsafe(1)
          })
        )
        const inv = yield* Fixtures.invoice(m)
        const page = `https://billing.example/invoice/${inv.invoice_id}/${yield* before.sign(`invoice:${m}:${inv.invoice_id}`)}`
        yield* storage
          .repository(Entities.invoice)
          .insert({ ...inv, hosted_invoice_url: page, invoice_pdf: `${page}/pdf` } as typeof inv)
        const unsigned = yield* Fixtures.invoice(m, { subscription_id: "sub_01jd0000000000000000000001" })
        yield* storage.repository(Entities.invoice).insert(unsigned)
        const answer = {
          merchant_id: m,
          fingerprint: "f",
          state: "in_progress" as const,
          status: null,
          response: null,
          created_at: 0,
          expires_at: 10
        }
        yield* storage.idempotency.begin({ ...answer, request_id: "sealed" })
        yield* storage.idempotency.complete(m, "sealed", 200, yield* before.encrypt(`{"code":"success"}`), 99)
        yield* storage.idempotency.begin({ ...answer, request_id: "plain" })
        yield* storage.idempotency.complete(m, "plain", 200, `{"old":true}`, 99)

        const ring = Layer.mergeAll(
          Layer.succeed(Store.Storage, storage),
          Secrets.layer(newKey, [{ key: oldKey, until: 1_000 }])
        )
        const first = yield* Effect.provide(MasterKeyRotation.resealAll(), ring)
        expect(first).toEqual({
          api_keys: 1,
          payment_processors: 1,
          webhook_endpoints: 0,
          idempotent_answers: 1,
          invoice_links: 1
        })
        const after = yield* Secrets.make(newKey) // the new key alone reads everything now
        const key = Option.getOrThrow(yield* storage.repository(Entities.apiKey).get(m, keyId)).value
        expect(key.ciphertext.startsWith(`v2.${after.keyId}.`)).toBe(true)
        expect(yield* after.decrypt(key.ciphertext)).toBe("sk_test_abc")
        const processor = Option.getOrThrow(yield* storage.repository(Entities.merchant).get(m, m)).value
          .payment_processor!
        expect(yield* after.decrypt(processor.secret_key_ciphertext)).toBe("sk_test_stripe")
        expect(yield* after.decrypt(processor.webhook_secret_ciphertext!)).toBe("whsec_stripe")
        const signed = Option.getOrThrow(yield* storage.repository(Entities.invoice).get(m, inv.invoice_id)).value
        const fresh = yield* after.sign(`invoice:${m}:${inv.invoice_id}`)
        expect(signed.hosted_invoice_url).toBe(`https://billing.example/invoice/${inv.invoice_id}/${fresh}`)
        expect(signed.invoice_pdf).toBe(`https://billing.example/invoice/${inv.invoice_id}/${fresh}/pdf`)
        const unsignedAfter = Option.getOrThrow(yield* storage.repository(Entities.invoice).get(m, unsigned.invoice_id))
        expect(unsignedAfter.version).toBe(1)
        const answers = yield* storage.idempotency.scanCompleted({ limit: 100 })
        const mine = answers.filter((r) => r.merchant_id === m)
        expect(yield* after.decrypt(mine.find((r) => r.request_id === "sealed")!.response!)).toBe(`{"code":"success"}`)
        expect(mine.find((r) => r.request_id === "plain")!.response).toBe(`{"old":true}`)

        const again = yield* Effect.provide(MasterKeyRotation.resealAll(), ring)
        expect(again).toEqual({
          api_keys: 0,
          payment_processors: 0,
          webhook_endpoints: 0,
          idempotent_answers: 0,
          invoice_links: 0
        })
      })
  )
})
