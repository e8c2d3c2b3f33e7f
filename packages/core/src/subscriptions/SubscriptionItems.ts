/**
 * A subscription's items: 1 to 20 recurring prices, each with its own quantity, on one billing
 * interval and one currency. Item 0 is the base item — the subscription's flat fields
 * (`price_id`, `price_version_id`, `quantity`, …), so the seed's single-price forms and answers
 * stay as they are; items 1 and after are the record's `extra_items`. A record written before
 * items existed has no extra items: it is one item.
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Option, Result } from "effect"
import * as Invoicing from "../invoices/Invoicing.js"
import * as Price from "../catalog/Price.js"
import type * as Proration from "../money/Proration.js"
import * as Entities from "../kernel/Entities.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Subscription from "./Subscription.js"

/**
 * The most items a subscription holds.
 *
 * @since 0.1.0
 */
export const MAX_ITEMS = Subscription.MAX_ITEMS

/**
 * The id of a subscription's base item: the subscription's id with the `si` prefix
 * (`sub_01jd…` → `si_01jd…`), the same on records written before items existed.
 *
 * @example
 * baseItemId("sub_01jdx3v0000000000000000000") // "si_01jdx3v0000000000000000000"
 * @since 0.1.0
 */
export const baseItemId = (subscriptionId: string): string =>
  `si_${subscriptionId.slice(subscriptionId.indexOf("_") + 1)}`

/**
 * A subscription's items as the record holds them, the base item first (its `created_at` is the
 * subscription's).
 *
 * @since 0.1.0
 */
export const termsOf = (rec: Entities.SubscriptionRecord): ReadonlyArray<ItemRef> => [
  {
    id: baseItemId(rec.subscription.id),
    price_id: rec.subscription.price_id,
    price_version_id: rec.subscription.price_version_id,
    quantity: rec.subscription.quantity,
    created_at: DateTime.toEpochMillis(rec.subscription.created_at)
  },
  ...rec.extra_items.map(({ version: _, pending_change: _p, scheduled_version: _s, ...ref }) => ref)
]

/**
 * An item as far as naming it goes: its id, price, version, quantity and when it was added.
 *
 * @since 0.1.0
 */
export type ItemRef = Omit<Entities.ItemTerm, "version" | "pending_change" | "scheduled_version">

/**
 * The items after the base one as cycle `nextCycle` bills them: each item's pending quantity
 * due by then and its scheduled version applied (and cleared), the others as they are — what a
 * renewal bills and writes (`RenewalPlan.bill`, `RenewalPlan.advance`), as the base item's
 * `pending_change` and `scheduled_price_version_id` are.
 *
 * @example
 * nextCycleItems([{ …, quantity: "2", pending_change: { quantity: "5", cycle_index: 3, … } }], 3)[0].quantity // "5"
 * @since 0.1.0
 */
export const nextCycleItems = (
  extras: ReadonlyArray<Entities.ItemTerm>,
  nextCycle: number
): ReadonlyArray<Entities.ItemTerm> =>
  extras.map((item) => {
    const pending = item.pending_change ?? null
    const due = pending !== null && pending.cycle_index <= nextCycle
    const scheduled = item.scheduled_version ?? null
    if (!due && scheduled === null) return item
    return {
      ...item,
      quantity: due ? pending.quantity : item.quantity,
      pending_change: due ? null : pending,
      price_version_id: scheduled?.price_version_id ?? item.price_version_id,
      version: scheduled ?? item.version,
      scheduled_version: null
    }
  })

/**
 * Whether an item after the base one has a change waiting for the next renewal (a pending
 * quantity or a scheduled version).
 *
 * @since 0.1.0
 */
export const hasItemChange = (rec: Entities.SubscriptionRecord): boolean =>
  rec.extra_items.some((x) => (x.pending_change ?? null) !== null || (x.scheduled_version ?? null) !== null)

/**
 * What a renewal bills of a subscription's metered item: the usage accrued in the cycle that
 * ended (`units`), rated for that cycle (`paidCycles` selects its intro phase).
 *
 * @since 0.1.0
 */
export interface UsageToBill {
  readonly units: bigint
  readonly paidCycles: number
}

/**
 * How {@link withItemLines} rates the items: the metered item's `usage` in arrears, and a short
 * first period's `share`.
 *
 * @since 0.1.0
 */
export interface ItemLinesOptions {
  readonly usage?: UsageToBill | undefined
  readonly share?: Proration.Fraction | undefined
}

/**
 * A cycle's invoice with the lines of a subscription's items after the base one (each rated at
 * its own price version for paid cycle `paidCycles`, intro phases included), totalled again:
 * `draft` holds the base item's line. A metered item (usage-based) has a line only when
 * `options.usage` is given — its usage in arrears, for the cycle that ended — and none otherwise
 * (a first invoice, the proration basis). A trial invoice is left as it is (the other items are
 * free during a trial); the draft is in the prices' currency, before conversion, discounts and
 * tax, which apply to the whole invoice (see docs/pricing.md, "Several items"). `options.share`:
 * a short first period up to a billing anchor, each line its share of a whole period, rounded
 * once per line.
 *
 * @since 0.1.0
 */
export const withItemLines = (
  draft: Invoicing.Draft,
  extras: ReadonlyArray<Entities.ItemTerm>,
  paidCycles: number,
  options: ItemLinesOptions = {}
): Invoicing.Draft => {
  const { share, usage } = options
  if (extras.length === 0 || draft.invoice_type === "trial") return draft
  const lines = extras.flatMap((item) => {
    // an item billed by a billable metric is rated by `MetricUsage`, on its metric's value
    if (Price.isMetricBased(item.version)) return []
    const metered = item.version.billing_dimension === "usage" ? usage : null
    if (metered === undefined) return []
    return Result.getOrThrow(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: item.version,
        cycle_index: draft.cycle_index,
        paidCycles: metered?.paidCycles ?? paidCycles,
        quantity: BigInt(item.quantity),
        usage: metered?.units ?? 0n,
        existing: [],
        ...(share !== undefined ? { share } : {})
      })
    ).lines
  })
  return retotal(draft, [...draft.lines, ...lines])
}

/**
 * `draft` with the usage of `rec`'s metered item (after the base one) accrued so far billed in
 * arrears: one `usage` line rated at the item's version in force (for paid cycle `paidCycles`),
 * its period `span` — the part of the period that ended at a change moving the subscription to
 * another interval, so the new period's usage starts from 0 and no unit is billed twice or
 * rated in one pool with the next period's. Unchanged without a metered extra item or during a
 * trial (`paidCycles` below 0: trial usage is not billed).
 *
 * @since 0.1.0
 */
export const withUsageSoFar = (
  draft: Invoicing.Draft,
  rec: Entities.SubscriptionRecord,
  paidCycles: number,
  span: { readonly start: number; readonly end: number }
): Invoicing.Draft => {
  const item = rec.extra_items.find((x) => Price.isCountMetered(x.version))
  if (item === undefined || paidCycles < 0) return draft
  const billed = withItemLines(draft, [item], paidCycles, { usage: { units: BigInt(rec.accrued_usage), paidCycles } })
  return retotal(
    billed,
    billed.lines.map((l, i) => (i >= draft.lines.length && l.kind === "usage" ? { ...l, span } : l))
  )
}

/** `draft` with `lines` instead of its own, totalled again (before discounts and tax). */
const retotal = (draft: Invoicing.Draft, lines: ReadonlyArray<Invoicing.Line>): Invoicing.Draft =>
  Invoicing.total({
    invoice_type: draft.invoice_type,
    cycle_index: draft.cycle_index,
    currency: draft.currency,
    lines,
    ...(Option.isSome(draft.original_invoice_id) ? { original_invoice_id: draft.original_invoice_id.value } : {})
  })

/**
 * A draft without its usage lines: the first invoice of a subscription whose metered item sits
 * beside other items (nothing used yet), or the first renewal after a trial (trial usage is not
 * billed). A one-item usage subscription keeps the seed's 0.00 usage line on its first invoice.
 *
 * @since 0.1.0
 */
export const withoutUsage = (draft: Invoicing.Draft): Invoicing.Draft =>
  draft.lines.some((l) => l.kind === "usage")
    ? retotal(
        draft,
        draft.lines.filter((l) => l.kind !== "usage")
      )
    : draft

/**
 * Where a subscription's metered item sits: 0 when the base item is usage-based, `i` for extra
 * item `i - 1`, `undefined` when no item is (usage is then refused). At most one item is
 * metered ({@link compatible}). Items billed by a billable metric are not "the metered item":
 * their usage is meter events (`MetricUsage`), not `usage_count`.
 *
 * @example
 * meteredIndex(teamWithApiCalls) // 3: Team plan, Seat, SSO add-on, API calls
 * @since 0.1.0
 */
export const meteredIndex = (rec: Entities.SubscriptionRecord): number | undefined => {
  if (rec.subscription.billing_dimension === "usage") return 0
  const i = rec.extra_items.findIndex((x) => Price.isCountMetered(x.version))
  return i < 0 ? undefined : i + 1
}

/**
 * How a price version bills, as items must share it: its cycle (unit and count) and currency.
 * Prices without a plan (customer-initiated) share "customer-initiated".
 */
const cadenceOf = (pv: Price.PriceVersion) =>
  `${pv.price_plan?.billing_cycle_unit ?? "customer-initiated"}/${pv.price_plan?.billing_cycle_count ?? 1}`

/**
 * Why a set of items cannot form one subscription: the item at `index` (`null`: the set as a
 * whole) breaks `reason`. The adapter names the item's parameter from the index.
 *
 * @since 0.1.0
 */
export interface ItemRefusal {
  readonly index: number | null
  readonly reason: string
}

/**
 * Whether an item set (`after`, the base item first) leaves a metered base item alone on a
 * subscription that had `before` items: refused, since its renewals bill on the prepaid
 * invoice of each new cycle beside other items, and alone in arrears on the invoice of the
 * ended cycle — which the renewal beside the others has already issued.
 *
 * @since 0.1.0
 */
export const meteredAlone = (before: number, after: ReadonlyArray<Price.PriceVersion>): boolean =>
  before > 1 && after.length === 1 && after[0]!.billing_dimension === "usage"

/**
 * Checks that a set of items (their price versions, in order) may form one subscription: 1 to
 * {@link MAX_ITEMS} of them, all recurring, each price once, on the first item's billing interval and currency;
 * at most one usage-based (metered) item without a billable metric, base or extra: its usage is
 * recorded per subscription (`accrued_usage`), so a second one could not tell whose usage it is;
 * items billed by a billable metric may be several (each rates its metric and group), never the
 * first item.
 * The first refusal says which item.
 *
 * @example
 * compatible([monthly, monthly, yearly]) // Failure({ index: 2, reason: "bills every year/1; …" })
 * @since 0.1.0
 */
export const compatible = (items: ReadonlyArray<Price.PriceVersion>): Result.Result<void, ItemRefusal> => {
  const base = items[0]
  if (base === undefined) return Result.fail({ index: null, reason: "must hold at least one item" })
  if (items.length > MAX_ITEMS)
    return Result.fail({ index: null, reason: `must hold at most ${MAX_ITEMS} items (got ${items.length})` })
  for (const [index, pv] of items.entries()) {
    if (pv.billing_type !== "recurring") return Result.fail({ index, reason: "must be a recurring price" })
    if (items.findIndex((other) => other.id === pv.id) < index)
      return Result.fail({ index, reason: "is already an item: one item per price, with its quantity" })
    if (items.length > 1 && pv.billing_dimension === "mixed")
      return Result.fail({ index, reason: "must bill by quantity or by usage" })
    if (index === 0 && Price.isMetricBased(pv))
      return Result.fail({
        index,
        reason:
          "is billed by a billable metric: such a price is an item beside a base price, never the first item (put a recurring base price first, 0.00 if nothing is due up front)"
      })
    if (Price.isCountMetered(pv) && items.findIndex(Price.isCountMetered) < index)
      return Result.fail({
        index,
        reason:
          "is a second usage-based price: a subscription holds at most one metered item without a billable metric, because its usage is recorded per subscription (prices billed by a billable metric may be several)"
      })
    if (pv.currency !== base.currency)
      return Result.fail({
        index,
        reason: `is in ${pv.currency}; every item must be in ${base.currency}, the first item's currency`
      })
    if (cadenceOf(pv) !== cadenceOf(base))
      return Result.fail({
        index,
        reason: `bills every ${cadenceOf(pv)}; every item must bill every ${cadenceOf(base)}, the first item's interval`
      })
  }
  return Result.void
}

const nothingWaits = { pending_change: null, scheduled_price_version_id: null } as const

/**
 * What waits for an item's next cycle, as its answer shows it: the base item's from the
 * subscription's own end-of-period fields (`pending_change`, `scheduled_price_version_id`), the
 * others' from their terms; under an item set waiting for the next cycle (`pending_items`, which
 * replaced those fields), the quantity and version the set gives the item when they differ. An
 * item the set removes, or adds, is not an item of this answer.
 *
 * @since 0.1.0
 */
export const waitingOf = (rec: Entities.SubscriptionRecord, itemId: string): Waiting => {
  const set = rec.pending_items ?? null
  const s = rec.subscription
  if (set !== null) {
    const base = itemId === baseItemId(s.id)
    const now = base ? s : rec.extra_items.find((x) => x.id === itemId)
    const next = base
      ? { quantity: set.base_quantity, price_version_id: set.base_price_version_id }
      : set.extra_items.find((x) => x.id === itemId)
    if (now === undefined || next === undefined) return nothingWaits
    return {
      pending_change:
        next.quantity === now.quantity
          ? null
          : new Subscription.PendingChange({
              quantity: next.quantity,
              cycle_index: set.cycle_index,
              version: 1,
              effective_at: s.current_period_end ?? s.updated_at
            }),
      scheduled_price_version_id: next.price_version_id === now.price_version_id ? null : next.price_version_id
    }
  }
  if (itemId === baseItemId(s.id))
    return {
      pending_change: rec.subscription.pending_change,
      scheduled_price_version_id: rec.scheduled_price_version_id
    }
  const item = rec.extra_items.find((x) => x.id === itemId)
  return {
    pending_change: item?.pending_change ?? null,
    scheduled_price_version_id: item?.scheduled_version?.price_version_id ?? null
  }
}

/**
 * An item's quantity and price version waiting for its next cycle (see {@link waitingOf}).
 *
 * @since 0.1.0
 */
export type Waiting = Pick<Subscription.SubscriptionItem, "pending_change" | "scheduled_price_version_id">

/**
 * One item as its answer shows it, from its term, its price version and what waits for its
 * next cycle (nothing unless given).
 *
 * @since 0.1.0
 */
export const itemAnswer = (
  term: ItemRef,
  pv: Price.PriceVersion,
  waiting: Waiting = nothingWaits
): Subscription.SubscriptionItem =>
  new Subscription.SubscriptionItem(
    {
      id: term.id,
      price_id: term.price_id,
      price_version_id: term.price_version_id,
      quantity: term.quantity,
      price_type: pv.price_type,
      billing_dimension: pv.billing_dimension,
      quantity_unit: pv.quantity_unit,
      unit_amount: pv.price_plan?.base_price_val || pv.price_val,
      currency: pv.currency,
      usage_amount: pv.usage_amount,
      quantity_tier_type: pv.quantity_tier_type,
      price_tier_type: pv.price_tier_type,
      quantity_tiers: pv.quantity_tiers,
      usage_tiers: pv.usage_tiers,
      created_at: DateTime.makeUnsafe(term.created_at),
      pending_change: waiting.pending_change,
      scheduled_price_version_id: waiting.scheduled_price_version_id
    },
    { disableChecks: true }
  )

/**
 * The answers of a page of subscriptions (`subscriptions` computed from their records by
 * `answer`) with their `items`, each price version read once.
 *
 * @since 0.1.0
 */
export const withItems = (storage: StorageService) => {
  const versions = storage.repository(Entities.priceVersion)
  return (
    merchantId: string,
    pairs: ReadonlyArray<{ readonly rec: Entities.SubscriptionRecord; readonly answer: Subscription.Subscription }>
  ) =>
    Effect.gen(function* () {
      const seen = new Map<string, Price.PriceVersion>()
      const out: Array<Subscription.Subscription> = []
      for (const { rec, answer } of pairs) {
        const items: Array<Subscription.SubscriptionItem> = []
        for (const term of termsOf(rec)) {
          let pv = seen.get(term.price_version_id)
          if (pv === undefined) {
            const found = yield* Effect.orDie(versions.get(merchantId, term.price_version_id))
            if (found._tag === "None") return yield* Effect.die(`missing price version ${term.price_version_id}`)
            pv = found.value.value
            seen.set(term.price_version_id, pv)
          }
          items.push(itemAnswer(term, pv, waitingOf(rec, term.id)))
        }
        out.push(new Subscription.Subscription({ ...answer, items }, { disableChecks: true }))
      }
      return out
    })
}
