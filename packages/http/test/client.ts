import { Merchants, type Store } from "@recur/core"
import { type BillingOptions, engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { Pg } from "@recur/sql"
import { Effect, type Layer } from "effect"

/** The storages the HTTP suites run on: PGlite always, PostgreSQL when `RECUR_TEST_DATABASE_URL` is set. */
export const backends = (): ReadonlyArray<readonly [string, () => Layer.Layer<Store.Storage, unknown>]> => {
  const url = process.env.RECUR_TEST_DATABASE_URL
  return [
    ["PGlite", () => Pg.layerPglite()],
    ...(url ? [["PostgreSQL", () => Pg.layerPgScratch({ url })] as const] : [])
  ]
}

/**
 * The real adapter in process over `storage`, with a helper that creates merchants.
 */
export const serve = (
  storage: Layer.Layer<Store.Storage, unknown>,
  options: Omit<BillingOptions, "storage" | "publicUrl"> = {}
) => {
  const api = TestClient.make(engineOn(storage, { publicUrl: "http://localhost:4000", ...options }))
  const merchant = (options: { readonly live?: boolean; readonly frozen?: string } = {}) =>
    api.runtime.runPromise(
      Merchants.Merchants.use((m) =>
        m.create({
          name: "Acme",
          currency: "USD",
          ...(options.live
            ? { mode: "live" as const }
            : { frozen_time: Date.parse(options.frozen ?? "2026-01-01T00:00:00Z") })
        })
      )
    )
  /** Builds the store (PGlite start, migrations) now: call it in `beforeAll`, not inside a test's time limit. */
  const ready = () => api.runtime.runPromise(Effect.void)
  /** A product and a price of the merchant with `key`: monthly 30.00 flat unless `fields` say otherwise. */
  const priceOf = async (
    key: string,
    fields: Record<string, unknown> = {},
    names: { readonly product: string; readonly price: string } = { product: "Pro", price: "Pro monthly" }
  ) => {
    const product = (await api.call("POST", "/api/v1/products", key, { product_name: names.product })).body as any
    const price = await api.call("POST", "/api/v1/prices", key, {
      name: names.price,
      product_id: product.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" },
      ...fields
    })
    if (price.status !== 200) throw new Error(`price not created: ${JSON.stringify(price.body)}`)
    return { priceId: (price.body as any).data.price_id as string, productId: product.data.product_id as string }
  }
  return { ...api, merchant, ready, priceOf }
}
