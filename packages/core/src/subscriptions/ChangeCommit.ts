/**
 * What a committed price or quantity change writes into the subscription's record, as rules:
 * a quantity pending for the next cycle, the move to the new price, and each outcome's ledger
 * and balance (an upgrade settled by the credit or carried, a refund owed, a credit to the
 * balance). `ChangeSettlement.commit` (for price and item changes) issues the invoices and trades;
 * the services save the record.
 *
 * @since 0.1.0
 */
import { Option, Result } from "effect"
import type { PriceVersion } from "../catalog/Price.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as GiveBack from "../invoices/GiveBack.js"
import type * as Entities from "../kernel/Entities.js"
import { dt, msOf } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import * as ChangeQuote from "./ChangeQuote.js"
import * as Subscription from "./Subscription.js"

/**
 * The record with `quantity` pending from the next cycle on, taking effect at `effectiveAt`.
 *
 * @since 0.1.0
 */
export const withPendingQuantity = (
  rec: Entities.SubscriptionRecord,
  quantity: bigint,
  effectiveAt: number
): Entities.SubscriptionRecord => {
  const pending = rec.subscription.pending_change
  return {
    ...rec,
    subscription: new Subscription.Subscription({
      ...rec.subscription,
      pending_change: new Subscription.PendingChange({
        quantity: quantity.toString(),
        cycle_index: rec.subscription.cycle_index + 1,
        version: (pending?.version ?? 0) + 1,
        effective_at: dt(effectiveAt)
      })
    })
  }
}

/**
 * The record with `quantity` pending from the next cycle on for its item `itemId` after the base
 * one (the base item's is {@link withPendingQuantity}), taking effect at `effectiveAt`; the
 * item's current quantity asked again drops what was pending. The next renewal bills it and
 * makes it the item's quantity (`SubscriptionItems.nextCycleItems`).
 *
 * @since 0.1.0
 */
export const withItemPendingQuantity = (
  rec: Entities.SubscriptionRecord,
  itemId: string,
  quantity: bigint,
  effectiveAt: number
): Entities.SubscriptionRecord => ({
  ...rec,
  extra_items: rec.extra_items.map((item) => {
    if (item.id !== itemId) return item
    const pending = item.pending_change ?? null
    return {
      ...item,
      pending_change:
        quantity.toString() === item.quantity
          ? null
          : new Subscription.PendingChange({
              quantity: quantity.toString(),
              cycle_index: rec.subscription.cycle_index + 1,
              version: (pending?.version ?? 0) + 1,
              effective_at: dt(effectiveAt)
            })
    }
  })
})

/**
 * Whether anything waits for the subscription's next cycle: a scheduled price or a pending
 * quantity of the base item, of another item (a scheduled version, a pending quantity), or an
 * item set (`next_cycle`).
 *
 * @since 0.1.0
 */
export const hasPending = (rec: Entities.SubscriptionRecord): boolean =>
  rec.scheduled_price_version_id !== null ||
  rec.subscription.pending_change !== null ||
  (rec.pending_items ?? null) !== null ||
  rec.extra_items.some((x) => (x.pending_change ?? null) !== null || (x.scheduled_version ?? null) !== null)

/**
 * The record with nothing waiting for its next cycle (see {@link hasPending}): what a revoke of the
 * pending change leaves — the next renewal bills the items as they are.
 *
 * @since 0.1.0
 */
export const withoutPending = (rec: Entities.SubscriptionRecord): Entities.SubscriptionRecord => ({
  ...rec,
  scheduled_price_version_id: null,
  pending_items: null,
  extra_items: rec.extra_items.map((x) => ({ ...x, pending_change: null, scheduled_version: null })),
  subscription: new Subscription.Subscription({ ...rec.subscription, pending_change: null }, { disableChecks: true })
})

/**
 * The record on `target` from now: the discounts outside the new price's products ended (only
 * `kept` stay), no scheduled change, and the proration basis moved to `basis` when there is one
 * (proration none keeps it: the remainder stays paid at the old plan's rate).
 *
 * @since 0.1.0
 */
export const movedTo = (
  next: Entities.SubscriptionRecord,
  target: PriceVersion,
  kept: ReadonlyArray<Entities.DiscountTerm>,
  basis: Option.Option<string>
): Entities.SubscriptionRecord => ({
  ...next,
  discounts: kept,
  scheduled_price_version_id: null,
  plan_basis: Option.getOrElse(basis, () => next.plan_basis),
  subscription: new Subscription.Subscription(
    {
      ...next.subscription,
      price_id: target.id,
      price_version_id: target.price_version_id,
      price_type: target.price_type,
      billing_cycle_unit: target.price_plan?.billing_cycle_unit ?? next.subscription.billing_cycle_unit,
      quantity_tiers: target.quantity_tiers,
      usage_tiers: target.usage_tiers
    },
    { disableChecks: true }
  )
})

/**
 * The period an upgrade's invoice covers: the rest of the cycle, from `now`.
 *
 * @since 0.1.0
 */
export const restOfCycle = (rec: Entities.SubscriptionRecord, now: number) =>
  rec.subscription.current_period_end !== null
    ? { start: now, end: msOf(rec.subscription.current_period_end) }
    : undefined

/** The record with `by` (in minor units, negative for a debit) added to the customer's balance. */
const withBalance = (next: Entities.SubscriptionRecord, by: bigint): Entities.SubscriptionRecord => {
  const cur = next.currency
  const credit = Result.getOrThrow(Money.parse(next.subscription.credit_balance, cur, { allowNegative: true }))
  return {
    ...next,
    subscription: new Subscription.Subscription(
      { ...next.subscription, credit_balance: Money.format(Money.make(credit.amount + by, cur)) },
      { disableChecks: true }
    )
  }
}

/**
 * An upgrade whose credit covers the charge and more, settled at 0.00 by invoice `invoiceId`:
 * the rest (`owedBack`) is credited against it and goes to the balance, and the old plan's
 * credit `shares` move into it.
 *
 * @since 0.1.0
 */
export const creditedUpgrade = (
  next: Entities.SubscriptionRecord,
  cycleIndex: number,
  shares: ReadonlyArray<GiveBack.Share>,
  owedBack: Money.Money,
  invoiceId: string
): Entities.SubscriptionRecord =>
  withBalance(
    CycleLedger.withMoved(
      CycleLedger.withCredited(next, cycleIndex, owedBack, invoiceId),
      cycleIndex,
      shares,
      invoiceId
    ),
    owedBack.amount
  )

/**
 * An upgrade under the processor's minimum charge, settled by invoice `invoiceId` by carrying
 * `carried` to the customer's next invoice (a debit on the balance); the old plan's credit
 * `shares` move into it.
 *
 * @since 0.1.0
 */
export const carriedUpgrade = (
  next: Entities.SubscriptionRecord,
  cycleIndex: number,
  shares: ReadonlyArray<GiveBack.Share>,
  carried: Money.Money,
  invoiceId: string
): Entities.SubscriptionRecord =>
  withBalance(CycleLedger.withMoved(next, cycleIndex, shares, invoiceId), -carried.amount)

/**
 * A refund owed from the cycle's payments under `key`: recorded with the change, paid out right
 * after it commits (or by the `refund_owed` work item), each paid invoice's share with the tax
 * the quote stated.
 *
 * @since 0.1.0
 */
export const withOwedRefund = (
  next: Entities.SubscriptionRecord,
  key: string,
  cycleIndex: number,
  back: Money.Money,
  shares: ReadonlyArray<GiveBack.Share>
): Entities.SubscriptionRecord => ({
  ...next,
  owed_refunds: [
    ...next.owed_refunds,
    { key, cycle_index: cycleIndex, owed: Money.format(back), shares: CycleLedger.storedShares(shares) }
  ]
})

/**
 * A downgrade's `back` credited to the balance, against the invoices it was given back from (as
 * the quote took it).
 *
 * @since 0.1.0
 */
export const creditedBack = (
  next: Entities.SubscriptionRecord,
  cycleIndex: number,
  shares: ReadonlyArray<GiveBack.Share>,
  back: Money.Money
): Entities.SubscriptionRecord =>
  withBalance(
    shares.reduce((r, sh) => CycleLedger.withCredited(r, cycleIndex, sh.amount, sh.invoice_id), next),
    back.amount
  )

/**
 * A `create_prorations` change's `lines` added to the record's pending proration lines, and the
 * credit's part from the cycle's payments (`shares`) credited against the invoices it is given
 * back from — so a later refund of the cycle cannot take it again.
 *
 * @since 0.1.0
 */
export const withPendingProrations = (
  next: Entities.SubscriptionRecord,
  cycleIndex: number,
  shares: ReadonlyArray<GiveBack.Share>,
  lines: ReadonlyArray<Entities.PendingProration>
): Entities.SubscriptionRecord => ({
  ...shares.reduce((r, sh) => CycleLedger.withCredited(r, cycleIndex, sh.amount, sh.invoice_id), next),
  pending_prorations: [...next.pending_prorations, ...lines]
})

/**
 * The record of a subscription that ends at its period's end (a cancel then, or its term
 * completed) with pending proration lines no invoice will bill: they are removed — a pending
 * charge is never billed, and what the pending credits exceed the pending charges by (already
 * given back from the cycle's payments, in the ledger) goes to the credit balance with the
 * exclusive tax it was paid with, in proportion, as a renewal would credit it. (A cancel now
 * bills them on a final invoice: `FinalInvoice`.)
 *
 * @since 0.1.0
 */
export const endedWithPending = (rec: Entities.SubscriptionRecord): Entities.SubscriptionRecord => {
  if (rec.pending_prorations.length === 0) return rec
  const net = ChangeQuote.pendingNet(rec)
  if (net >= 0n) return { ...rec, pending_prorations: [] }
  const paid = ChangeQuote.pendingPaid(rec)
  const rest = Money.make(-net, rec.currency)
  const part = rest.amount < paid.paid.amount ? rest : paid.paid
  const tax =
    paid.paid.amount > 0n
      ? GiveBack.partOf(paid.tax_lines, part, paid.paid).reduce((a, t) => (t.inclusive ? a : a + t.amount.amount), 0n)
      : 0n
  return withBalance({ ...rec, pending_prorations: [] }, rest.amount + tax)
}
