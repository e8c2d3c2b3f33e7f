import { describe, expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Checkout,
  Engine,
  Entities,
  Merchants,
  Money,
  Ports,
  PriceChanges,
  Refunds,
  SandboxClock,
  SessionPayments,
  Store,
  Worker
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Pg } from "@recur/sql"
import { ScenarioKit } from "@recur/testing"
import { Effect, Fiber, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { freshPostgres } from "./postgres.js"

const DAY = 86_400_000
const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

/** `n` live monthly subscriptions, all due for renewal 32 days later; two workers race over them, one is killed. */
const exactlyOnce = <E>(name: string, storage: Layer.Layer<Store.Storage, E>, n: number) =>
  layer(ScenarioKit.engine(storage), { timeout: "600 seconds" })(name, (it) => {
    it.effect(
      `two workers over ${n} due subscriptions, one killed mid-run, bill each cycle exactly once`,
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.UTC(2026, 0, 1))
          const billing = yield* Billing.Billing
          const sessionPayments = yield* SessionPayments.SessionPayments
          const checkout = yield* Checkout.Checkout
          const worker = yield* Worker.Worker
          const { merchant } = yield* (yield* Merchants.Merchants).create({ name: "Load", currency: "USD" })
          const m = merchant.merchant_id
          const catalog = yield* Catalog.Catalog
          const product = yield* catalog.createProduct(m, { product_name: "Plan" })
          const pv = yield* catalog.createPrice(m, {
            name: "Monthly",
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "9.99" }
          })
          yield* Effect.forEach(
            Array.from({ length: n }, (_, i) => i),
            (i) =>
              Effect.gen(function* () {
                const s = yield* checkout.createSession(m, Checkout.sessionOf(pv.id, { payerId: `p${i}` }))
                const r = yield* sessionPayments.paySession(m, s.session_id, card)
                expect(r.status).toBe("succeeded")
              }),
            { concurrency: 4, discard: true }
          )
          yield* TestClock.adjust(32 * DAY)
          const now = Date.UTC(2026, 0, 1) + 32 * DAY
          // worker A is killed after a moment; worker B runs alongside and then finishes after A's leases expire
          const a = yield* Effect.forkChild(
            worker.runDue({ now, owner: "worker-a", lane: "live", merchantId: m, batch: 5, leaseMs: 60_000 })
          )
          // worker B bills several subscriptions at once (RECUR_WORKER_CONCURRENCY)
          const b = yield* Effect.forkChild(
            worker.runDue({
              now,
              owner: "worker-b",
              lane: "live",
              merchantId: m,
              batch: 16,
              leaseMs: 60_000,
              concurrency: 8
            })
          )
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 40)))
          yield* Fiber.interrupt(a)
          yield* Fiber.join(b)
          const restarted = yield* worker.runDue({
            now: now + 120_000,
            owner: "worker-a2",
            lane: "live",
            merchantId: m,
            batch: 20
          })
          expect(restarted).toBeGreaterThanOrEqual(0)
          const storageService = yield* Store.Storage
          const invoices: Array<{
            subscription_id: string | null
            cycle_index: number
            invoice_type: string
            biz_status: string
            trade_id: string | null
          }> = []
          let cursor: string | undefined
          for (;;) {
            const page = yield* Effect.orDie(
              storageService.repository(Entities.invoice).list(m, {
                limit: 100,
                starting_after: cursor,
                filters: [{ column: "invoice_type", op: "in", values: ["renewal"] }]
              })
            )
            invoices.push(...page.list)
            if (!page.has_more) break
            cursor = page.list[page.list.length - 1]!.invoice_id
          }
          expect(invoices).toHaveLength(n)
          expect(new Set(invoices.map((i) => i.subscription_id)).size).toBe(n)
          expect(invoices.every((i) => i.cycle_index === 1 && i.biz_status === "success")).toBe(true)
          const controls = yield* SandboxGateway.SandboxControls
          const attempts = yield* Effect.forEach(invoices, (i) => controls.chargeAttempts(i.trade_id!))
          expect(attempts.every((x) => x === 1)).toBe(true)
          const subs = yield* billing.listSubscriptions(m, {
            limit: 100,
            filters: [{ column: "status", op: "in", values: ["active"] }]
          })
          expect(subs.list.every((s) => s.cycle_index === 1)).toBe(true)
        }),
      600_000
    )
  })

/**
 * The sandbox gateway, except that its first `n` charges or refunds crash the process: before
 * the call reaches the processor, or after the processor did it and before the answer is
 * recorded.
 */
const crashing = (n: number, call: "charge" | "refund", when: "before" | "after") =>
  Layer.effect(
    Ports.PaymentGateway,
    Effect.gen(function* () {
      const real = yield* Ports.PaymentGateway
      let left = n
      const die = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
        when === "before"
          ? left-- > 0
            ? Effect.die(`process killed before the ${call}`)
            : effect
          : Effect.flatMap(effect, (a) =>
              left-- > 0 ? Effect.die(`process killed after the ${call}`) : Effect.succeed(a)
            )
      return Ports.PaymentGateway.of({
        ...real,
        ...(call === "charge"
          ? { charge: (request) => die(real.charge(request)) }
          : { refund: (request) => die(real.refund(request)) })
      })
    })
  )

layer(ScenarioKit.engine(Pg.layerPglite()), { timeout: "120 seconds" })(
  "crash between the billing transaction and the charge",
  (it) => {
    it.effect(
      "renewals recorded before a crash are charged by the next worker, once each",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.UTC(2026, 0, 1))
          const { merchant } = yield* (yield* Merchants.Merchants).create({ name: "Crash", currency: "USD" })
          const m = merchant.merchant_id
          const catalog = yield* Catalog.Catalog
          const product = yield* catalog.createProduct(m, { product_name: "Plan" })
          const pv = yield* catalog.createPrice(m, {
            name: "Monthly",
            product_id: product.product_id,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "5.00" }
          })
          const billing0 = yield* Billing.Billing
          const sessionPayments = yield* SessionPayments.SessionPayments
          const checkout = yield* Checkout.Checkout
          const worker = yield* Worker.Worker
          for (let i = 0; i < 8; i++) {
            const s = yield* checkout.createSession(m, Checkout.sessionOf(pv.id, { payerId: `c${i}` }))
            yield* sessionPayments.paySession(m, s.session_id, card)
          }
          yield* TestClock.adjust(32 * DAY)
          const now = Date.UTC(2026, 0, 1) + 32 * DAY
          // every renewal of this worker dies after recording its invoice and trade, before the charge
          yield* Worker.Worker.use((b) => b.runDue({ now, owner: "doomed", lane: "live", merchantId: m })).pipe(
            Effect.provide(Engine.layer.pipe(Layer.provide(crashing(Number.POSITIVE_INFINITY, "charge", "before"))), {
              local: true
            })
          )
          const pending = (yield* billing0.listInvoices(m, {
            limit: 100,
            filters: [
              { column: "invoice_type", op: "in", values: ["renewal"] },
              { column: "biz_status", op: "in", values: ["pending"] }
            ]
          })).list
          expect(pending).toHaveLength(8)
          // a fresh worker after the crashed one's leases ran out
          yield* worker.runDue({ now: now + 120_000, owner: "survivor", lane: "live", merchantId: m })
          const renewals = (yield* billing0.listInvoices(m, {
            limit: 100,
            filters: [{ column: "invoice_type", op: "in", values: ["renewal"] }]
          })).list
          expect(renewals).toHaveLength(8)
          expect(renewals.every((i) => i.biz_status === "success" && i.cycle_index === 1)).toBe(true)
          const controls = yield* SandboxGateway.SandboxControls
          expect(yield* Effect.forEach(renewals, (i) => controls.chargeAttempts(i.trade_id!))).toEqual(
            renewals.map(() => 1)
          )
        }),
      120_000
    )
  }
)

layer(ScenarioKit.engine(Pg.layerPglite()), { timeout: "120 seconds" })("crash around a checkout's charge", (it) => {
  it.effect(
    "the payer pays again after the process died before or after the charge: the same attempt is sent again and the card is charged once",
    () =>
      Effect.gen(function* () {
        const { merchantId, priceId } = yield* ScenarioKit.setup("2024-03-01T00:00:00Z")
        const billing = yield* Billing.Billing
        const checkout = yield* Checkout.Checkout
        const sessionPayments = yield* SessionPayments.SessionPayments
        const controls = yield* SandboxGateway.SandboxControls
        for (const [when, gateway] of [
          ["before", crashing(1, "charge", "before")],
          ["after", crashing(1, "charge", "after")]
        ] as const) {
          const session = yield* checkout.createSession(
            merchantId,
            Checkout.sessionOf(priceId, { payerId: `crash-${when}` })
          )
          const died = yield* SessionPayments.SessionPayments.use((b) =>
            b.paySession(merchantId, session.session_id, card)
          ).pipe(Effect.provide(Engine.layer.pipe(Layer.provide(gateway)), { local: true }), Effect.exit)
          expect(died._tag).toBe("Failure")
          const trade = (yield* checkout.getSession(merchantId, session.session_id)).trade_id!
          expect((yield* billing.getTrade(merchantId, trade)).trade_status).toBe("processing")
          // the payer clicks again, twice at once: the unknown attempt is sent again under its own key
          const again = yield* Effect.all(
            [
              sessionPayments.paySession(merchantId, session.session_id, card),
              sessionPayments.paySession(merchantId, session.session_id, card)
            ],
            { concurrency: 2 }
          )
          expect(again.map((r) => [r.status, r.trade.trade_id])).toEqual([
            ["succeeded", trade],
            ["succeeded", trade]
          ])
          expect([when, yield* controls.chargeAttempts(trade)]).toEqual([when, 1])
          expect((yield* checkout.getSession(merchantId, session.session_id)).status).toBe("complete")
        }
      }),
    120_000
  )
})

layer(ScenarioKit.engine(Pg.layerPglite()), { timeout: "120 seconds" })("crash during a downgrade's refund", (it) => {
  it.effect(
    "the refund a committed downgrade owes is paid by the work item after the crash, exactly once, and nothing is credited twice",
    () =>
      Effect.gen(function* () {
        const { merchantId, priceId, pv } = yield* ScenarioKit.setup("2024-03-01T00:00:00Z")
        const billing = yield* Billing.Billing
        const sandboxClock = yield* SandboxClock.SandboxClock
        const refunds = yield* Refunds.Refunds
        const controls = yield* SandboxGateway.SandboxControls
        const cheaper = yield* (yield* Catalog.Catalog).createPrice(merchantId, {
          name: "Basic monthly",
          product_id: pv.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "10.00" }
        })
        for (const [when, day] of [
          ["before", 16],
          ["after", 20]
        ] as const) {
          yield* sandboxClock.advanceClock(merchantId, Date.UTC(2024, 2, day))
          const sub = Option.getOrThrow((yield* ScenarioKit.subscribe(merchantId, priceId)).result.subscription)
          const trade = sub.source_trade_id!
          const quote = yield* PriceChanges.PriceChanges.use((s) =>
            s.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: cheaper.id }))
          ).pipe(Effect.provide(Engine.layer.pipe(Layer.provide(crashing(1, "refund", when))), { local: true }))
          expect(quote.outcome).toBe("refund")
          const owed = -Result.getOrThrow(Money.parse(quote.net, "USD", { allowNegative: true })).amount
          expect(owed).toBeGreaterThan(0n)
          // the change is committed; the refund is not recorded as done
          expect((yield* billing.getSubscription(merchantId, sub.id)).price_id).toBe(cheaper.id)
          const before = (yield* refunds.listRefunds(merchantId, {
            limit: 10,
            filters: [{ column: "trade_id", op: "in", values: [trade] }]
          })).list
          expect(before.every((r) => r.refund_status !== "succeeded")).toBe(true)
          // the work item, a minute later
          yield* sandboxClock.advanceClock(merchantId, Date.UTC(2024, 2, day, 0, 2))
          const after = (yield* refunds.listRefunds(merchantId, {
            limit: 10,
            filters: [{ column: "trade_id", op: "in", values: [trade] }]
          })).list
          expect([when, after.map((r) => [r.refund_status, r.refund_amount])]).toEqual([
            when,
            [["succeeded", Money.format(Money.make(owed, "USD"))]]
          ])
          expect([when, yield* controls.refunded(trade)]).toEqual([when, owed])
          expect((yield* billing.getSubscription(merchantId, sub.id)).credit_balance).toBe("0.00")
          // and again: nothing more
          yield* sandboxClock.advanceClock(merchantId, Date.UTC(2024, 2, day, 1))
          expect(yield* controls.refunded(trade)).toBe(owed)
        }
      }),
    120_000
  )
})

describe("exactly-once renewals", () => {
  exactlyOnce("PGlite", Pg.layerPglite(), 60)
})

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) exactlyOnce("PostgreSQL", freshPostgres(url), 1000)
