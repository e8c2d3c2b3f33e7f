/**
 * The end of a model run: every commercial invoice (statuses too) and every customer's
 * invariants against the engine, the run's one-line summary, and — for the bounded default runs —
 * the check that every operation kind ran. Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import type { Billing } from "@recur/core"
import { Effect } from "effect"
import type { CInvoice, CMerchant } from "./Commercial.js"
import { cEngineShape, type commercialChecks, cShape } from "./CommercialChecks.js"
import { invoicesOfSub } from "./Operations.js"
import type { MMerchant } from "./Reference.js"

/** Every operation kind, plain and commercial: a bounded default run fails unless each ran. */
export const KINDS = [
  ...["Subscribe", "Advance", "ChangePrice", "ChangeQuantity", "ChangeItems", "Cancel", "RevokeCancel", "Pause"],
  ...[
    "Resume",
    "Refund",
    "Usage",
    "CreditNote",
    "Adjust",
    "CSubscribe",
    "CAdvance",
    "CChange",
    "CApplyDiscount",
    "CRemoveDiscount"
  ],
  ...["CMove", "CAddRate", "CArchiveRate", "CRefund", "CDecline", "CRecover", "CCancel"]
] as const

/** Every commercial invoice (statuses too) and every customer's invariants, on the engine. */
export const verifyCommercial = (
  billing: Billing.Billing["Service"],
  cMerchants: ReadonlyArray<CMerchant>,
  invariants: ReturnType<typeof commercialChecks>["invariants"],
  whereAll: () => string
) =>
  Effect.gen(function* () {
    const cStatus = (i: CInvoice, engine: string) =>
      i.type === "refund" || i.amount === 0n || !i.paid
        ? engine
        : i.refunded >= i.amount
          ? "refunded"
          : i.refunded > 0n
            ? "partially_refunded"
            : "success"
    for (const m of cMerchants) {
      for (const s of m.subs) {
        const got = (yield* invoicesOfSub(billing, m.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
        expect(
          got.map((i) => [...cEngineShape(i), i.biz_status]),
          whereAll()
        ).toEqual(s.invoices.map((i, k) => [...cShape(i), cStatus(i, got[k]?.biz_status ?? "")]))
      }
      for (const c of m.customers) yield* invariants(c.subs, `customer ${c.id}`)
    }
  })

/** The run's counts: subscriptions, invoices, the plain subscriptions with a second item, renewals with pending lines. */
export const countsOf = (merchants: ReadonlyArray<MMerchant>, cMerchants: ReadonlyArray<CMerchant>) => ({
  invoices:
    merchants.reduce((a, m) => a + m.subs.reduce((b, s) => b + s.invoices.length, 0), 0) +
    cMerchants.reduce((a, m) => a + m.subs.reduce((b, s) => b + s.invoices.length, 0), 0),
  subscriptions: merchants.reduce((a, m) => a + m.subs.length, 0) + cMerchants.reduce((a, m) => a + m.subs.length, 0),
  withAddon: merchants.reduce((a, m) => a + m.subs.filter((s) => s.addon > 0n).length, 0),
  /** Renewals that billed pending proration lines (each checked line by line against the engine's). */
  billedPending: merchants.reduce(
    (a, m) => a + m.subs.reduce((b, s) => b + s.invoices.filter((i) => (i.pendingBilled ?? 0n) !== 0n).length, 0),
    0
  )
})

/** Fails unless every operation kind ran at least once and some subscription has a second item. */
export const expectEveryOperation = (ran: ReadonlyMap<string, number>, withAddon: number) => {
  expect(
    KINDS.filter((k) => !ran.has(k)),
    "operations that never ran"
  ).toEqual([])
  expect(withAddon, "subscriptions with a second item (issue 33)").toBeGreaterThan(0)
}
