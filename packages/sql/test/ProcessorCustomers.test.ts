import { describe, expect, it } from "@effect/vitest"
import { Entities, Merchant, Store } from "@recur/core"
import { Migrations, Pg } from "@recur/sql"
import { DateTime, Effect, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

const url = process.env.RECUR_TEST_DATABASE_URL
const stores = [
  ["PGlite", () => Pg.layerPglite()] as const,
  ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
]

for (const [name, store] of stores)
  describe(`0010_processor_customers (${name})`, () => {
    it.effect(
      "on a database of before: a merchant's Stripe keys saved without their account read back with account_id null; run again, a no-op that keeps its rows",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const storage = yield* Store.Storage
          const merchants = storage.repository(Entities.merchant)
          yield* Effect.orDie(
            merchants.insert(
              new Merchant.Merchant({
                merchant_id: "mch_old",
                name: "Old",
                currency: "USD",
                mode: "live",
                frozen_time: null,
                proration_policy: "per_second",
                proration_credit: "refund",
                dunning_final_state: "canceled",
                dunning_retry_days: null,
                invoice_prefix: "INV",
                portal_settings: null,
                payment_processor: new Merchant.PaymentProcessor({
                  provider: "stripe",
                  publishable_key: "pk_live_old00000",
                  secret_key_ciphertext: "ciphertext",
                  secret_key_last4: "0000",
                  webhook_secret_ciphertext: null,
                  account_id: "acct_old"
                }),
                created_at: DateTime.makeUnsafe(Date.parse("2025-03-01T00:00:00Z"))
              })
            )
          )
          // as a row written before the account was kept
          yield* sql.unsafe(
            `update recur_merchants set data = data #- '{payment_processor,account_id}' where id = 'mch_old'`
          )
          const read = Option.getOrThrow(yield* merchants.get("mch_old", "mch_old")).value
          expect(read.payment_processor?.account_id).toBeNull()
          expect(read.payment_processor?.publishable_key).toBe("pk_live_old00000")
          const rows = storage.repository(Entities.processorCustomer)
          const row = {
            id: Entities.processorCustomerId("stripe", "acct_old", "cus_old"),
            merchant_id: "mch_old",
            provider: "stripe",
            account_id: "acct_old",
            customer_id: "cus_old",
            reference: "cus_stripeOld",
            created_at: Date.parse("2025-03-02T00:00:00Z")
          }
          expect(yield* rows.insertMany([row])).toEqual([row])
          // the migration again (a second host, a re-run): nothing fails, nothing is lost
          yield* Migrations.migrations["0010_processor_customers"]
          yield* Migrations.migrations["0010_processor_customers"]
          expect(Option.getOrThrow(yield* rows.get("mch_old", row.id)).value).toEqual(row)
        }).pipe(Effect.provide(store())),
      120_000
    )
  })
