/**
 * The model run's operations of one area, on the engine and on the model: the customer balance
 * (issue 34) — credit notes of paid invoices to the balance, manual adjustments, and a renewal's
 * draft voided in its grace period.
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { engineShape, invoicesOfSub, shape } from "../Operations.js"
import type { Handler } from "../PlainContext.js"
import { fmt, issue } from "../Reference.js"

/**
 * A credit note to the balance of part of a paid invoice: a `refund` document of the cycle, no
 * money moved; the invoice's room and its cycle's hold shrink as a refund's would, and the
 * subscription's credit grows by the amount (its next invoice applies it).
 */
export const creditNote: Handler<"CreditNote"> = (op, ctx) =>
  Effect.gen(function* () {
    const { billing, invoiceCredits } = ctx.services
    const { verify, where } = ctx
    const s = op.s
    const all = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
    const target = all[op.index]!
    expect(engineShape(target), where()).toEqual(shape(s.invoices[op.index]!))
    const note = (yield* invoiceCredits.create(s.merchant.id, {
      invoice_id: target.invoice_id,
      amount: fmt(op.amount),
      method: "credit_balance",
      reason: "model"
    })).credit_note!
    expect([note.invoice_type, note.amount, note.original_invoice_id], where()).toEqual([
      "refund",
      fmt(op.amount),
      target.invoice_id
    ])
    const inv = s.invoices[op.index]!
    inv.credited += op.amount
    s.credit += op.amount
    issue(s, "credit_note", inv.cycle, op.amount)
    s.segments = inv.cycle === s.cycle ? null : s.segments
    ctx.tally.credited += op.amount
    yield* verify(s)
  })

/** A manual credit or debit of the subscription's customer's balance, held as its share. */
export const adjust: Handler<"Adjust"> = (op, ctx) =>
  Effect.gen(function* () {
    const { billing, customerBalances } = ctx.services
    const { verify, where } = ctx
    const s = op.s
    const sub = yield* billing.getSubscription(s.merchant.id, s.id)
    const entry = yield* customerBalances.adjust(s.merchant.id, {
      customer_id: sub.customer_id,
      amount: fmt(op.amount),
      currency: "USD",
      reason: "model"
    })
    expect([entry.amount, entry.source_type, entry.subscription_id], where()).toEqual([
      fmt(op.amount),
      "manual_adjustment",
      s.id
    ])
    s.credit += op.amount
    s.granted += op.amount
    ctx.tally.adjusted++
    yield* verify(s)
  })

/**
 * A renewal's draft voided in its grace period: it takes no number and is never charged, the
 * cycle bills nothing, and the credit it applied returns to the subscription's balance.
 */
export const voidDraft: Handler<"VoidDraft"> = (op, ctx) =>
  Effect.gen(function* () {
    const { billing, invoiceActions } = ctx.services
    const { verify, where } = ctx
    const s = op.s
    const all = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
    const target = all[op.index]!
    expect([...engineShape(target), target.biz_status], where()).toEqual([...shape(s.invoices[op.index]!), "draft"])
    const voided = yield* invoiceActions.voidInvoice(s.merchant.id, target.invoice_id)
    expect([voided.biz_status, voided.number], where()).toEqual(["void", null])
    const inv = s.invoices[op.index]!
    inv.draftUntil = undefined
    inv.voided = true
    s.credit += inv.applied
    s.segments = null
    ctx.tally.voided++
    yield* verify(s)
  })
