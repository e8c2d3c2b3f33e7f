import { describe, expect, it } from "@effect/vitest"
import { Entities, Store } from "@recur/core"
import { Migrations, Pg } from "@recur/sql"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

const url = process.env.RECUR_TEST_DATABASE_URL
const stores = [
  ["PGlite", () => Pg.layerPglite()] as const,
  ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
]

for (const [name, store] of stores)
  describe(`0009_discount_redemptions (${name})`, () => {
    it.effect(
      "records a redemption for every discount a stored subscription already carries, once",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const storage = yield* Store.Storage
          // a subscription written before redemptions were recorded, carrying two discounts
          const data = {
            merchant_id: "mch_old",
            subscription: { id: "sub_old", customer_id: "cus_old", created_at: "2025-03-01T00:00:00Z" },
            discounts: [{ discount_id: "dsc_a" }, { discount_id: "dsc_b" }]
          }
          yield* sql.unsafe(
            `insert into recur_subscriptions (id, merchant_id, created_at, data, status, customer_id, billing_cycle_unit, price_id)
           values ('sub_old', 'mch_old', '2025-03-01T00:00:00Z', '${JSON.stringify(data)}'::jsonb, 'active', 'cus_old', 'month', 'pri_old')`
          )
          yield* Migrations.backfillRedemptions
          yield* Migrations.backfillRedemptions
          const page = yield* storage.repository(Entities.discountRedemption).list("mch_old", {
            limit: 100,
            filters: [{ column: "customer_id", op: "in", values: ["cus_old"] }]
          })
          expect(
            page.list
              .map((r) => [r.discount_id, r.customer_id, r.subscription_id, r.redeemed_at.epochMilliseconds])
              .sort()
          ).toEqual([
            ["dsc_a", "cus_old", "sub_old", Date.parse("2025-03-01T00:00:00Z")],
            ["dsc_b", "cus_old", "sub_old", Date.parse("2025-03-01T00:00:00Z")]
          ])
        }).pipe(Effect.provide(store())),
      120_000
    )
  })
