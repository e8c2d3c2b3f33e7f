/**
 * The usage of a metered item an item change removes (or moves to another price) before its
 * period ends: rated at once at the version in force until then and kept on the record as one
 * `usage` line, which the next renewal bills beside its own lines and removes — whatever the
 * change's proration, so no recorded unit is lost or billed twice (docs/decisions.md, "Issue 33 —
 * a metered item's usage is never lost").
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import * as Invoicing from "../invoices/Invoicing.js"
import type * as Entities from "../kernel/Entities.js"
import { msOf } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { paidIndex } from "./SubscriptionTerms.js"

const isMetered = (x: Entities.ItemTerm) => x.version.billing_dimension === "usage"

/**
 * The record after an item change committed now (`next`, from `before`) with the usage of the
 * metered item it removed or repriced kept as a line for the next renewal, and the accrued usage
 * started again from 0. Unchanged when the metered item stays as it was, when there was none, or
 * during a trial (trial usage is not billed).
 *
 * @example
 * keepRemovedUsage(teamWithCalls, withoutCalls, jan16).kept_usage // [{ description: "API calls usage (1234 calls)", amount: "2.23", … }]
 * @since 0.1.0
 */
export const keepRemovedUsage = (
  before: Entities.SubscriptionRecord,
  next: Entities.SubscriptionRecord,
  at: number
): Entities.SubscriptionRecord => {
  const item = before.extra_items.find(isMetered)
  if (item === undefined) return next
  const kept = next.extra_items.some((x) => x.id === item.id && x.price_version_id === item.price_version_id)
  const paidCycles = paidIndex(before, before.subscription.cycle_index)
  if (kept || paidCycles < 0) return next
  const s = before.subscription
  const draft = Invoicing.convertDraft(
    Result.getOrThrow(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: item.version,
        cycle_index: s.cycle_index,
        paidCycles,
        quantity: 1n,
        usage: BigInt(before.accrued_usage),
        existing: []
      })
    ),
    before.fx_rate,
    before.currency
  )
  const line = draft.lines.find((l) => l.kind === "usage")
  if (line === undefined) return { ...next, accrued_usage: "0" }
  return {
    ...next,
    accrued_usage: "0",
    kept_usage: [
      ...(next.kept_usage ?? []),
      {
        cycle_index: s.cycle_index,
        description: line.description,
        units: line.quantity.toString(),
        amount: Money.format(line.amount),
        start: s.current_period_start !== null ? msOf(s.current_period_start) : at,
        end: at
      }
    ]
  }
}

/**
 * The invoice lines of a record's kept usage ({@link keepRemovedUsage}), in the settlement
 * currency, each with its period.
 *
 * @since 0.1.0
 */
export const keptLines = (rec: Entities.SubscriptionRecord): ReadonlyArray<Invoicing.Line> =>
  (rec.kept_usage ?? []).map((k) => ({
    kind: "usage",
    description: k.description,
    quantity: BigInt(k.units),
    amount: Result.getOrThrow(Money.parse(k.amount, rec.currency)),
    span: { start: k.start, end: k.end }
  }))
