/**
 * The commercial operations of a model run, each on the engine and on the model: a checkout with
 * or without a discount code, clock moves, price changes (preview = commit), discounts applied and
 * removed, customers moving country, tax rates added and archived, declined renewals and their
 * recovery, cancellations and refunds. Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import {
  Billing,
  Checkout,
  Customers,
  PaymentMethods,
  PriceChanges,
  Refunds,
  SandboxClock,
  SessionPayments,
  Subscriptions,
  TaxRates
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect } from "effect"
import { discountsByRequest } from "../ScenarioKit.js"
import {
  type CMerchant,
  type CSub,
  RATES,
  cAdvance,
  cycleInvoice,
  endOutOfScope,
  productOf,
  recover,
  refundOfInvoice,
  refundableOf
} from "./Commercial.js"
import type { commercialChecks } from "./CommercialChecks.js"
import { cPriceId } from "./CommercialChecks.js"
import { type COp, cProrate } from "./CommercialOps.js"
import { card } from "./Operations.js"
import { addMonths, fmt } from "./Reference.js"

/**
 * The runner of commercial operations over `cMerchants`: each checked with `cVerify`, a failure
 * named by `where`.
 */
export const commercialRun = (
  cMerchants: ReadonlyArray<CMerchant>,
  cVerify: ReturnType<typeof commercialChecks>["cVerify"],
  where: () => string
) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const sessionPayments = yield* SessionPayments.SessionPayments
    const checkout = yield* Checkout.Checkout
    const sandboxClock = yield* SandboxClock.SandboxClock
    const paymentMethods = yield* PaymentMethods.PaymentMethods
    const subsService = yield* Subscriptions.Subscriptions
    const priceChanges = yield* PriceChanges.PriceChanges
    const refunds = yield* Refunds.Refunds
    const discountsService = yield* discountsByRequest
    const controls = yield* SandboxGateway.SandboxControls
    const taxRates = yield* TaxRates.TaxRates
    const customersService = yield* Customers.Customers

    const refusedAny = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const r = yield* Effect.result(effect)
        expect(r._tag, `${where()}: expected a refusal`).toBe("Failure")
      })

    return (op: COp) =>
      Effect.gen(function* () {
        switch (op._tag) {
          case "CSubscribe": {
            const { m, cust } = op
            const d = op.code
            const refused = d !== null && d.perCustomer !== null && (cust.redeemed.get(d.id) ?? 0) >= d.perCustomer
            const attempt = Effect.gen(function* () {
              const session = yield* checkout.createSession(
                m.id,
                Checkout.sessionOf(
                  m.prices[op.price]!,
                  { payerId: cust.payer },
                  { quantity: BigInt(op.qty), discountCode: d?.code }
                )
              )
              return yield* sessionPayments.paySession(m.id, session.session_id, card)
            })
            if (refused) {
              yield* refusedAny(attempt)
              break
            }
            const paid = yield* attempt
            expect(paid.status, where()).toBe("succeeded")
            const id = paid.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))
            const s: CSub = {
              id,
              m,
              cust,
              price: op.price,
              scheduled: null,
              qty: op.qty,
              cycle: 0,
              anchor: m.now,
              start: m.now,
              end: addMonths(m.now, 1),
              basis: 0n,
              credit: 0n,
              credited: 0n,
              sharedIn: 0n,
              terms: d !== null ? [{ d, first: 0 }] : [],
              invoices: [],
              checked: 0,
              pastDue: null,
              known: new Set(),
              status: "active"
            }
            if (d !== null) cust.redeemed.set(d.id, (cust.redeemed.get(d.id) ?? 0) + 1)
            cycleInvoice(s, "initial")
            m.subs.push(s)
            cust.subs.push(s)
            yield* cVerify(s)
            break
          }
          case "CAdvance": {
            const to = op.m.now + op.ms
            yield* sandboxClock.advanceClock(op.m.id, to)
            cAdvance(op.m, to)
            yield* Effect.forEach(
              op.m.subs.filter((s) => s.checked < s.invoices.length),
              cVerify,
              { discard: true }
            )
            break
          }
          case "CChange": {
            const s = op.s
            const input = {
              priceId: cPriceId(s, op.target),
              effective: op.mode === "end_of_period" ? ("end_of_period" as const) : ("immediate" as const),
              proration: op.mode === "none" ? ("none" as const) : ("immediate" as const)
            }
            const preview = yield* priceChanges.previewChange(s.m.id, PriceChanges.change(s.id, input))
            const quote = yield* priceChanges.changePrice(
              s.m.id,
              PriceChanges.change(s.id, { ...input, quoteId: preview.quote_id })
            )
            expect(quote, where()).toEqual(preview)
            if (op.mode === "end_of_period") s.scheduled = op.target
            else if (op.mode === "none") {
              // the remainder stays paid at the old plan's rate: the basis is kept
              s.price = op.target
              s.scheduled = null
              endOutOfScope(s, op.target)
            } else {
              const { net, tax, total } = cProrate(s, op.target)
              expect([quote.net, quote.tax, quote.total], where()).toEqual([fmt(net), fmt(tax), fmt(total)])
            }
            yield* cVerify(s)
            break
          }
          case "CApplyDiscount": {
            const { s, d } = op
            const outOfScope = d.products.length > 0 && !d.products.includes(productOf(s.price))
            const limit = d.perCustomer !== null && (s.cust.redeemed.get(d.id) ?? 0) >= d.perCustomer
            const apply = discountsService.applyToSubscription(s.m.id, s.id, { discount_id: d.id })
            if (outOfScope || limit) {
              yield* refusedAny(apply)
              break
            }
            yield* apply
            s.terms.push({ d, first: s.cycle + 1 })
            s.cust.redeemed.set(d.id, (s.cust.redeemed.get(d.id) ?? 0) + 1)
            const sub = yield* billing.getSubscription(s.m.id, s.id)
            expect(sub.credit_balance, where()).toBe(fmt(s.credit))
            break
          }
          case "CRemoveDiscount": {
            const { s, d } = op
            yield* discountsService.removeFromSubscription(s.m.id, s.id, d.id)
            s.terms = s.terms.filter((t) => t.d !== d)
            break
          }
          case "CMove": {
            const { cust, country } = op
            const m = cMerchants.find((x) => x.customers.includes(cust))!
            yield* customersService.update(m.id, {
              customer_id: cust.id,
              address:
                country === null
                  ? { country: "" }
                  : { country, ...(RATES[country]!.region ? { province: RATES[country]!.region } : {}) }
            })
            cust.country = country
            break
          }
          case "CAddRate": {
            const r = RATES[op.country]!
            const rate = yield* taxRates.create(op.m.id, {
              name: "Tax",
              percentage: r.pct,
              country: op.country,
              ...(r.region ? { region: r.region } : {}),
              inclusive: r.inclusive
            })
            op.m.rates.set(op.country, { id: rate.tax_rate_id, units: r.units, inclusive: r.inclusive })
            break
          }
          case "CArchiveRate": {
            yield* taxRates.archive(op.m.id, op.m.rates.get(op.country)!.id)
            op.m.rates.delete(op.country)
            break
          }
          case "CDecline": {
            const { s } = op
            const m = s.m
            const to = s.end
            yield* controls.declineNextOffSession(1)
            yield* sandboxClock.advanceClock(m.id, to)
            yield* controls.declineNextOffSession(0)
            cAdvance(m, to, { armed: true })
            yield* Effect.forEach(
              m.subs.filter((x) => x.checked < x.invoices.length),
              cVerify,
              { discard: true }
            )
            break
          }
          case "CCancel": {
            const { s } = op
            yield* subsService.cancel(s.m.id, Subscriptions.cancelOf(s.id, { when: "immediate" }))
            s.status = "canceled"
            yield* cVerify(s)
            break
          }
          case "CRecover": {
            const { s } = op
            yield* paymentMethods.updatePaymentMethod(s.m.id, s.id, card)
            recover(s)
            yield* cVerify(s)
            break
          }
          case "CRefund": {
            const s = op.s
            const attempt = refunds.refund(
              s.m.id,
              Refunds.refundOf(s.invoices[op.index]!.tradeId!, { amount: fmt(op.amount), reason: "model" })
            )
            // (d): a refund above what its trade, its invoice or its cycle still holds is refused
            if (op.amount > refundableOf(s, s.invoices[op.index]!)) {
              const refused = yield* Effect.flip(attempt)
              expect((refused as { _tag?: string })._tag, where()).toBe("RefundRefused")
              break
            }
            const refund = yield* attempt
            expect(refund.refund_status, where()).toBe("succeeded")
            refundOfInvoice(s, s.invoices[op.index]!, op.amount)
            yield* cVerify(s)
            break
          }
        }
      })
  })
