/**
 * Item changes of a running subscription — add an item, remove one, change an item's quantity or
 * price — each through a quote: the preview answers it, the commit reproduces it exactly (a stale
 * or expired quote is refused as for price changes). The rules are `ItemRules`'; the proration is
 * `ChangeQuote`'s over the sum of the items (the credit is the unused part of what was paid and
 * is still held, the charge the unused part of the new full cycle), and what moves is settled by
 * the same path as a price change (`ChangeSettlement`). `next_cycle` makes the new item set the
 * next renewal's.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import type { PriceVersion } from "../catalog/Price.js"
import * as Catalog from "../catalog/Catalog.js"
import * as Discounts from "../discounts/Discounts.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import type * as GiveBack from "../invoices/GiveBack.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Ports from "../kernel/Ports.js"
import { dt, emitAll, msOf, nowOf } from "../kernel/ServiceSupport.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Schedule from "../schedules/Schedule.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Secrets from "../tenants/Secrets.js"
import * as BillingAnchor from "./BillingAnchor.js"
import * as ChangeQuote from "./ChangeQuote.js"
import * as ChangeSettlement from "./ChangeSettlement.js"
import * as IntervalSwitch from "./IntervalSwitch.js"
import * as IntervalSwitches from "./IntervalSwitches.js"
import * as ItemRules from "./ItemRules.js"
import { keepRemovedUsage, removedUsage } from "./KeptUsage.js"
import type { Quote } from "./PriceChanges.js"
import type * as Subscription from "./Subscription.js"
import { itemAnswer, termsOf, withItems } from "./SubscriptionItems.js"
import { loadSub, mustBeLive, writes } from "./SubscriptionStore.js"
import { fullCycle, withDiscounts } from "./SubscriptionTerms.js"

/**
 * What an item change commits: its quote and the subscription's items after it (for
 * `next_cycle`, the items as they are until the next renewal).
 *
 * @since 0.1.0
 */
export interface Committed {
  readonly quote: Quote
  readonly items: ReadonlyArray<Subscription.SubscriptionItem>
}

/** Whether the record holds pending proration lines of its current cycle. */
const pendingOfCycle = (rec: Entities.SubscriptionRecord): boolean =>
  rec.pending_prorations.some((p) => p.cycle_index === rec.subscription.cycle_index)

/**
 * The item-change service.
 *
 * @since 0.1.0
 */
export class ItemChanges extends Context.Service<ItemChanges>()("@recur/core/ItemChanges", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settlement = yield* ChangeSettlement.make
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const { saveSub, version } = writes(storage)
    const subs = storage.repository(Entities.subscription)
    const answers = withItems(storage)
    const planSwitch = IntervalSwitches.planSwitch(storage, yield* Ports.TaxCalculator)
    const openSwitched = IntervalSwitches.openSwitched(
      storage,
      settlement.documents,
      writes(storage).schedule,
      (yield* Settings.Settings).reconcileAfterMs
    )

    /** The discounts that cover every item's product stay; the others end with the change. */
    const scopeOnItems = (merchantId: string, rec: Entities.SubscriptionRecord, products: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        let kept: ReadonlyArray<Entities.DiscountTerm> = rec.discounts
        const ending: Array<Entities.DiscountTerm> = []
        for (const product of new Set(products)) {
          const scope = yield* Discounts.scopeOn(storage, merchantId, kept, product)
          kept = scope.kept
          ending.push(...scope.ending)
        }
        return { kept, ending }
      })

    const plan = (merchantId: string, command: ItemRules.ItemChangeCommand, at: number) =>
      Effect.gen(function* () {
        const subscriptionId = command.subscriptionId
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* loadSub(subs, merchantId, subscriptionId)
        const rec = sv.value
        yield* mustBeLive(rec, "change")
        const conflict = (reason: string) =>
          new Errors.StateConflict({
            resource: "subscription",
            id: subscriptionId,
            state: rec.subscription.status,
            reason
          })
        // a schedule in force decides the items of each cycle: release it first
        if (Schedule.governs(rec.schedule ?? null))
          return yield* conflict("a subscription schedule governs its items; release or cancel the schedule first")
        if ((rec.pending_items ?? null) !== null && command.proration !== "next_cycle")
          return yield* conflict(
            "an item change waits for the next cycle; revoke it first (revoke-price-change) or change with proration next_cycle"
          )
        const no = (part: Errors.ItemChangeRefused["part"], detail: string, index?: number) =>
          new Errors.ItemChangeRefused({ subscriptionId, part, detail, ...(index !== undefined ? { index } : {}) })
        const baseVersion = yield* version(merchantId, rec.subscription.price_version_id)
        const refs = termsOf(rec)
        const current = refs.map((ref, i) => ({
          ref,
          version: i === 0 ? baseVersion : rec.extra_items[i - 1]!.version
        }))
        const targets: Array<PriceVersion | undefined> = []
        const newIds: Array<string | undefined> = []
        for (const [i, e] of command.items.entries()) {
          const priceId = Option.getOrUndefined(e.priceId)
          targets.push(
            priceId !== undefined
              ? yield* Effect.catchTag(
                  // a private price of another customer is no such price for this subscription
                  catalog.sellableVersion(merchantId, priceId, rec.subscription.customer_id),
                  "PriceNotFound",
                  () =>
                    Effect.fail(
                      new Errors.ItemChangeRefused({
                        subscriptionId,
                        part: "price_id",
                        index: i,
                        detail: `no such price: ${priceId}`,
                        missing: true
                      })
                    )
                )
              : undefined
          )
          newIds.push(Option.isNone(e.id) ? yield* Ids.make(Ids.prefixes.subscriptionItem) : undefined)
        }
        const applied = ItemRules.apply({
          subscriptionId,
          current,
          entries: command.items,
          targets,
          newIds,
          at,
          reproducing: Option.isSome(command.quoteId)
        })
        if (Result.isFailure(applied)) return yield* applied.failure
        const { items, switching } = applied.success
        // the entry that moved the base item's price (else the first that named a price) answers for a switch
        const switchEntry =
          items[0]!.entry ??
          items.find((x) => x.entry !== undefined && Option.isSome(command.items[x.entry]!.priceId))?.entry
        if (switching) {
          if (command.proration === "next_cycle")
            return yield* no(
              "proration",
              "moving every item to another interval starts a new period at the change: use always_invoice, create_prorations or none"
            )
          const wrong = IntervalSwitch.refusal(subscriptionId, rec, items[0]!.version, { effective: "immediate" }, true)
          if (wrong)
            return yield* wrong._tag === "PriceChangeRefused"
              ? no(wrong.reason === "proration" ? "proration" : "price_id", wrong.detail, switchEntry)
              : wrong
        }
        // no cycle of an item may bill more than an invoice can carry
        for (const it of items) {
          const above = ChangeQuote.boundRefusal(subscriptionId, rec, it.version, Option.none(), it.quantity)
          if (above) return yield* no("quantity", above.detail, it.entry)
        }
        const base = items[0]!
        const scope = yield* scopeOnItems(
          merchantId,
          rec,
          items.map((x) => x.version.product_id)
        )
        const proration = command.proration
        const discounts_ending = ChangeQuote.endingDiscounts(
          rec,
          scope.ending,
          proration === "next_cycle" ? "end_of_period" : "immediate"
        )
        const after = ItemRules.recordAfter(rec, items, scope.kept, Option.none())
        const cycle = rec.subscription.cycle_index
        const full = fullCycle(after, base.version, base.quantity, cycle)
        if (!Money.isWithinBounds(full))
          return yield* no(
            "items",
            `${Money.format(full)} ${full.currency} a cycle is above the most one invoice may carry`
          )
        const periodStart =
          rec.subscription.current_period_start !== null ? msOf(rec.subscription.current_period_start) : at
        const periodEnd = rec.subscription.current_period_end !== null ? msOf(rec.subscription.current_period_end) : at
        const head: ChangeQuote.Head = {
          subscription_id: subscriptionId,
          effective_type: proration === "next_cycle" ? "end_of_period" : "immediate",
          proration,
          at,
          currency: rec.currency,
          discounts_ending
        }
        const labels = {
          before: ItemRules.label(current.map((c) => ({ version: c.version, quantity: BigInt(c.ref.quantity) }))),
          after: ItemRules.label(items)
        }
        const prorate = (collected: GiveBack.Collected, pendingAvailable?: Money.Money) =>
          ChangeQuote.prorated(head, {
            merchant,
            rec,
            after,
            current: baseVersion,
            target: base.version,
            quantity: base.quantity,
            collected,
            // the short first period before a billing anchor prorates over the whole period it is part of
            period: BillingAnchor.prorationSpan(rec, baseVersion, { start: periodStart, end: periodEnd }),
            labels,
            ...(pendingAvailable ? { pendingAvailable } : {})
          })
        let quote: ChangeQuote.Priced
        let collected: GiveBack.Collected | undefined
        let available: Money.Money | undefined
        let switched: IntervalSwitches.Switched | undefined
        if (switching && rec.subscription.status !== "trial") {
          // every item moves to the new interval: the unused time to the balance, a new period from now
          const planned = yield* planSwitch({
            merchantId,
            merchant,
            rec,
            after,
            current: baseVersion,
            target: base.version,
            at,
            period: { start: periodStart, end: periodEnd },
            proration,
            quantity: Option.some(base.quantity),
            head,
            labels
          })
          collected = planned.collected
          quote = planned.quote
          switched = planned.switched
        } else if (proration === "next_cycle") quote = ChangeQuote.unprorated(head, "scheduled", periodEnd)
        else if (proration === "none" || rec.subscription.status === "trial")
          quote = ChangeQuote.unprorated(head, "none", at)
        else if (proration === "create_prorations") {
          if (rec.subscription.cancel_at_period_end)
            return yield* no(
              "proration",
              "the subscription cancels at its period's end, so no next invoice would bill the proration lines: use always_invoice"
            )
          // the credit may cancel pending charges of the cycle first, then what its invoices collected
          available = ChangeQuote.pendingAvailable(rec)
          collected = yield* CycleLedger.collectedBy(storage, merchantId, rec, cycle)
          quote = ChangeQuote.pendingQuote(prorate(collected, available), periodEnd)
        } else if (pendingOfCycle(rec)) {
          // the cycle's pending lines would be billed next to a credit that already counted them
          return yield* no(
            "proration",
            "the subscription has pending proration lines the next invoice bills: change with proration create_prorations, none or next_cycle until then"
          )
        } else {
          collected = yield* CycleLedger.collectedBy(storage, merchantId, rec, cycle)
          quote = prorate(collected)
        }
        const priced = yield* settlement.settle({ merchantId, rec, quote, collected, available })
        // the metered item's usage so far a change now removes or reprices: kept for the next
        // renewal (KeptUsage), shown by the quote and covered by its id
        const keeps = proration === "next_cycle" || switched ? undefined : removedUsage(rec, after, baseVersion, at)
        const settled = keeps
          ? {
              ...priced,
              quote: { ...priced.quote, kept_usage: [{ description: keeps.description, amount: keeps.amount }] }
            }
          : priced
        const hash = yield* Secrets.sha256Hex(ItemRules.hashed(command, ChangeQuote.stateOf(sv.value), settled.quote))
        const basis = switched
          ? Option.some(switched.basis)
          : ChangeQuote.movesBasis(settled.quote)
            ? Option.some(Money.format(full))
            : Option.none<string>()
        return {
          rec,
          version: sv.version,
          merchant,
          items,
          baseVersion,
          kept: scope.kept,
          basis,
          switched,
          settled: {
            ...settled,
            quote: { ...settled.quote, quote_id: `quo_${at.toString(36)}_${hash.slice(0, 24)}` } as Quote
          }
        }
      })

    const preview = Effect.fn("ItemChanges.preview")(function* (
      merchantId: string,
      command: ItemRules.ItemChangeCommand
    ) {
      const merchant = yield* merchants.get(merchantId)
      return (yield* plan(merchantId, command, yield* nowOf(merchant))).settled.quote
    })

    const commit = Effect.fn("ItemChanges.commit")(function* (
      merchantId: string,
      command: ItemRules.ItemChangeCommand
    ) {
      const subscriptionId = command.subscriptionId
      const merchant = yield* merchants.get(merchantId)
      const now = yield* nowOf(merchant)
      // a quote is priced at the instant it names; a commit re-plans at that instant
      const at = yield* ChangeSettlement.commitInstant(subscriptionId, command.quoteId, now)
      const planned = yield* plan(merchantId, command, at)
      const quote = planned.settled.quote
      if (Option.isSome(command.quoteId) && quote.quote_id !== command.quoteId.value)
        return yield* new Errors.QuoteStale({ quoteId: command.quoteId.value, subscriptionId })
      const { rec, items } = planned
      const done = yield* storage.withTransaction(
        Effect.gen(function* () {
          let next: Entities.SubscriptionRecord
          let tradeToCharge = Option.none<string>()
          if (command.proration === "next_cycle") next = ItemRules.withPendingItems(rec, items, quote.quote_id, now)
          else if (planned.switched) {
            const opened = yield* openSwitched(
              planned.merchant,
              rec,
              ItemRules.recordAfter(rec, items, planned.kept, Option.none()),
              items[0]!.version,
              planned.kept,
              planned.basis,
              { switched: planned.switched, now }
            )
            next = opened.next
            tradeToCharge = opened.tradeToCharge
          } else {
            const committed = yield* settlement.commit({
              merchant: planned.merchant,
              rec,
              next: ItemRules.recordAfter(rec, items, planned.kept, planned.basis),
              price: items[0]!.version,
              settled: planned.settled,
              now
            })
            // the usage of a metered item removed or repriced now is kept for the next renewal
            next = keepRemovedUsage(rec, committed.next, planned.baseVersion, now)
            tradeToCharge = committed.tradeToCharge
          }
          const events = Result.getOrThrow(
            Lifecycle.transition(Lifecycle.subscription, rec.subscription.status, "update_items")
          ).events
          const answered = itemsAnswer(items)
          yield* emitAll(storage, events, {
            merchant_id: merchantId,
            business_id: subscriptionId,
            schema: ItemRules.ItemsUpdated,
            data: {
              subscription: withDiscounts(next),
              items: answered,
              quote_id: quote.quote_id,
              effective_at: dt(quote.effective_at)
            },
            at: now
          })
          yield* Effect.orDie(saveSub(next, planned.version, now)).pipe(
            Effect.catchDefect(() =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: subscriptionId }))
            )
          )
          return {
            tradeToCharge,
            owesRefund: quote.outcome === "refund" || planned.switched?.owesRefund === true,
            next
          }
        })
      )
      yield* settlement.afterCommit(merchantId, rec, done)
      const read = yield* answers(merchantId, [{ rec: done.next, answer: withDiscounts(done.next) }])
      return { quote, items: read[0]!.items ?? [] } satisfies Committed
    })

    /** The items of a planned set as their answers show them. */
    const itemsAnswer = (items: ReadonlyArray<ItemRules.Planned>) =>
      items.map((x) =>
        itemAnswer(
          {
            id: x.id,
            price_id: x.version.id,
            price_version_id: x.version.price_version_id,
            quantity: x.quantity.toString(),
            created_at: x.created_at
          },
          x.version
        )
      )

    const list = Effect.fn("ItemChanges.list")(function* (merchantId: string, subscriptionId: string) {
      const sv = yield* loadSub(subs, merchantId, subscriptionId)
      const read = yield* answers(merchantId, [{ rec: sv.value, answer: withDiscounts(sv.value) }])
      return read[0]!.items ?? []
    })

    return { preview, commit, list } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
