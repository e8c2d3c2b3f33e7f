/** The same story in Effect: compose the layer, write the program, run it. */
import { Billing, Catalog, Checkout, Merchants, SandboxClock, SessionPayments } from "@recur/core"
import { layer } from "@recur/embedded"
import { Effect } from "effect"

export const program = Effect.gen(function* () {
  const { merchant } = yield* (yield* Merchants.Merchants).create({
    name: "Acme SaaS",
    currency: "USD",
    frozen_time: Date.parse("2026-01-31T09:00:00Z")
  })
  const m = merchant.merchant_id
  const product = yield* (yield* Catalog.Catalog).createProduct(m, { product_name: "Team plan" })
  const price = yield* (yield* Catalog.Catalog).createPrice(m, {
    name: "Team monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" }
  })
  const billing = yield* Billing.Billing
  const sessionPayments = yield* SessionPayments.SessionPayments
  const checkout = yield* Checkout.Checkout
  const sandboxClock = yield* SandboxClock.SandboxClock
  const session = yield* checkout.createSession(
    m,
    Checkout.sessionOf(price.id, { payerId: "user-42" }, { quantity: 3n })
  )
  yield* sessionPayments.paySession(m, session.session_id, {
    number: "4242424242424242",
    exp_month: 12,
    exp_year: 2030,
    cvc: "123"
  })
  yield* sandboxClock.advanceClock(m, Date.parse("2026-04-30T10:00:00Z"))
  return (yield* billing.listInvoices(m, { limit: 100 })).list
    .map((i) => `${i.invoice_type} ${i.cycle_index} ${i.amount}`)
    .reverse()
})

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program.pipe(Effect.provide(layer({ storage: "memory" })))).then((lines) => {
    for (const l of lines) console.log(l)
  })
}
