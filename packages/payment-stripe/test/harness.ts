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

/**
 * A merchant of `currency` on the sandbox clock of 2026-01-01 with its own Stripe account (the
 * fake, webhooks signed with `secret`), and REST calls with its key: prices, a checkout paid
 * with a payment method, its invoices, the clock and Stripe's webhook events.
 */
export const stripeMerchant = async (
  api: ReturnType<typeof perMerchant>,
  fake: Fake.StripeFake,
  currency: string,
  secret: string
) => {
  const created = await api.runtime.runPromise(
    Merchants.Merchants.use((m) =>
      m.create({ name: `M ${currency}`, currency, frozen_time: Date.parse("2026-01-01T00:00:00Z") })
    )
  )
  const key = created.api_key
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await api.call(method, path, key, body)
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200)
    return (r.body as any).data
  }
  // the merchant's own Stripe account: its pages mount Stripe's Payment Element
  const account = fake.account({
    secret_key: `sk_test_units${currency}`,
    publishable_key: `pk_test_units${currency}`
  }).id
  await ok("POST", "/api/v1/payment_settings", {
    provider: "stripe",
    secret_key: `sk_test_units${currency}`,
    publishable_key: `pk_test_units${currency}`,
    webhook_secret: secret
  })
  const product = await ok("POST", "/api/v1/products", { product_name: "Plan" })
  const price = async (amount: string, fields: Record<string, unknown> = {}) =>
    (
      await ok("POST", "/api/v1/prices", {
        name: `${amount} ${currency}`,
        product_id: product.product_id,
        currency,
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: amount },
        ...fields
      })
    ).price_id as string
  /** Checks out `priceId` paying with `pm`: the session, its subscription and trade. */
  const checkout = async (priceId: string, pm = "pm_card_visa") => {
    const session = await ok("POST", "/api/v1/session", {
      payer_id: `p-${Math.random()}`,
      line_items: [{ price_id: priceId }]
    })
    const page = await (await api.handler(new Request(`http://localhost/checkout/${session.session_id}`))).text()
    const paid = await api.call(
      "POST",
      `/checkout/${session.session_id}/pay`,
      null,
      { payment_method: pm },
      {
        accept: "application/json"
      }
    )
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    const s = (await ok("GET", `/api/v1/session/${session.session_id}`)).session
    return { page, sub: s.subscription_id as string, trade: s.trade_id as string }
  }
  const invoices = async (sub: string) =>
    ((await ok("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`)).list as Array<any>).sort(
      (a, b) => a.cycle_index - b.cycle_index
    )
  const advance = (to: string) => ok("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: to })
  /** Stripe posts a webhook event for this merchant. */
  const hook = async (type: string, object: Record<string, unknown>) => {
    const event = fake.event(type, object, secret)
    const r = await api.handler(
      new Request(`http://localhost/webhooks/stripe/${created.merchant.merchant_id}`, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": event.header },
        body: event.payload
      })
    )
    expect(r.status).toBe(200)
  }
  return { key, ok, price, checkout, invoices, advance, hook, account }
}
