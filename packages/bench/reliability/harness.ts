import { Merchants } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { Pg } from "@recur/sql"

/** `RECUR_RELIABILITY_SCALE=full` for the published figures; CI runs the small size. */
export const full = process.env.RECUR_RELIABILITY_SCALE === "full"
export const size = (small: number, large: number) => (full ? large : small)

/** PostgreSQL when `RECUR_TEST_DATABASE_URL` is set (CI), else embedded PGlite. */
export const databaseUrl = process.env.RECUR_TEST_DATABASE_URL
export const backendName = databaseUrl ? "PostgreSQL" : "PGlite"
export const storage = () =>
  databaseUrl ? Pg.layerPgScratch({ url: databaseUrl, prefix: "recur_rel" }) : Pg.layerPglite()

/** The REST API in process on a fresh store, with merchant creation. */
export const api = () => {
  const client = TestClient.make(engineOn(storage(), { publicUrl: "http://localhost:4000" }))
  const merchant = (frozen = "2026-01-01T00:00:00Z") =>
    client.runtime.runPromise(
      Merchants.Merchants.use((m) => m.create({ name: "Rel", currency: "USD", frozen_time: Date.parse(frozen) }))
    )
  return { ...client, merchant }
}

/** A product, a monthly 30.00 price and a paid subscription, over HTTP. */
export const paidSubscription = async (app: ReturnType<typeof api>, key: string) => {
  const product = (await app.call("POST", "/api/v1/products", key, { product_name: "Pro" })).body.data.product_id
  const price = (
    await app.call("POST", "/api/v1/prices", key, {
      name: "Pro",
      product_id: product,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
    })
  ).body.data
  const session = (
    await app.call("POST", "/api/v1/session", key, {
      payer_id: `p-${Math.random()}`,
      line_items: [{ price_id: price.price_id }]
    })
  ).body.data.session_id
  const paid = await app.call(
    "POST",
    `/checkout/${session}/pay`,
    null,
    { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
    { accept: "application/json" }
  )
  const sub = (
    await app.call("GET", `/api/v1/subscription?search_type=trade_id&search_value=${paid.body.data.trade_id}`, key)
  ).body.data.list[0]
  return { product, price, session, trade: paid.body.data.trade_id as string, sub: sub.id as string }
}

/** Prints a figure line, to be copied into docs/reliability.md. */
export const report = (line: string) => console.log(`[reliability ${backendName}${full ? " full" : ""}] ${line}`)
