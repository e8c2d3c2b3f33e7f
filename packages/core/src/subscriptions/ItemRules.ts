/**
 * The rules of an item change, as pure functions over what `ItemChanges` read: the command
 * (Stripe's `items` semantics — an entry with an id updates or deletes that item, one without
 * adds an item; items not named stay), the item set after it and why it may be refused, the
 * names its quote lines give the items, and the record it writes (now, or waiting for the next
 * cycle with `proration: next_cycle`).
 *
 * @since 0.1.0
 */
import { Option, Result, Schema } from "effect"
import type { PriceVersion } from "../catalog/Price.js"
import type * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import type * as Ids from "../kernel/Ids.js"
import { Timestamp } from "../kernel/Common.js"
import * as ChangeCommit from "./ChangeCommit.js"
import * as ChangeQuote from "./ChangeQuote.js"
import * as Subscription from "./Subscription.js"
import { compatible, type ItemRef, meteredAlone } from "./SubscriptionItems.js"

/**
 * How an item change settles the rest of the period: `always_invoice` (charge or credit now, the
 * default), `create_prorations` (pending lines the next invoice bills), `none` (the new items
 * from now, nothing prorated) or `next_cycle` (the new items from the next renewal on).
 *
 * @since 0.1.0
 */
export type ItemProration = "always_invoice" | "create_prorations" | "none" | "next_cycle"

/**
 * One entry of an item change: with `id`, an update (price and/or quantity) or a deletion of
 * that item; without, a new item (`priceId` required, quantity 1 by default).
 *
 * @since 0.1.0
 */
export interface ItemEntry {
  readonly id: Option.Option<string>
  readonly priceId: Option.Option<Ids.PriceId>
  readonly quantity: Option.Option<bigint>
  readonly deleted: boolean
}

/**
 * An item change of a subscription (1 to 20 entries), decoded from the API's body by the
 * contract's `ItemRequests.itemCommand`.
 *
 * @since 0.1.0
 */
export interface ItemChangeCommand {
  readonly subscriptionId: Ids.SubscriptionId
  readonly items: ReadonlyArray<ItemEntry>
  readonly proration: ItemProration
  /** The quote a commit must reproduce exactly (from a preview of the same change). */
  readonly quoteId: Option.Option<string>
}

/**
 * One item of the set after a change: its id and when it was added (a new item: now), its price
 * version and quantity, and the entry of the change that named it (none: kept as it was).
 *
 * @since 0.1.0
 */
export interface Planned {
  readonly id: string
  readonly created_at: number
  readonly version: PriceVersion
  readonly quantity: bigint
  readonly entry: number | undefined
}

/**
 * A webhook's `v2.subscription.items_updated` data: the subscription and its items after the
 * change (for `next_cycle`, the items the next cycle bills), the quote it reproduced, and when
 * the items take effect.
 *
 * @since 0.1.0
 */
export const ItemsUpdated = Schema.Struct({
  subscription: Subscription.Subscription,
  items: Schema.Array(Subscription.SubscriptionItem),
  quote_id: Schema.String,
  effective_at: Timestamp
})

const refused = (
  subscriptionId: string,
  part: Errors.ItemChangeRefused["part"],
  index: number | undefined,
  detail: string,
  missing?: boolean
) =>
  new Errors.ItemChangeRefused({
    subscriptionId,
    part,
    detail,
    ...(index !== undefined ? { index } : {}),
    ...(missing ? { missing } : {})
  })

/**
 * The item set after `entries` apply to the subscription's items `current` (the base item
 * first): `targets[i]` is the price version entry i moves to or adds (resolved for the
 * subscription's customer), `newIds[i]` the id an added entry i gets. Refused when an entry
 * names no item of the subscription, names one twice or deletes the base item (change its price
 * instead), sets a quantity on a price not billed by quantity, changes nothing, or when the set
 * after could not form one subscription (`SubscriptionItems.compatible`) or would bill in
 * another currency or dimension than now. Another billing interval for every item is an
 * interval switch (`switching`).
 *
 * @since 0.1.0
 */
export const apply = (input: {
  readonly subscriptionId: string
  readonly current: ReadonlyArray<{ readonly ref: ItemRef; readonly version: PriceVersion }>
  readonly entries: ReadonlyArray<ItemEntry>
  readonly targets: ReadonlyArray<PriceVersion | undefined>
  readonly newIds: ReadonlyArray<string | undefined>
  readonly at: number
  /** A commit reproducing a quote: a change that moves nothing is the quote's staleness, not a refusal. */
  readonly reproducing?: boolean
}): Result.Result<
  { readonly items: ReadonlyArray<Planned>; readonly switching: boolean },
  Errors.ItemChangeRefused
> => {
  const { subscriptionId, current, entries, targets } = input
  const no = (part: Errors.ItemChangeRefused["part"], index: number | undefined, detail: string, missing?: boolean) =>
    Result.fail(refused(subscriptionId, part, index, detail, missing))
  const named = new Map<string, number>()
  for (const [i, e] of entries.entries()) {
    const id = Option.getOrUndefined(e.id)
    if (id === undefined) continue
    if (!current.some((c) => c.ref.id === id))
      return no("id", i, `${id} is not an item of subscription ${subscriptionId}`, true)
    if (named.has(id)) return no("id", i, `item ${id} is named twice`)
    named.set(id, i)
    if (e.deleted && id === current[0]!.ref.id)
      return no("deleted", i, "the base item cannot be deleted: change its price instead")
  }
  const items: Array<Planned> = []
  for (const c of current) {
    const i = named.get(c.ref.id)
    const e = i !== undefined ? entries[i]! : undefined
    if (e?.deleted) continue
    items.push({
      id: c.ref.id,
      created_at: c.ref.created_at,
      version: (i !== undefined ? targets[i] : undefined) ?? c.version,
      quantity: e !== undefined ? Option.getOrElse(e.quantity, () => BigInt(c.ref.quantity)) : BigInt(c.ref.quantity),
      entry: i
    })
  }
  for (const [i, e] of entries.entries()) {
    if (Option.isSome(e.id)) continue
    items.push({
      id: input.newIds[i]!,
      created_at: input.at,
      version: targets[i]!,
      quantity: Option.getOrElse(e.quantity, () => 1n),
      entry: i
    })
  }
  for (const it of items)
    if (
      it.entry !== undefined &&
      Option.isSome(entries[it.entry]!.quantity) &&
      it.version.billing_dimension !== "quantity"
    )
      return no("quantity", it.entry, "only items billed by quantity have a quantity")
  const before = current.map((c) => `${c.ref.id}:${c.version.price_version_id}:${c.ref.quantity}`).join(",")
  const after = items.map((it) => `${it.id}:${it.version.price_version_id}:${it.quantity}`).join(",")
  if (before === after && input.reproducing !== true)
    return no("items", undefined, "the change leaves every item as it is")
  const base = items[0]!
  if (
    meteredAlone(
      current.length,
      items.map((x) => x.version)
    )
  )
    return no(
      "deleted",
      entries.findIndex((e) => e.deleted),
      "a metered base item cannot be left alone once the subscription has other items: keep one of them, or cancel the subscription"
    )
  // the entry answering for a refusal of the set: the item's own, else the base item's, else the first entry
  const entryOf = (index: number | null) =>
    (index !== null ? items[index]?.entry : undefined) ?? base.entry ?? items.find((x) => x.entry !== undefined)?.entry
  const fits = compatible(items.map((x) => x.version))
  if (Result.isFailure(fits)) {
    const i = fits.failure.index !== null ? entryOf(fits.failure.index) : undefined
    const version = fits.failure.index !== null ? items[fits.failure.index]?.version : undefined
    return no(
      fits.failure.index === null ? "items" : "price_id",
      i,
      version ? `${version.id} ${fits.failure.reason}` : `the items ${fits.failure.reason}`
    )
  }
  const was = current[0]!.version
  if (base.version.currency !== was.currency || base.version.billing_dimension !== was.billing_dimension)
    return no(
      "price_id",
      entryOf(0),
      `the items must stay in ${was.currency} and billed by ${was.billing_dimension}, as the subscription is`
    )
  const cadence = (pv: PriceVersion) =>
    `${pv.price_plan?.billing_cycle_unit ?? "-"}/${pv.price_plan?.billing_cycle_count ?? 1}`
  return Result.succeed({ items, switching: cadence(base.version) !== cadence(was) })
}

/**
 * How a quote line names a set of items: `5 × Seat, 1 × Team plan`. A metered item is left out
 * (its usage is billed in arrears, never prorated, so "Unused time on …" does not concern it),
 * unless the set holds nothing else: then it is named by its price's name.
 *
 * @since 0.1.0
 */
export const label = (items: ReadonlyArray<{ readonly version: PriceVersion; readonly quantity: bigint }>) => {
  const prorated = items.filter((x) => x.version.billing_dimension === "quantity")
  return prorated.length > 0
    ? prorated.map((x) => `${x.quantity} × ${x.version.price_name}`).join(", ")
    : items.map((x) => x.version.price_name).join(", ")
}

/**
 * The extra items of a planned set, as the record keeps them. A kept item of `was` keeps its
 * end-of-period changes the set does not override, as the base item does: its scheduled version
 * (a catalog migration's) while its version stays, its pending quantity while its quantity stays.
 */
const extrasOf = (
  items: ReadonlyArray<Planned>,
  was: ReadonlyArray<Entities.ItemTerm> = []
): ReadonlyArray<Entities.ItemTerm> =>
  items.slice(1).map((x) => {
    const old = was.find((t) => t.id === x.id)
    const scheduled = old?.price_version_id === x.version.price_version_id ? (old.scheduled_version ?? null) : null
    const pending = old?.quantity === x.quantity.toString() ? (old.pending_change ?? null) : null
    return {
      id: x.id,
      price_id: x.version.id,
      price_version_id: x.version.price_version_id,
      quantity: x.quantity.toString(),
      created_at: x.created_at,
      version: x.version,
      ...(scheduled !== null ? { scheduled_version: scheduled } : {}),
      ...(pending !== null ? { pending_change: pending } : {})
    }
  })

/**
 * The record holding the item set `items` from now: the base item moved to its price and
 * quantity, the other items replaced, only the `kept` discounts, the proration basis moved to
 * `basis` when there is one. An end-of-period change the change overrides is dropped: a
 * scheduled price (or an item's scheduled version) when the change moves that item's price, a
 * pending quantity when it moves that item's quantity; the other items' end-of-period changes
 * are kept.
 *
 * @since 0.1.0
 */
export const recordAfter = (
  rec: Entities.SubscriptionRecord,
  items: ReadonlyArray<Planned>,
  kept: ReadonlyArray<Entities.DiscountTerm>,
  basis: Option.Option<string>
): Entities.SubscriptionRecord => {
  const base = items[0]!
  const moved = ChangeCommit.movedTo(rec, base.version, kept, basis)
  const quantityNamed = base.quantity.toString() !== rec.subscription.quantity
  return {
    ...moved,
    scheduled_price_version_id:
      base.version.price_version_id === rec.subscription.price_version_id ? rec.scheduled_price_version_id : null,
    extra_items: extrasOf(items, rec.extra_items),
    subscription: new Subscription.Subscription(
      {
        ...moved.subscription,
        quantity: base.quantity.toString(),
        pending_change: quantityNamed ? null : rec.subscription.pending_change
      },
      { disableChecks: true }
    )
  }
}

/**
 * The record with the item set `items` waiting for the next cycle (`proration: next_cycle`),
 * replacing every end-of-period change — a scheduled price or version, a pending quantity, of
 * the base item and of every other item alike, and an earlier waiting item set: the set says
 * every item's price and quantity of that cycle. A revoke of the set restores none of them.
 *
 * @since 0.1.0
 */
export const withPendingItems = (
  rec: Entities.SubscriptionRecord,
  items: ReadonlyArray<Planned>,
  quoteId: string,
  at: number
): Entities.SubscriptionRecord => ({
  ...rec,
  scheduled_price_version_id: null,
  extra_items: rec.extra_items.map((x) => ({ ...x, pending_change: null, scheduled_version: null })),
  pending_items: {
    cycle_index: rec.subscription.cycle_index + 1,
    base_price_version_id: items[0]!.version.price_version_id,
    base_quantity: items[0]!.quantity.toString(),
    extra_items: extrasOf(items),
    quote_id: quoteId,
    at
  },
  subscription: new Subscription.Subscription({ ...rec.subscription, pending_change: null }, { disableChecks: true })
})

/**
 * The record the renewal opening cycle `nextCycle` bills when an item set waits for it: the
 * other items replaced now, the base item's price and quantity through the record's own
 * end-of-period fields (`scheduled_price_version_id`, `pending_change`), which the renewal's
 * bill and advance apply. Unchanged when nothing waits for that cycle.
 *
 * @since 0.1.0
 */
export const pendingItemsStep = (rec: Entities.SubscriptionRecord, nextCycle: number): Entities.SubscriptionRecord => {
  const p = rec.pending_items ?? null
  if (p === null || p.cycle_index > nextCycle) return rec
  const s = rec.subscription
  return {
    ...rec,
    pending_items: null,
    extra_items: p.extra_items,
    scheduled_price_version_id: p.base_price_version_id === s.price_version_id ? null : p.base_price_version_id,
    subscription: new Subscription.Subscription(
      {
        ...s,
        pending_change:
          p.base_quantity === s.quantity
            ? null
            : new Subscription.PendingChange({
                quantity: p.base_quantity,
                cycle_index: nextCycle,
                version: (s.pending_change?.version ?? 0) + 1,
                effective_at: s.current_period_end ?? s.updated_at
              })
      },
      { disableChecks: true }
    )
  }
}

/**
 * What an item change's quote id hashes: the change, the subscription's terms (`ChangeQuote.stateOf`) and the
 * numbers quoted, so a commit reproduces it only when nothing moved.
 *
 * @since 0.1.0
 */
export const hashed = (command: ItemChangeCommand, state: string, quote: ChangeQuote.Priced): string =>
  JSON.stringify([
    "items",
    command.subscriptionId,
    state,
    command.items.map((e) => [
      Option.getOrNull(e.id),
      Option.getOrNull(e.priceId),
      Option.match(e.quantity, { onNone: () => null, onSome: (q) => q.toString() }),
      e.deleted
    ]),
    command.proration,
    ...ChangeQuote.quoted(quote)
  ])
