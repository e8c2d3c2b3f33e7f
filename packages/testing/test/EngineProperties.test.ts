import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Checkout,
  Entities,
  Merchants,
  Money,
  PriceChanges,
  Refunds,
  SandboxClock,
  SessionPayments,
  Store,
  Subscriptions
} from "@recur/core"
import { Effect, Result, Option } from "effect"
import fc from "fast-check"
import { MemoryStorage, ScenarioKit } from "../src/index.js"

const DAY = 86_400_000
const cents = (s: string) => Result.getOrThrow(Money.parse(s, "USD")).amount
let exercised = { invoices: 0, refunds: 0, changes: 0 }
const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

type Op =
  | { readonly _tag: "subscribe"; readonly good: boolean; readonly plan: 0 | 1 }
  | { readonly _tag: "advance"; readonly days: number }
  | {
      readonly _tag: "change"
      readonly which: number
      readonly plan: 0 | 1
      readonly mode: "immediate" | "none" | "end_of_period"
    }
  | { readonly _tag: "quantity"; readonly which: number; readonly quantity: number }
  | { readonly _tag: "cancel"; readonly which: number; readonly atEnd: boolean }
  | { readonly _tag: "pause"; readonly which: number }
  | { readonly _tag: "resume"; readonly which: number }
  | { readonly _tag: "refund"; readonly which: number; readonly cents: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    _tag: fc.constant("subscribe" as const),
    good: fc.boolean(),
    plan: fc.constantFrom(0 as const, 1 as const)
  }),
  fc.record({ _tag: fc.constant("advance" as const), days: fc.integer({ min: 1, max: 45 }) }),
  fc.record({
    _tag: fc.constant("change" as const),
    which: fc.nat(),
    plan: fc.constantFrom(0 as const, 1 as const),
    mode: fc.constantFrom("immediate" as const, "none" as const, "end_of_period" as const)
  }),
  fc.record({ _tag: fc.constant("quantity" as const), which: fc.nat(), quantity: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ _tag: fc.constant("cancel" as const), which: fc.nat(), atEnd: fc.boolean() }),
  fc.record({ _tag: fc.constant("pause" as const), which: fc.nat() }),
  fc.record({ _tag: fc.constant("resume" as const), which: fc.nat() }),
  fc.record({ _tag: fc.constant("refund" as const), which: fc.nat(), cents: fc.integer({ min: 1, max: 4000 }) })
)

const all = <A>(repo: Store.Repository<A>, merchantId: string, idOf: (a: A) => string) =>
  Effect.gen(function* () {
    const out: Array<A> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(repo.list(merchantId, { limit: 100, starting_after: cursor }))
      out.push(...page.list)
      if (!page.has_more) return out
      cursor = idOf(page.list[page.list.length - 1]!)
    }
  })

layer(ScenarioKit.engine(MemoryStorage.layer), { timeout: "120 seconds" })("engine invariants", (it) => {
  const run = (ops: ReadonlyArray<Op>) =>
    Effect.gen(function* () {
      const _billing = yield* Billing.Billing
      const sessionPayments = yield* SessionPayments.SessionPayments
      const checkout = yield* Checkout.Checkout
      const sandboxClock = yield* SandboxClock.SandboxClock
      const subs = yield* Subscriptions.Subscriptions
      const priceChanges = yield* PriceChanges.PriceChanges
      const catalog = yield* Catalog.Catalog
      const start = Date.UTC(2024, 0, 31, 12)
      const { merchant } = yield* (yield* Merchants.Merchants).create({
        name: "Prop",
        currency: "USD",
        frozen_time: start
      })
      const m = merchant.merchant_id
      const product = yield* catalog.createProduct(m, { product_name: "P" })
      const plans = yield* Effect.forEach(["10.00", "25.00"], (base) =>
        catalog.createPrice(m, {
          name: `Plan ${base}`,
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: base }
        })
      )
      const subIds: Array<string> = []
      const tradeIds: Array<string> = []
      let now = start
      for (const o of ops) {
        const pick = (n: number) => subIds[n % Math.max(1, subIds.length)]
        const attempt = <A, E>(e: Effect.Effect<A, E>) => Effect.result(e)
        switch (o._tag) {
          case "subscribe": {
            const s = yield* checkout.createSession(
              m,
              Checkout.sessionOf(plans[o.plan]!.id, { payerId: `p${subIds.length}-${now}` })
            )
            const r = yield* sessionPayments.paySession(
              m,
              s.session_id,
              card(o.good ? "4242424242424242" : "4000000000000341")
            )
            if (Option.isSome(r.subscription)) subIds.push(r.subscription.value.id)
            tradeIds.push(r.trade.trade_id)
            break
          }
          case "advance":
            now += o.days * DAY
            yield* sandboxClock.advanceClock(m, now)
            break
          case "change":
            if (pick(o.which))
              yield* attempt(
                priceChanges.changePrice(
                  m,
                  PriceChanges.change(pick(o.which)!, {
                    priceId: plans[o.plan]!.id,
                    effective: o.mode === "end_of_period" ? "end_of_period" : "immediate",
                    proration: o.mode === "none" ? "none" : "immediate"
                  })
                )
              )
            break
          case "quantity":
            if (pick(o.which))
              yield* attempt(
                priceChanges.changePrice(m, PriceChanges.change(pick(o.which)!, { quantity: BigInt(o.quantity) }))
              )
            break
          case "cancel":
            if (pick(o.which))
              yield* attempt(
                subs.cancel(
                  m,
                  Subscriptions.cancelOf(pick(o.which)!, { when: o.atEnd ? "end_of_period" : "immediate" })
                )
              )
            break
          case "pause":
            if (pick(o.which)) yield* attempt(subs.pause(m, pick(o.which)!))
            break
          case "resume":
            if (pick(o.which)) yield* attempt(subs.resume(m, pick(o.which)!))
            break
          case "refund": {
            const t = tradeIds[o.which % Math.max(1, tradeIds.length)]
            if (t)
              yield* attempt(
                (yield* Refunds.Refunds).refund(
                  m,
                  Refunds.refundOf(t, { amount: Money.format(Money.make(BigInt(o.cents), "USD")) })
                )
              )
            break
          }
        }
      }
      const storage = yield* Store.Storage
      const invoices = yield* all(storage.repository(Entities.invoice), m, (i) => i.invoice_id)
      const trades = yield* all(storage.repository(Entities.trade), m, (t) => t.trade.trade_id)
      const refunds = yield* all(storage.repository(Entities.refund), m, (r) => r.refund.refund_id)
      const events = yield* all(storage.repository(Entities.webhookEvent), m, (e) => e.id)
      const subscriptions = yield* all(storage.repository(Entities.subscription), m, (s) => s.subscription.id)

      // 1. at most one invoice per (subscription, cycle, type) for cycle invoices
      const keys = invoices
        .filter((i) => ["initial", "trial", "renewal"].includes(i.invoice_type))
        .map((i) => `${i.subscription_id}:${i.cycle_index}:${i.invoice_type}`)
      expect(new Set(keys).size).toBe(keys.length)
      // 2. refunds never exceed what was paid, and the trade's total matches its succeeded refunds
      for (const t of trades) {
        const paid = cents(t.trade.amount)
        const refunded = cents(t.trade.total_refunded_amount)
        expect(refunded).toBeLessThanOrEqual(paid)
        const sum = refunds
          .filter((r) => r.refund.trade_id === t.trade.trade_id && r.refund.refund_status === "succeeded")
          .reduce((a, r) => a + cents(r.refund.refund_amount), 0n)
        expect(sum).toBe(refunded)
      }
      // 3. cycles are contiguous and periods well-formed
      for (const s of subscriptions) {
        const cycles = [
          ...new Set(
            invoices
              .filter(
                (i) =>
                  i.subscription_id === s.subscription.id && ["initial", "renewal", "trial"].includes(i.invoice_type)
              )
              .map((i) => i.cycle_index)
          )
        ].sort((a, b) => a - b)
        expect(cycles).toEqual(cycles.map((_, i) => i))
        const { current_period_end: end, current_period_start: begin } = s.subscription
        if (begin !== null && end !== null) expect(end.epochMilliseconds).toBeGreaterThan(begin.epochMilliseconds)
        // 4. one event per state change: exactly one "first" for every subscription that started
        const firsts = events.filter(
          (e) => e.business_id === s.subscription.id && e.type === "v2.subscription.first"
        ).length
        expect(firsts).toBe(
          ["init", "incomplete"].includes(s.subscription.status) && Option.isNone(Option.fromNullishOr(s.anchor))
            ? 0
            : 1
        )
        const canceled = events.filter(
          (e) => e.business_id === s.subscription.id && e.type === "v2.subscription.canceled"
        ).length
        expect(canceled).toBe(s.subscription.status === "canceled" ? 1 : 0)
      }
      for (const i of invoices) {
        const paid = events.filter((e) => e.business_id === i.invoice_id && e.type === "v2.invoice.paid").length
        expect(paid).toBe(
          i.biz_status === "success" || i.biz_status === "refunded" || i.biz_status === "partially_refunded"
            ? i.invoice_type === "refund"
              ? 0
              : 1
            : 0
        )
      }
      for (const t of trades) {
        expect(events.filter((e) => e.business_id === t.trade.trade_id && e.type === "v2.trades.created")).toHaveLength(
          1
        )
        expect(
          events.filter((e) => e.business_id === t.trade.trade_id && e.type === "v2.trades.succeeded")
        ).toHaveLength(t.trade.trade_status === "succeeded" ? 1 : 0)
      }
      exercised = {
        invoices: exercised.invoices + invoices.length,
        refunds: exercised.refunds + refunds.length,
        changes: exercised.changes + events.filter((e) => e.type === "v2.subscription.price_changed").length
      }
    })

  it.effect(
    "for random operations and clock moves: one invoice per cycle and type, refunds ≤ paid, contiguous cycles, one event per change",
    () =>
      Effect.gen(function* () {
        const services = yield* Effect.context<Effect.Services<ReturnType<typeof run>>>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 25 }), (ops) =>
              Effect.runPromiseWith(services)(run(ops))
            ),
            { seed: 20_261_123, numRuns: 30 }
          )
        )
      }),
    120_000
  )

  it("the random runs exercised billing, refunds and changes", () => {
    expect(exercised.invoices).toBeGreaterThan(30)
    expect(exercised.refunds).toBeGreaterThan(0)
    expect(exercised.changes).toBeGreaterThan(0)
  })
})
