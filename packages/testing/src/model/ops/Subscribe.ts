/**
 * The model run's operations of one area, on the engine and on the model: a checkout paid, one
 * subscription on a flat or usage price (a flat one of 4 or 5 seats with the add-on as a second
 * item, one of 3 seats anchored on the 1st of the month; issue 33).
 * Each handler checks the subscription against the model after its step.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import { Checkout, Ids } from "@recur/core"
import { Effect } from "effect"
import { card } from "../Operations.js"
import type { Handler } from "../PlainContext.js"
import { addMonths, addonMinor, fullOf, issue, type MSub, openCycle, stubShare } from "../Reference.js"

export const subscribe: Handler<"Subscribe"> = (op, ctx, n) =>
  Effect.gen(function* () {
    const { sessionPayments, checkout } = ctx.services
    const { verify, where } = ctx
    const m = op.m
    const priceId = op.usage ? m.usage[op.price]! : m.flat[op.price]!
    // a flat subscription of 4 or 5 seats also takes the add-on, 1 or 2 of it, as a
    // second item (issue 33): no draw of its own, so the run's sequence is unchanged
    const addonQty = !op.usage && op.qty >= 4n ? op.qty - 3n : 0n
    const base = Checkout.sessionOf(priceId, { payerId: `payer-${n}` }, { quantity: op.usage ? 1n : BigInt(op.qty) })
    // an anchored one (issue 33, 5): its periods start on the 1st of the month from the next one
    const now = new Date(m.now)
    const anchor = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)
    const command = op.anchored ? { ...base, billingAnchor: { anchor, behavior: "create_prorations" as const } } : base
    const session = yield* checkout.createSession(
      m.id,
      addonQty > 0n
        ? {
            ...command,
            extraItems: [
              {
                priceId: Ids.PriceId.make(m.addon),
                quantity: addonQty,
                editable: false,
                min: null,
                max: null
              }
            ]
          }
        : command
    )
    const paid = yield* sessionPayments.paySession(m.id, session.session_id, card)
    expect(paid.status, where()).toBe("succeeded")
    const id = paid.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))
    const s: MSub = {
      id,
      merchant: m,
      usage: op.usage,
      status: "active",
      price: op.price,
      scheduled: null,
      qty: op.qty,
      pending: null,
      anchor: op.anchored ? anchor : m.now,
      anchorCycle: op.anchored ? 1 : 0,
      cycle: 0,
      start: m.now,
      end: op.anchored ? anchor : addMonths(m.now, 1),
      basis: 0n,
      credit: 0n,
      accrued: 0n,
      cancelAtEnd: false,
      invoices: [],
      checked: 0,
      segments: null,
      lines: 1,
      addon: addonMinor * addonQty,
      prorations: [],
      months: 1,
      granted: 0n
    }
    s.basis = fullOf(s, op.price, op.qty)
    issue(s, "initial", 0, op.anchored ? stubShare(m.policy, s.basis, anchor, m.now) : s.basis)
    openCycle(s, s.start)
    // the short period is charged as a share of a whole one: no identity of its own
    if (op.anchored) s.segments = null
    m.subs.push(s)
    yield* verify(s)
  })
