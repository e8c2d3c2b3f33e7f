/**
 * Quantities a customer changes in the customer portal, where the merchant allows it
 * (`PortalSettings.adjust_quantities`: prices, each with a minimum and a maximum): the items of a
 * live subscription at those prices, the preview of a new quantity (the next invoice before and
 * after) and the change itself, which applies from the next cycle — the base item's through the
 * engine's quantity change (`PriceChanges`, pending for the next cycle), an add-on item's as its
 * own pending quantity (`ChangeCommit.withItemPendingQuantity`), each billed by the next renewal.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import * as PriceRules from "../catalog/PriceRules.js"
import type * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import type * as Invoice from "../invoices/Invoice.js"
import { msOf, nowOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Schedule from "../schedules/Schedule.js"
import * as ChangeCommit from "../subscriptions/ChangeCommit.js"
import * as PriceChanges from "../subscriptions/PriceChanges.js"
import type * as Renewals from "../subscriptions/Renewals.js"
import { baseItemId } from "../subscriptions/SubscriptionItems.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type * as Merchants from "../tenants/Merchants.js"
import type { PortalSettings, QuantityRule } from "./PortalSession.js"

/**
 * The most prices a merchant may list in `adjust_quantities`.
 *
 * @since 0.1.0
 */
export const MAX_QUANTITY_RULES = 20

/**
 * Why a list of quantity rules cannot be the merchant's settings (the entry by its index), or
 * `undefined`: at most {@link MAX_QUANTITY_RULES}, each price once, whole bounds with
 * 1 ≤ `min` ≤ `max` ≤ 999,999,999. Whether each price is one the merchant sells by quantity the
 * portal checks against the catalog.
 *
 * @example
 * ruleRefusal([{ price_id: "pri_seats", min: 5, max: 2 }]) // InvalidParameter adjust_quantities, entry 0, max
 * @since 0.1.0
 */
export const ruleRefusal = (rules: ReadonlyArray<QuantityRule>): Errors.InvalidParameter | undefined => {
  if (rules.length > MAX_QUANTITY_RULES)
    return new Errors.InvalidParameter({
      param: "adjust_quantities",
      reason: `may list at most ${MAX_QUANTITY_RULES} prices`
    })
  const most = Number(PriceRules.MAX_QUANTITY)
  for (const [i, r] of rules.entries()) {
    if (rules.findIndex((o) => o.price_id === r.price_id) !== i)
      return new Errors.InvalidParameter({
        param: "adjust_quantities",
        entry: { index: i, field: "price_id" },
        reason: "is listed twice"
      })
    if (!Number.isSafeInteger(r.min) || r.min < 1 || r.min > most)
      return new Errors.InvalidParameter({
        param: "adjust_quantities",
        entry: { index: i, field: "min" },
        reason: `must be a whole number from 1 to ${most}`
      })
    if (!Number.isSafeInteger(r.max) || r.max < r.min || r.max > most)
      return new Errors.InvalidParameter({
        param: "adjust_quantities",
        entry: { index: i, field: "max" },
        reason: `must be a whole number from min (${r.min}) to ${most}`
      })
  }
  return undefined
}

/**
 * An item whose quantity the customer may change: its id, price and name, its quantity, the
 * quantity pending for its next cycle (`null`: none), and the merchant's bounds.
 *
 * @since 0.1.0
 */
export interface QuantityOption {
  readonly item_id: string
  readonly price_id: string
  readonly name: string
  readonly quantity: string
  readonly pending_quantity: string | null
  readonly min: number
  readonly max: number
}

/**
 * The items of a subscription whose quantity the customer may change under `allowed`: those at a
 * listed price billed by quantity, when the subscription is active or trialing, not ending at
 * the period's end, governed by no schedule (a schedule decides each cycle's quantity) and with
 * no item set waiting for the next cycle (it says every item's quantity then).
 * `baseName` is the base item's price name.
 *
 * @since 0.1.0
 */
export const quantityOptions = (
  allowed: PortalSettings,
  rec: Entities.SubscriptionRecord,
  baseName: string
): ReadonlyArray<QuantityOption> => {
  const s = rec.subscription
  if (
    allowed.adjust_quantities.length === 0 ||
    (s.status !== "active" && s.status !== "trial") ||
    s.cancel_at_period_end ||
    Schedule.governs(rec.schedule ?? null) ||
    (rec.pending_items ?? null) !== null
  )
    return []
  const ruleOf = (priceId: string) => allowed.adjust_quantities.find((r) => r.price_id === priceId)
  const out: Array<QuantityOption> = []
  const base = ruleOf(s.price_id)
  if (base !== undefined && s.billing_dimension === "quantity")
    out.push({
      item_id: baseItemId(s.id),
      price_id: s.price_id,
      name: baseName,
      quantity: s.quantity,
      pending_quantity: s.pending_change?.quantity ?? null,
      min: base.min,
      max: base.max
    })
  for (const x of rec.extra_items) {
    const rule = ruleOf(x.price_id)
    if (rule === undefined || x.version.billing_dimension !== "quantity") continue
    out.push({
      item_id: x.id,
      price_id: x.price_id,
      name: x.version.price_name,
      quantity: x.quantity,
      pending_quantity: x.pending_change?.quantity ?? null,
      min: rule.min,
      max: rule.max
    })
  }
  return out
}

/**
 * A quantity change's preview: the item, the quantity asked, when it applies (the next invoice's
 * date) and the next invoice as it is and as it will be with the change (`null`: none).
 *
 * @since 0.1.0
 */
export interface QuantityPreview {
  readonly option: QuantityOption
  readonly quantity: string
  readonly effective_at: Entities.SubscriptionRecord["subscription"]["next_invoice_date"]
  readonly before: Invoice.UpcomingInvoice | null
  readonly after: Invoice.UpcomingInvoice | null
}

/**
 * Previews and changes quantities of one customer's subscriptions (the portal's service wires
 * it): `options` finds the subscription's allowed items (a `NotFound` for another customer's
 * subscription; an `InvalidParameter` naming `item_id` or `quantity` for an item or quantity
 * the merchant does not allow; a `StateConflict` while an item set waits for the next cycle).
 */
export const quantityChanges = (deps: {
  readonly storage: StorageService
  readonly merchants: Merchants.Merchants["Service"]
  readonly renewals: Renewals.Renewals["Service"]
  readonly priceChanges: PriceChanges.PriceChanges["Service"]
  readonly options: (
    merchantId: string,
    customerId: string,
    subscriptionId: string
  ) => Effect.Effect<
    {
      readonly rec: Entities.SubscriptionRecord
      readonly version: number
      readonly options: ReadonlyArray<QuantityOption>
    },
    Errors.NotFound | Errors.RecurError
  >
}) => {
  const { saveSub } = writes(deps.storage)

  /** The item and the quantity asked, checked against the merchant's bounds. */
  const target = (merchantId: string, customerId: string, subscriptionId: string, itemId: string, given: string) =>
    Effect.gen(function* () {
      const found = yield* deps.options(merchantId, customerId, subscriptionId)
      // an item set waits for the next cycle: it says every item's quantity then (as the base item's change answers)
      if ((found.rec.pending_items ?? null) !== null)
        return yield* new Errors.StateConflict({
          resource: "subscription",
          id: subscriptionId,
          state: found.rec.subscription.status,
          reason: "an item change waits for the next cycle; revoke it first (revoke-price-change)"
        })
      const option = found.options.find((o) => o.item_id === itemId)
      if (option === undefined)
        return yield* new Errors.InvalidParameter({
          param: "item_id",
          reason: "is not an item whose quantity may be changed here"
        })
      const quantity = /^[0-9]{1,9}$/.test(given.trim()) ? Number(given.trim()) : Number.NaN
      if (!(quantity >= option.min && quantity <= option.max))
        return yield* new Errors.InvalidParameter({
          param: "quantity",
          reason: `must be a whole number from ${option.min} to ${option.max}`
        })
      return { ...found, option, quantity: BigInt(quantity) }
    })

  /** The record with the quantity pending for the item's next cycle. */
  const pendingOn = (rec: Entities.SubscriptionRecord, option: QuantityOption, quantity: bigint, at: number) =>
    option.item_id === baseItemId(rec.subscription.id)
      ? ChangeCommit.withPendingQuantity(rec, quantity, at)
      : ChangeCommit.withItemPendingQuantity(rec, option.item_id, quantity, at)

  /** When a quantity change applies: the next invoice's date, else now. */
  const effectiveAt = (rec: Entities.SubscriptionRecord, now: number) =>
    rec.subscription.next_invoice_date !== null ? msOf(rec.subscription.next_invoice_date) : now

  const preview = (merchantId: string, customerId: string, subscriptionId: string, itemId: string, quantity: string) =>
    Effect.gen(function* () {
      const t = yield* target(merchantId, customerId, subscriptionId, itemId, quantity)
      const now = yield* nowOf(yield* deps.merchants.get(merchantId))
      const after = pendingOn(t.rec, t.option, t.quantity, effectiveAt(t.rec, now))
      return {
        option: t.option,
        quantity: t.quantity.toString(),
        effective_at: t.rec.subscription.next_invoice_date,
        before: Option.getOrNull(yield* deps.renewals.upcomingOf(merchantId, t.rec)),
        after: Option.getOrNull(yield* deps.renewals.upcomingOf(merchantId, after))
      } satisfies QuantityPreview
    })

  const adjust = (merchantId: string, customerId: string, subscriptionId: string, itemId: string, quantity: string) =>
    Effect.gen(function* () {
      const t = yield* target(merchantId, customerId, subscriptionId, itemId, quantity)
      // the base item: the engine's quantity change, pending for the next cycle
      if (t.option.item_id === baseItemId(subscriptionId)) {
        yield* deps.priceChanges.changePrice(merchantId, PriceChanges.change(subscriptionId, { quantity: t.quantity }))
        return
      }
      const merchant = yield* deps.merchants.get(merchantId)
      yield* deps.storage.withTransaction(
        Effect.gen(function* () {
          // read again in the write's transaction: a concurrent write is a ConcurrentUpdate
          const again = yield* target(merchantId, customerId, subscriptionId, itemId, quantity)
          const now = yield* nowOf(merchant)
          yield* saveSub(
            pendingOn(again.rec, again.option, again.quantity, effectiveAt(again.rec, now)),
            again.version,
            now
          )
        })
      )
    })

  return { preview, adjust } as const
}
