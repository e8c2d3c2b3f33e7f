/**
 * What the Stripe adapter's engine scenarios share: the storages they run on (PGlite, and
 * PostgreSQL when `RECUR_TEST_DATABASE_URL` is set), the engine over REST on one Stripe account or
 * on each merchant's own (the local fake), and a merchant on the sandbox clock.
 */
import { Merchants, type Store } from "@recur/core"
import { engineOn, type StorageOption } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { Pg } from "@recur/sql"
import type { Layer } from "effect"
import { expect } from "@effect/vitest"
import { StripeGateway } from "../src/index.js"
import type * as Fake from "./fake/StripeFake.js"

/** The storages of the REST scenarios: PGlite, and PostgreSQL when RECUR_TEST_DATABASE_URL is set. */
export const storages: ReadonlyArray<readonly [string, () => Layer.Layer<Store.Storage, unknown>]> = [
  ["PGlite", () => Pg.layerPglite()],
  ...(process.env.RECUR_TEST_DATABASE_URL
    ? [["PostgreSQL", () => Pg.layerPgScratch({ url: process.env.RECUR_TEST_DATABASE_URL! })] as const]
    : [])
]

/** The storages of the facade's scenarios (`createBilling`): its PGlite, and PostgreSQL when set. */
export const facadeStorages: ReadonlyArray<readonly [string, StorageOption]> = [
  ["PGlite", "memory"],
  ...(process.env.RECUR_TEST_DATABASE_URL
    ? [["PostgreSQL", { postgres: process.env.RECUR_TEST_DATABASE_URL }] as const]
    : [])
]

/** The engine over REST charging one Stripe account (the fake's `sk_test_recur`) for every merchant. */
export const oneAccount = (storage: Layer.Layer<Store.Storage, unknown>, fake: Fake.StripeFake) =>
  TestClient.make(
    engineOn(storage, {
      publicUrl: "http://localhost:4000",
      payments: StripeGateway.layer({ secretKey: "sk_test_recur", apiBase: fake.base, timeoutMs: 5_000 })
    })
  )

/** The engine over REST with each merchant's own Stripe account (the fake), the sandbox for the others. */
export const perMerchant = (storage: Layer.Layer<Store.Storage, unknown>, fake: Fake.StripeFake) =>
  TestClient.make(
    engineOn(storage, {
      publicUrl: "http://localhost:4000",
      payments: StripeGateway.perMerchant({ apiBase: fake.base, timeoutMs: 5_000 })
    })
  )

/** The REST client of a scenario. */
export type Api = ReturnType<typeof oneAccount>

/** A sandbox merchant of USD on the sandbox clock of 2026-01-01: its API key and id. */
export const merchantOn = async (on: Api, label: string) => {
  const made = await on.runtime.runPromise(
    Merchants.Merchants.use((m) =>
      m.create({ name: label, currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
    )
  )
  return { key: made.api_key, id: made.merchant.merchant_id }
}

/** A call that must answer 200: its `data`. */
export const okOn = async (on: Api, key: string, method: string, path: string, body?: unknown) => {
  const r = await on.call(method, path, key, body)
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200)
  return (r.body as any).data
}

/** A monthly USD flat price of `amount` (a product of its own): its id. */
export const monthlyPriceOn = async (on: Api, key: string, amount: string): Promise<string> => {
  const product = await okOn(on, key, "POST", "/api/v1/products", { product_name: "P" })
  const price = await okOn(on, key, "POST", "/api/v1/prices", {
    name: "Monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: amount }
  })
  return price.price_id as string
}
