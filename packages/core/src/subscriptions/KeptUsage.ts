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
import * as Price from "../catalog/Price.js"
import type * as Entities from "../kernel/Entities.js"
import { msOf } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { paidIndex } from "./SubscriptionTerms.js"

const isMetered = (x: Entities.ItemTerm) => Price.isCountMetered(x.version)

/**
 * The record after an item change committed now (`next`, from `before`, whose base item's version
 * was `base`) with the usage of the metered item it removed or repriced — an add-on or the base
 * item — kept as a line for the next renewal, and the accrued usage started again from 0.
 * Unchanged when the metered item stays as it was, when there was none, or during a trial (trial
 * usage is not billed).
 *
 * @example
 * keepRemovedUsage(teamWithCalls, withoutCalls, teamVersion, jan16).kept_usage // [{ description: "API calls usage (1234 calls)", amount: "2.23", … }]
 * @since 0.1.0
 */
export const keepRemovedUsage = (
  before: Entities.SubscriptionRecord,
  next: Entities.SubscriptionRecord,
  base: Price.PriceVersion,
  at: number
): Entities.SubscriptionRecord => {
  const kept = removedUsage(before, next, base, at)
  if (kept === undefined) return next
  if (kept === null) return { ...next, accrued_usage: "0" }
  return { ...next, accrued_usage: "0", kept_usage: [...(next.kept_usage ?? []), kept] }
}

/**
 * The usage line {@link keepRemovedUsage} keeps for `before`'s metered item (the base item, of
 * version `base`, or an add-on) when a change now makes `next`: undefined when nothing is kept (the item stays as it was, there was none, or a
 * trial), null when the item goes with no usage line to keep. An item change's quote shows it
 * (`kept_usage`).
 *
 * @since 0.1.0
 */
export const removedUsage = (
  before: Entities.SubscriptionRecord,
  next: Entities.SubscriptionRecord,
  base: Price.PriceVersion,
  at: number
): Entities.KeptUsage | null | undefined => {
  if (paidIndex(before, before.subscription.cycle_index) < 0) return undefined
  // a metered base item: its usage so far is rated at its version until now when the change
  // moves the base item to another version (the renewal would rate it at the new one)
  if (base.billing_dimension === "usage") {
    if (next.subscription.price_version_id === before.subscription.price_version_id) return undefined
    return usageSoFar(before, base, at) ?? null
  }
  const item = before.extra_items.find(isMetered)
  if (item === undefined) return undefined
  const kept = next.extra_items.some((x) => x.id === item.id && x.price_version_id === item.price_version_id)
  if (kept) return undefined
  return usageSoFar(before, item.version, at) ?? null
}

/**
 * The usage accrued so far in `rec`'s current period rated at `version` (the metered item's,
 * base or not, in force) as a kept line, its period the period's start to `end`. Undefined
 * during a trial (trial usage is not billed) or without a usage line.
 */
const usageSoFar = (
  rec: Entities.SubscriptionRecord,
  version: Price.PriceVersion,
  end: number
): Entities.KeptUsage | undefined => {
  const s = rec.subscription
  const paidCycles = paidIndex(rec, s.cycle_index)
  if (paidCycles < 0) return undefined
  const draft = Invoicing.convertDraft(
    Result.getOrThrow(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: version,
        cycle_index: s.cycle_index,
        paidCycles,
        quantity: 1n,
        usage: BigInt(rec.accrued_usage),
        existing: []
      })
    ),
    rec.fx_rate,
    rec.currency
  )
  const line = draft.lines.find((l) => l.kind === "usage")
  if (line === undefined) return undefined
  return {
    cycle_index: s.cycle_index,
    description: line.description,
    units: line.quantity.toString(),
    amount: Money.format(line.amount),
    start: s.current_period_start !== null ? msOf(s.current_period_start) : end,
    end
  }
}

/**
 * The usage a subscription that ends now still owes, as the lines of its final invoice: the
 * metered item's usage of the period so far (`base` is the base item's version, metered or not)
 * rated at the item and version in force, to `end` — none when no unit was recorded, or in a
 * trial — then the usage kept by earlier item changes ({@link keptLines}). A cancel now bills
 * them (`FinalInvoice`), and so does the period's end of a subscription canceled then, so every
 * recorded unit is billed once (docs/decisions.md, "Issue 33 — a canceled subscription bills its
 * usage").
 *
 * @example
 * finalUsageLines(teamWithCalls, teamVersion, jan20) // [{ kind: "usage", description: "API calls usage (1234 calls)", … }]
 * @since 0.1.0
 */
export const finalUsageLines = (
  rec: Entities.SubscriptionRecord,
  base: Price.PriceVersion,
  end: number
): ReadonlyArray<Invoicing.Line> => {
  const version = base.billing_dimension === "usage" ? base : rec.extra_items.find(isMetered)?.version
  const so = version !== undefined && BigInt(rec.accrued_usage) > 0n ? usageSoFar(rec, version, end) : undefined
  return keptLines({ ...rec, kept_usage: [...(so !== undefined ? [so] : []), ...(rec.kept_usage ?? [])] })
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
