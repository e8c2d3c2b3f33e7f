// Seeding many due subscriptions fast: a template of real subscriptions (made through checkout
// and payment, 31 days ago, so due now) is cloned in SQL, every row of a template subscription
// copied with its ids rewritten. Used by the billing benchmark and the full-size crash suite.
import { Billing, Catalog, Checkout, Merchants, SessionPayments } from "@recur/core"
import { engineOn } from "@recur/embedded"
import { Pg } from "@recur/sql"
import { Effect, ManagedRuntime } from "effect"
import type pg from "pg"
import { withShiftedClock } from "./clock.js"

const DAY = 86_400_000

const randomId = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(26)), (b) => "0123456789abcdefghjkmnpqrstvwxyz"[b % 32]).join("")

/** A merchant on the real clock with `n` subscriptions paid 31 days ago (due now), through the services. */
export const seedTemplate = async (
  db: { readonly url: string; readonly schema: string; readonly masterKey: string },
  n: number
) => {
  const rt = ManagedRuntime.make(
    engineOn(Pg.layerPgUrl({ url: db.url, schema: db.schema }), { masterKey: db.masterKey })
  )
  try {
    return await rt.runPromise(
      Effect.gen(function* () {
        // a sandbox merchant on the real clock (no frozen time): the sandbox gateway may charge it,
        // as it may not a live merchant (which takes payments only through its own processor)
        const m = yield* (yield* Merchants.Merchants).create({ name: "Bench", currency: "USD", mode: "sandbox" })
        const merchantId = m.merchant.merchant_id
        const catalog = yield* Catalog.Catalog
        const product = yield* catalog.createProduct(merchantId, { product_name: "Pro" })
        const price = yield* catalog.createPrice(merchantId, {
          name: "Pro",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
        const _billing = yield* Billing.Billing
        const sessionPayments = yield* SessionPayments.SessionPayments
        const checkout = yield* Checkout.Checkout
        yield* Effect.forEach(
          Array.from({ length: n }),
          () =>
            Effect.gen(function* () {
              // payer ids shaped like Recur's ids, so cloning rewrites them too (payer_id is unique)
              const s = yield* checkout.createSession(
                merchantId,
                Checkout.sessionOf(price.id, { payerId: `pay_${randomId()}` })
              )
              yield* sessionPayments.paySession(merchantId, s.session_id, {
                number: "4242424242424242",
                exp_month: 12,
                exp_year: 2099,
                cvc: "123"
              })
            }),
          { concurrency: 8, discard: true }
        )
        return merchantId
      }).pipe(withShiftedClock(-31 * DAY))
    )
  } finally {
    await rt.dispose()
  }
}

const ID = "((?:cus|ses|sub|trd|inv|pay)_[0-9a-z]{20})[0-9a-z]{6}"
const CLONED = [
  "recur_customers",
  "recur_checkout_sessions",
  "recur_subscriptions",
  "recur_trades",
  "recur_invoices",
  "recur_work_items"
]

/** Copies every template row `copies` times with rewritten ids (one statement per table). */
export const cloneTemplate = async (client: pg.Client, schema: string, merchantId: string, copies: number) => {
  for (const table of CLONED) {
    const cols = (
      await client.query<{ column_name: string; data_type: string }>(
        "select column_name, data_type from information_schema.columns where table_schema = $1 and table_name = $2 order by ordinal_position",
        [schema, table]
      )
    ).rows
    const suffix = "lpad(g::text, 6, '0')"
    const expr = cols.map((c) =>
      c.data_type === "text"
        ? `regexp_replace(t.${c.column_name}, '${ID}', '\\1' || ${suffix}, 'g')`
        : c.data_type === "jsonb"
          ? `regexp_replace(t.${c.column_name}::text, '${ID}', '\\1' || ${suffix}, 'g')::jsonb`
          : `t.${c.column_name}`
    )
    const where = table === "recur_work_items" ? `and t.subject_id ~ '^(cus|ses|sub|trd|inv)_'` : ""
    await client.query(
      `insert into ${table} (${cols.map((c) => c.column_name).join(", ")})
      select ${expr.join(", ")} from ${table} t, generate_series(1, ${copies}) g where t.merchant_id = $1 ${where}`,
      [merchantId]
    )
  }
  await client.query("analyze")
}
