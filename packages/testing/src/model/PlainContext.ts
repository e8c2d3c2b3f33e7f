/**
 * What every operation of the plain merchants runs with in a model run: the engine's services,
 * and the checks after each step — a subscription and its newest invoices against the model,
 * every invoice at the end, and the refusals (a conflict, a change a schedule governs). One
 * operation kind's handler lives in `model/ops/<area>.ts` and takes this context.
 * Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import {
  Billing,
  Checkout,
  CustomerBalances,
  type Invoice,
  InvoiceActions,
  InvoiceCredits,
  ItemChanges,
  Metering,
  PriceChanges,
  Refunds,
  Renewals,
  SandboxClock,
  Schedules,
  SessionPayments,
  Store,
  type Subscription,
  Subscriptions
} from "@recur/core"
import { DateTime, Effect } from "effect"
import { engineShape, invoicesOfSub, type Op, shape } from "./Operations.js"
import { collects, fmt, givesBack, heldOf, type MMerchant, type MSub, roomOf, statusOf, unbilled } from "./Reference.js"
import { ledgerMatches } from "./BalanceCheck.js"

/** The net of an invoice's proration lines (minor units): what pending changes it billed. */
const pendingLines = (inv: Invoice.Invoice) =>
  inv.lines
    .filter((l) => l.kind === "proration_credit" || l.kind === "proration_charge")
    .reduce((a, l) => a + BigInt(l.amount.replace(".", "")), 0n)

/** The price id of the model's price `index` for the subscription (its family, its interval). */
export const priceIdOf = (s: MSub, index: number) =>
  s.usage ? s.merchant.usage[index]! : s.months === 12 ? s.merchant.yearly : s.merchant.flat[index]!

/** The engine's services a plain operation uses, and the checks after it. */
export const plainContext = (merchants: ReadonlyArray<MMerchant>, where: () => string) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const storage = yield* Store.Storage
    const services = {
      billing,
      sessionPayments: yield* SessionPayments.SessionPayments,
      checkout: yield* Checkout.Checkout,
      sandboxClock: yield* SandboxClock.SandboxClock,
      subsService: yield* Subscriptions.Subscriptions,
      priceChanges: yield* PriceChanges.PriceChanges,
      itemChanges: yield* ItemChanges.ItemChanges,
      schedules: yield* Schedules.Schedules,
      refunds: yield* Refunds.Refunds,
      metering: yield* Metering.Metering,
      invoiceCredits: yield* InvoiceCredits.InvoiceCredits,
      customerBalances: yield* CustomerBalances.CustomerBalances,
      renewals: yield* Renewals.Renewals,
      invoiceActions: yield* InvoiceActions.InvoiceActions
    }

    /**
     * Every invoice of a subscription of the merchant with a grace period against the model's,
     * status and number included: a draft is unnumbered, a finalised one numbered (numbers are
     * taken at finalisation), a voided draft never numbered.
     */
    const verifyDrafts = (s: MSub) =>
      Effect.gen(function* () {
        const got = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
        expect(
          got.map((i) => [...engineShape(i), i.biz_status, i.number === null]),
          where()
        ).toEqual(s.invoices.map((i) => [...shape(i), statusOf(i), i.draftUntil !== undefined || i.voided === true]))
      })

    /** The engine's subscription and newest invoices against the model's. */
    const verify = (s: MSub) =>
      Effect.gen(function* () {
        const fresh = s.invoices.length - s.checked
        const got = yield* invoicesOfSub(billing, s.merchant.id, s.id, fresh + 1)
        const expected = s.invoices.slice(s.checked).map(shape)
        expect(got.slice(0, fresh).reverse().map(engineShape), where()).toEqual(expected)
        if (s.checked > 0)
          expect(got[fresh] ? engineShape(got[fresh]) : undefined, where()).toEqual(shape(s.invoices[s.checked - 1]!))
        else expect(got.length, where()).toBe(fresh)
        // pending proration lines billed exactly once: each period-end renewal carries the lines
        // the model billed with it (their net), none when it billed none
        got
          .slice(0, fresh)
          .reverse()
          .forEach((inv, k) => {
            const billed = s.invoices[s.checked + k]!.pendingBilled
            if (billed !== undefined)
              expect(fmt(pendingLines(inv)), `${where()}: pending proration lines of ${inv.invoice_id}`).toBe(
                fmt(billed)
              )
          })
        s.checked = s.invoices.length
        // one invoice per cycle: one initial invoice, and no cycle renewed twice (a usage
        // renewal bills the cycle that ended, the others the cycle they open)
        const renewed = s.invoices.filter((i) => i.type === "renewal").map((i) => i.cycle)
        expect(
          [s.invoices.filter((i) => i.type === "initial").length, new Set(renewed).size],
          `${where()}: cycles billed twice in ${renewed.join(",")}`
        ).toEqual([1, renewed.length])
        // the balance is never negative (it only holds what was given back and not spent)
        expect(s.credit >= 0n, `${where()}: balance ${fmt(s.credit)}`).toBe(true)
        const sub: Subscription.Subscription = yield* billing.getSubscription(s.merchant.id, s.id)
        expect(
          [sub.status, sub.price_id, sub.quantity, sub.credit_balance, sub.cycle_index, sub.cancel_at_period_end],
          where()
        ).toEqual([s.status, priceIdOf(s, s.price), s.qty.toString(), fmt(s.credit), s.cycle, s.cancelAtEnd])
        // the customer balance ledger: consistent, the sum of its subscriptions' shares, and
        // (one subscription a customer here) the model's credit
        yield* ledgerMatches(storage, s.merchant.id, sub.customer_id, where, s.credit)
        if (s.status !== "canceled" && sub.current_period_end !== null)
          expect(DateTime.toEpochMillis(sub.current_period_end), where()).toBe(s.end)
        if (s.merchant.grace > 0) yield* verifyDrafts(s)
        // never more back than in: refunded + the balance still held ≤ the money collected and
        // the manual credits granted (the invoices, equal to the engine's above; a balance spent
        // was collected again; a credit note moves what was collected onto the balance)
        const collected = s.invoices.filter((i) => !givesBack(i) && !unbilled(i)).reduce((a, i) => a + i.amount, 0n)
        const refunded = s.invoices.filter((i) => i.type === "refund").reduce((a, i) => a + i.amount, 0n)
        expect(
          refunded + s.credit <= collected + s.granted,
          `${where()}: ${refunded} + ${s.credit} > ${collected} + ${s.granted} granted`
        ).toBe(true)
        // per invoice and per cycle: refunded + credited (credit notes, downgrade credits) +
        // moved out ≤ what it was paid (cash, credit applied, credit moved in)
        for (const [k, i] of s.invoices.entries())
          if (collects(i))
            expect(roomOf(i) >= 0n, `${where()}: invoice ${k} of ${s.id} gave back more than it was paid`).toBe(true)
        for (const cycle of new Set(s.invoices.map((i) => i.cycle)))
          expect(heldOf(s, cycle) >= 0n, `${where()}: cycle ${cycle} of ${s.id} gave back more than it collected`).toBe(
            true
          )
      })

    /**
     * Every invoice of every subscription, statuses included; what the engine's refunds and
     * credit notes of each invoice give back never more than it was paid; and each merchant's
     * numbers gapless in each series (invoices, credit notes) — a voided draft took none.
     */
    const verifyAll = Effect.forEach(
      merchants,
      (m) =>
        Effect.gen(function* () {
          const numbers = { invoice: [] as Array<number>, credit_note: [] as Array<number> }
          for (const s of m.subs) {
            const got = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
            expect(
              got.map((i) => [...engineShape(i), i.biz_status]),
              where()
            ).toEqual(s.invoices.map((i) => [...shape(i), statusOf(i)]))
            got.forEach((inv, k) => {
              const i = s.invoices[k]!
              if (inv.number !== null)
                numbers[inv.invoice_type === "refund" ? "credit_note" : "invoice"].push(
                  Number(inv.number.split("-").at(-1))
                )
              if (givesBack(i)) return
              const back = got
                .filter((d) => d.invoice_type === "refund" && d.original_invoice_id === inv.invoice_id)
                .reduce((a, d) => a + BigInt(d.amount.replace(".", "")), 0n)
              expect(
                back <= i.amount + i.applied + i.movedIn,
                `${where()}: ${inv.invoice_id} gave back ${fmt(back)} of ${fmt(i.amount + i.applied + i.movedIn)}`
              ).toBe(true)
            })
          }
          for (const [series, ns] of Object.entries(numbers))
            expect(
              ns.sort((a, b) => a - b),
              `${where()}: ${m.id} ${series} numbers gapless`
            ).toEqual(ns.map((_, k) => k + 1))
        }),
      { discard: true }
    )

    const conflict = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(effect)
        expect(["SubscriptionActionRefused", "SubscriptionNotLive"], where()).toContain((e as { _tag?: string })._tag)
      })

    /** A change refused because a schedule governs the subscription. */
    const governed = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(effect)
        expect((e as { _tag?: string })._tag, where()).toBe("StateConflict")
      })

    return {
      services,
      verify,
      verifyDrafts,
      verifyAll,
      conflict,
      governed,
      where,
      merchants,
      tally: { events: 0, itemsRefused: new Map<string, number>(), credited: 0n, adjusted: 0, previewed: 0, voided: 0 }
    }
  })

/**
 * The context of a plain operation: the services, the checks, `where` (the run's trail for a
 * failure) and `tally` (usage events recorded, item changes refused by why, credited by credit
 * notes, adjustments made, drafts compared with their preview, drafts voided).
 */
export type PlainContext = Effect.Success<ReturnType<typeof plainContext>>

/** The handler of one operation kind: `n` is the operation's number in the run. */
export type Handler<T extends Op["_tag"]> = (
  op: Extract<Op, { readonly _tag: T }>,
  ctx: PlainContext,
  n: number
) => Effect.Effect<void, unknown, never>

/** A handler for every operation kind (`PlainRun.handlers`). */
export type Handlers = { readonly [T in Op["_tag"]]: Handler<T> }
