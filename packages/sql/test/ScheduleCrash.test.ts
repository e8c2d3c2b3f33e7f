/**
 * A schedule's phase of several items across crashes: a renewal that dies inside its transaction
 * (after the schedule's step, before the commit) leaves nothing behind; one that dies after its
 * commit and before the charge leaves the phase started — its base price and its extra item set —
 * and the invoice pending. The next workers bill each phase once (one line per item), charge it
 * once, set its items once, and emit one `phase_started` per schedule.
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Checkout,
  Engine,
  Merchants,
  Ports,
  Schedules,
  SessionPayments,
  type Store,
  Webhooks,
  Worker
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Pg } from "@recur/sql"
import { ScenarioKit } from "@recur/testing"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { freshPostgres } from "./postgres.js"

const DAY = 86_400_000
const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

/** The sandbox gateway, except that every charge kills the process before it reaches the processor. */
const chargeDies = Layer.effect(
  Ports.PaymentGateway,
  Effect.gen(function* () {
    const real = yield* Ports.PaymentGateway
    return Ports.PaymentGateway.of({ ...real, charge: () => Effect.die("process killed before the charge") })
  })
)

/** A tax calculator that kills the process: the renewal dies inside its transaction, after the schedule's step. */
const taxDies = Layer.succeed(Ports.TaxCalculator, { tax: () => Effect.die("process killed inside the renewal") })

const crashes = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(ScenarioKit.engine(storage), { timeout: "180 seconds" })(name, (it) => {
    it.effect(
      "a phase of two items renewed through two crashes starts once, sets its items once and bills them once",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.UTC(2026, 0, 1))
          const { merchant } = yield* (yield* Merchants.Merchants).create({ name: "Crash", currency: "USD" })
          const m = merchant.merchant_id
          const catalog = yield* Catalog.Catalog
          const product = yield* catalog.createProduct(m, { product_name: "Plan" })
          const monthly = (amount: string) =>
            catalog.createPrice(m, {
              name: `Monthly ${amount}`,
              product_id: product.product_id,
              currency: "USD",
              billing_type: "recurring",
              price_type: "flat_price",
              price_plan: { billing_cycle_unit: "month", base_price_val: amount }
            })
          const base = yield* monthly("5.00")
          const next = yield* monthly("8.00")
          const seat = yield* monthly("2.00")
          const checkout = yield* Checkout.Checkout
          const sessionPayments = yield* SessionPayments.SessionPayments
          const schedules = yield* Schedules.Schedules
          const billing = yield* Billing.Billing
          const ids: Array<{ readonly sub: string; readonly schedule: string }> = []
          for (let i = 0; i < 4; i++) {
            const s = yield* checkout.createSession(m, Checkout.sessionOf(base.id, { payerId: `c${i}` }))
            const paid = yield* sessionPayments.paySession(m, s.session_id, card)
            const sub = Option.getOrThrow(paid.subscription).id
            const sc = yield* schedules.create(m, {
              subscriptionId: sub,
              start: "next_period",
              endBehavior: "release",
              phases: [
                {
                  items: [
                    { priceId: next.id, quantity: Option.none() },
                    { priceId: seat.id, quantity: Option.some(3n) }
                  ],
                  discountCode: Option.none(),
                  duration: { cycles: 2 }
                }
              ]
            })
            ids.push({ sub, schedule: sc.id })
          }
          yield* TestClock.adjust(32 * DAY)
          const now = Date.UTC(2026, 0, 1) + 32 * DAY
          const renewals = () =>
            Effect.map(
              billing.listInvoices(m, {
                limit: 100,
                filters: [{ column: "invoice_type", op: "in", values: ["renewal"] }]
              }),
              (page) => page.list
            )
          const run = (owner: string, at: number) =>
            Worker.Worker.use((w) => w.runDue({ now: at, owner, lane: "live", merchantId: m }))
          // 1. every renewal dies inside its transaction: nothing is written, no phase starts
          yield* run("dies-inside", now).pipe(
            Effect.provide(Engine.layer.pipe(Layer.provide(taxDies)), { local: true })
          )
          expect(yield* renewals()).toHaveLength(0)
          for (const { sub } of ids) expect((yield* schedules.get(m, sub)).status).toBe("not_started")
          // 2. after its leases ran out, every renewal commits and dies before its charge
          yield* run("dies-after", now + 120_000).pipe(
            Effect.provide(Engine.layer.pipe(Layer.provide(chargeDies)), { local: true })
          )
          const pending = yield* renewals()
          expect(pending.map((i) => [i.cycle_index, i.amount, i.biz_status])).toEqual(
            ids.map(() => [1, "14.00", "pending"])
          )
          // 3. a survivor charges them, and a rerun finds nothing left to do
          yield* run("survivor", now + 240_000)
          yield* run("rerun", now + 360_000)
          const done = yield* renewals()
          expect(done.map((i) => [i.cycle_index, i.amount, i.biz_status])).toEqual(
            ids.map(() => [1, "14.00", "success"])
          )
          expect(done.map((i) => i.lines.map((l) => [l.quantity, l.amount]))).toEqual(
            ids.map(() => [
              ["1", "8.00"],
              ["3", "6.00"]
            ])
          )
          const controls = yield* SandboxGateway.SandboxControls
          expect(yield* Effect.forEach(done, (i) => controls.chargeAttempts(i.trade_id!))).toEqual(done.map(() => 1))
          const webhooks = yield* Webhooks.Webhooks
          for (const { sub, schedule } of ids) {
            const sc = yield* schedules.get(m, sub)
            expect([sc.status, sc.current_phase]).toEqual(["active", 0])
            const items = (yield* billing.getSubscription(m, sub)).items ?? []
            expect(items.map((i) => [i.price_id, i.quantity])).toEqual([
              [next.id, "1"],
              [seat.id, "3"]
            ])
            const events = yield* webhooks.listEvents(m, { business_ids: [schedule], limit: 100 })
            expect(events.list.map((e) => e.event_type)).toEqual(["v2.subscription_schedule.phase_started"])
          }
        }),
      180_000
    )
  })

crashes("schedules through crashes (PGlite)", Pg.layerPglite())
const url = process.env.RECUR_TEST_DATABASE_URL
if (url) crashes("schedules through crashes (PostgreSQL)", freshPostgres(url))
