/**
 * Price and quantity changes of a running subscription: the plan (what a change credits and
 * charges, by the rules of `ChangeQuote`), the preview and its quote, the commit that produces
 * exactly the quoted numbers (settled by `ChangeSettlement`, the path item changes share, and
 * written as `ChangeCommit` says), scheduled changes and their revocation, quantity changes for
 * the next cycle. A change's proration is chosen per
 * change (`always_invoice`/`immediate`, `create_prorations`, `none`); a change to another
 * interval is a switch (`IntervalSwitch`); every change stays within the amount bounds.
 *
 * @since 0.1.0
 */
import * as BillingAnchor from "./BillingAnchor.js"
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Catalog from "../catalog/Catalog.js"
import * as Discounts from "../discounts/Discounts.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { msOf, nowOf } from "../kernel/ServiceSupport.js"
import { fullCycle } from "./SubscriptionTerms.js"
import { loadSub, mustBeLive, writes } from "./SubscriptionStore.js"
import * as CycleLedger from "../invoices/CycleLedger.js"
import type * as GiveBack from "../invoices/GiveBack.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Ports from "../kernel/Ports.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Schedule from "../schedules/Schedule.js"
import * as ChangeCommit from "./ChangeCommit.js"
import * as ChangeQuote from "./ChangeQuote.js"
import * as IntervalSwitch from "./IntervalSwitch.js"
import * as IntervalSwitches from "./IntervalSwitches.js"
import * as ChangeSettlement from "./ChangeSettlement.js"

/**
 * A change of a running subscription's price, quantity or both (at least one is set). Built
 * from the API's request body by the contract's `Requests.changeCommand`.
 *
 * @since 0.1.0
 */
export interface ChangeCommand {
  readonly subscriptionId: Ids.SubscriptionId
  /** The price to move to; none (or the current price) keeps it. */
  readonly priceId: Option.Option<Ids.PriceId>
  /** The new quantity (1 … 999,999,999); only for prices billed by quantity. */
  readonly quantity: Option.Option<bigint>
  /** Now (prorated per `proration`) or at the end of the current period. */
  readonly effective: "immediate" | "end_of_period"
  /**
   * How an immediate price change settles the rest of the period: `always_invoice` (or its alias
   * `immediate`, the seed's name) credits and charges now; `create_prorations` records the credit
   * and the charge as pending lines the next cycle's invoice bills; `none` neither.
   */
  readonly proration: "immediate" | "always_invoice" | "create_prorations" | "none"
  /** The quote a commit must reproduce exactly (from a preview of the same change). */
  readonly quoteId: Option.Option<string>
}

/**
 * A {@link ChangeCommand} from its parts, with the defaults of the API: immediate, prorated,
 * no quote. Ids are checked for their prefix (a wrong one throws: this is for code, not for
 * requests; the contract's `Requests.changeCommand` decodes a request body).
 *
 * @example
 * yield* priceChanges.changePrice(merchantId, PriceChanges.change(sub.id, { priceId: pro, quantity: 3n }))
 * @since 0.1.0
 */
export const change = (
  subscriptionId: string,
  parts: {
    readonly priceId?: string | undefined
    readonly quantity?: bigint | undefined
    readonly effective?: ChangeCommand["effective"] | undefined
    readonly proration?: ChangeCommand["proration"] | undefined
    readonly quoteId?: string | undefined
  }
): ChangeCommand => ({
  subscriptionId: Ids.SubscriptionId.make(subscriptionId),
  priceId: Option.map(Option.fromUndefinedOr(parts.priceId), (id) => Ids.PriceId.make(id)),
  quantity: Option.fromUndefinedOr(parts.quantity),
  effective: parts.effective ?? "immediate",
  proration: parts.proration ?? "immediate",
  quoteId: Option.fromUndefinedOr(parts.quoteId)
})

/**
 * What a change will bill, exactly.
 *
 * @since 0.1.0
 */
export interface Quote {
  readonly quote_id: string
  readonly subscription_id: string
  readonly effective_type: "immediate" | "end_of_period"
  /** The mode asked (an item change's `next_cycle` included). */
  readonly proration: ChangeCommand["proration"] | "next_cycle"
  readonly at: number
  readonly currency: string
  readonly credit: string
  readonly charge: string
  readonly net: string
  /** Tax on the net (inclusive and exclusive), at the customer's address; `0.00` when nothing moves now. */
  readonly tax: string
  /**
   * What moves now, tax included: charged for an upgrade, given back (negative) for a refund or a
   * credit to the balance; `0.00` otherwise. A commit with the quote charges exactly this.
   */
  readonly total: string
  /**
   * `upgrade` (charged now), `refund`, `credit_balance`, `none`, `scheduled`, `quantity_next_cycle`
   * or `pending_prorations` (the lines are billed by the next cycle's invoice, at `billed_at`).
   */
  readonly outcome:
    | "upgrade"
    | "refund"
    | "credit_balance"
    | "none"
    | "scheduled"
    | "quantity_next_cycle"
    | "pending_prorations"
    | "interval_switch"
  /**
   * When the lines are billed (Unix ms): by the next cycle's invoice (`pending_prorations`), or now,
   * as the new period's invoice (`interval_switch`, the new period's start).
   */
  readonly billed_at?: number
  readonly lines: ReadonlyArray<{ readonly description: string; readonly amount: string }>
  readonly effective_at: number
  /**
   * The subscription's discounts whose products do not include the new price's: they stop
   * applying from the change on (`effective_at`) — the charge above is without them, and so is
   * every later cycle. Empty when the change keeps every discount.
   */
  readonly discounts_ending: ReadonlyArray<{ readonly discount_id: string; readonly discount_code: string }>
  /**
   * The metered item's usage so far that an item change now deleting it, or moving it to another
   * price, keeps for the next renewal invoice (billed there as a `usage` line, rated at the version
   * in force until the change); absent when the change keeps none.
   */
  readonly kept_usage?: ReadonlyArray<{ readonly description: string; readonly amount: string }>
}

/** Whether the record holds pending proration lines of its current cycle. */
const pendingOfCycle = (rec: Entities.SubscriptionRecord): boolean =>
  rec.pending_prorations.some((p) => p.cycle_index === rec.subscription.cycle_index)

/**
 * The instant a quote id was priced at, or undefined when the text is not a quote id.
 *
 * @since 0.1.0
 */
export const quoteInstant = ChangeQuote.quoteInstant

/**
 * The price-change service.
 *
 * @since 0.1.0
 */
export class PriceChanges extends Context.Service<PriceChanges>()("@recur/core/PriceChanges", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settlement = yield* ChangeSettlement.make
    const documents = settlement.documents
    const taxes = yield* Ports.TaxCalculator
    const { saveSub, schedule, subEvents, version } = writes(storage)
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const subs = storage.repository(Entities.subscription)

    const load = (merchantId: string, id: string) => loadSub(subs, merchantId, id)
    const live = mustBeLive

    const plan = (merchantId: string, command: ChangeCommand, at: number) =>
      Effect.gen(function* () {
        const subscriptionId = command.subscriptionId
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* load(merchantId, subscriptionId)
        const rec = sv.value
        yield* live(rec, "change")
        // a schedule in force decides the price and quantity of each cycle: release it first
        if (Schedule.governs(rec.schedule ?? null))
          return yield* new Errors.StateConflict({
            resource: "subscription",
            id: subscriptionId,
            state: rec.subscription.status,
            reason: "a subscription schedule governs its price and quantity; release or cancel the schedule first"
          })
        // an item set waits for the next cycle: it says the base item's price and quantity then
        if ((rec.pending_items ?? null) !== null)
          return yield* new Errors.StateConflict({
            resource: "subscription",
            id: subscriptionId,
            state: rec.subscription.status,
            reason: "an item change waits for the next cycle; revoke it first (revoke-price-change)"
          })
        const effective_type = command.effective
        const prorationMode = command.proration
        const quantity = command.quantity
        const wrongQuantity = ChangeQuote.quantityRefusal(subscriptionId, rec, quantity)
        if (wrongQuantity) return yield* wrongQuantity
        const current = yield* version(merchantId, rec.subscription.price_version_id)
        const wanted = Option.filter(command.priceId, (id) => id !== rec.subscription.price_id)
        const target = Option.isSome(wanted)
          ? yield* Effect.catchTag(
              // a private price of another customer is no such price for this subscription
              catalog.sellableVersion(merchantId, wanted.value, rec.subscription.customer_id),
              "PriceNotFound",
              () => Effect.fail(ChangeQuote.refusal(subscriptionId, wanted.value, "not_found", "no such price"))
            )
          : undefined
        const wrongTarget = target && ChangeQuote.targetRefusal(subscriptionId, current, target)
        if (wrongTarget) return yield* wrongTarget
        // each price is one item: the base item cannot move to another item's price
        if (target && rec.extra_items.some((x) => x.price_id === target.id))
          return yield* ChangeQuote.refusal(
            subscriptionId,
            target.id,
            "already_an_item",
            "the price is already one of the subscription's items"
          )
        // a discount covers only its products: moving to a price outside them ends it from the change on
        const scope = target
          ? yield* Discounts.scopeOn(storage, merchantId, rec.discounts, target.product_id)
          : { kept: rec.discounts, ending: [] }
        // the quote names those that would still apply from the change on
        const discounts_ending = ChangeQuote.endingDiscounts(rec, scope.ending, effective_type)
        const after: Entities.SubscriptionRecord = { ...rec, discounts: scope.kept }
        const qty = BigInt(rec.subscription.quantity)
        // no cycle of the new price or quantity may bill more than an invoice can carry
        const aboveBound = ChangeQuote.boundRefusal(
          subscriptionId,
          rec,
          target ?? current,
          quantity,
          Option.getOrElse(quantity, () => qty)
        )
        if (aboveBound) return yield* aboveBound
        const switching = target !== undefined && IntervalSwitch.switchesInterval(current, target)
        const wrongSwitch = switching && IntervalSwitch.refusal(subscriptionId, rec, target, command)
        if (wrongSwitch) return yield* wrongSwitch
        const periodStart =
          rec.subscription.current_period_start !== null ? msOf(rec.subscription.current_period_start) : at
        const periodEnd = rec.subscription.current_period_end !== null ? msOf(rec.subscription.current_period_end) : at
        const currency = rec.currency
        const head: ChangeQuote.Head = {
          subscription_id: subscriptionId,
          effective_type,
          proration: prorationMode,
          at,
          currency,
          discounts_ending
        }
        let quote!: ChangeQuote.Priced
        let collected: GiveBack.Collected | undefined
        let available: Money.Money | undefined
        let switched: IntervalSwitches.Switched | undefined
        if (switching && target && rec.subscription.status !== "trial") {
          const planned = yield* planSwitch({
            merchantId,
            merchant,
            rec,
            after,
            current,
            target,
            at,
            period: { start: periodStart, end: periodEnd },
            proration: prorationMode,
            quantity,
            head
          })
          collected = planned.collected
          quote = planned.quote
          switched = planned.switched
        } else if (!target) {
          quote = ChangeQuote.unprorated(head, "quantity_next_cycle", periodEnd)
        } else if (effective_type === "end_of_period") {
          quote = ChangeQuote.unprorated(head, "scheduled", periodEnd)
        } else if (prorationMode === "none" || rec.subscription.status === "trial") {
          quote = ChangeQuote.unprorated(head, "none", at)
        } else if (prorationMode === "create_prorations") {
          if (rec.subscription.cancel_at_period_end) return yield* ChangeQuote.endingRefusal(subscriptionId, target.id)
          // the credit may cancel pending charges of the cycle first, then what its invoices collected
          available = ChangeQuote.pendingAvailable(rec)
          collected = yield* CycleLedger.collectedBy(storage, merchantId, rec, rec.subscription.cycle_index)
          quote = ChangeQuote.pendingQuote(
            ChangeQuote.prorated(head, {
              merchant,
              rec,
              after,
              current,
              target,
              quantity: qty,
              collected,
              // the short first period before a billing anchor prorates over the whole period it is part of
              period: BillingAnchor.prorationSpan(rec, current, { start: periodStart, end: periodEnd }),
              pendingAvailable: available
            }),
            periodEnd
          )
        } else if (pendingOfCycle(rec)) {
          // the cycle's pending lines would be billed next to a credit that already counted them
          return yield* ChangeQuote.refusal(
            subscriptionId,
            target.id,
            "proration",
            "the subscription has pending proration lines the next invoice bills: change with proration create_prorations or none until then"
          )
        } else {
          collected = yield* CycleLedger.collectedBy(storage, merchantId, rec, rec.subscription.cycle_index)
          quote = ChangeQuote.prorated(head, {
            merchant,
            rec,
            after,
            current,
            target,
            quantity: qty,
            collected,
            // the short first period before a billing anchor prorates over the whole period it is part of
            period: BillingAnchor.prorationSpan(rec, current, { start: periodStart, end: periodEnd })
          })
        }
        // what moves now, taxed at the customer's address like a cycle invoice: an upgrade's
        // invoice, or the net given back with the exclusive tax paid on it
        const settled = yield* settlement.settle({ merchantId, rec, quote, collected, available })
        const { upgrade, back, shares, fromPaid } = settled
        quote = settled.quote
        const hash = yield* Secrets.sha256Hex(ChangeQuote.hashed(command, ChangeQuote.stateOf(sv.value), quote))
        const basis = switched
          ? Option.some(switched.basis)
          : ChangeQuote.movesBasis(quote)
            ? Option.some(Money.format(fullCycle(after, target!, qty, rec.subscription.cycle_index)))
            : Option.none<string>()
        return {
          rec,
          version: sv.version,
          kept: scope.kept,
          merchant,
          current,
          target,
          quantity,
          basis,
          upgrade,
          back,
          shares,
          fromPaid,
          switched,
          quote: { ...quote, quote_id: `quo_${at.toString(36)}_${hash.slice(0, 24)}` } as Quote
        }
      })

    const planSwitch = IntervalSwitches.planSwitch(storage, taxes)
    const openSwitched = IntervalSwitches.openSwitched(
      storage,
      documents,
      schedule,
      (yield* Settings.Settings).reconcileAfterMs
    )

    const previewChange = Effect.fn("PriceChanges.previewChange")(function* (
      merchantId: string,
      command: ChangeCommand
    ) {
      const merchant = yield* merchants.get(merchantId)
      return (yield* plan(merchantId, command, yield* nowOf(merchant))).quote
    })

    const changePrice = Effect.fn("PriceChanges.changePrice")(function* (merchantId: string, command: ChangeCommand) {
      const subscriptionId = command.subscriptionId
      const merchant = yield* merchants.get(merchantId)
      const now = yield* nowOf(merchant)
      // a quote is priced at the instant it names; a commit re-plans at that instant
      const at = yield* ChangeSettlement.commitInstant(subscriptionId, command.quoteId, now)
      // a lost race over the subscription (a refund or another change committed between the plan
      // and the save) is planned again on what it holds now: nothing has left the engine yet (the
      // charge is made after the commit); a quote named by id that no longer holds is QuoteStale
      const { quote, rec, charge } = yield* Effect.gen(function* () {
        const planned = yield* plan(merchantId, command, at)
        if (Option.isSome(command.quoteId) && planned.quote.quote_id !== command.quoteId.value) {
          return yield* new Errors.QuoteStale({ quoteId: command.quoteId.value, subscriptionId })
        }
        const { quote, rec, target } = planned
        const charge = yield* storage.withTransaction(
          Effect.gen(function* () {
            let next: Entities.SubscriptionRecord = rec
            if (Option.isSome(planned.quantity)) {
              next = ChangeCommit.withPendingQuantity(
                next,
                planned.quantity.value,
                quote.effective_at > at ? quote.effective_at : at
              )
            }
            let tradeToCharge: Option.Option<string> = Option.none()
            if (target) {
              if (planned.switched) {
                const opened = yield* openSwitched(planned.merchant, rec, next, target, planned.kept, planned.basis, {
                  switched: planned.switched,
                  now
                })
                next = opened.next
                tradeToCharge = opened.tradeToCharge
                yield* subEvents(
                  merchantId,
                  next,
                  Result.getOrThrow(
                    Lifecycle.transition(Lifecycle.subscription, rec.subscription.status, "change_price")
                  ).events,
                  now
                )
              } else if (quote.outcome === "scheduled") {
                next = { ...next, scheduled_price_version_id: target.price_version_id }
              } else {
                // discounts outside the new price's products end with the change
                const moved = ChangeCommit.movedTo(next, target, planned.kept, planned.basis)
                const done = yield* settlement.commit({
                  merchant: planned.merchant,
                  rec,
                  next: moved,
                  price: target,
                  settled: planned,
                  now
                })
                next = done.next
                tradeToCharge = done.tradeToCharge
                yield* subEvents(
                  merchantId,
                  next,
                  Result.getOrThrow(
                    Lifecycle.transition(Lifecycle.subscription, rec.subscription.status, "change_price")
                  ).events,
                  now
                )
              }
            }
            yield* Effect.orDie(saveSub(next, planned.version, now)).pipe(
              Effect.catchDefect(() =>
                Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: subscriptionId }))
              )
            )
            return { tradeToCharge, owesRefund: quote.outcome === "refund" || planned.switched?.owesRefund === true }
          })
        )
        return { quote, rec, charge }
      }).pipe(Effect.retry({ while: (e) => e._tag === "ConcurrentUpdate" && e.resource === "subscription", times: 5 }))
      yield* settlement.afterCommit(merchantId, rec, charge)
      return quote
    })

    const revokePriceChange = Effect.fn("PriceChanges.revokePriceChange")(function* (
      merchantId: string,
      subscriptionId: string
    ) {
      const merchant = yield* merchants.get(merchantId)
      const sv = yield* load(merchantId, subscriptionId)
      // every change waiting for the next cycle: an end-of-period price change, a pending
      // quantity (the base item's or another's), an item's scheduled version, an item set (next_cycle)
      if (!ChangeCommit.hasPending(sv.value))
        return { subscription_id: subscriptionId, result: "no_pending_change" as const }
      yield* saveSub(ChangeCommit.withoutPending(sv.value), sv.version, yield* nowOf(merchant))
      return { subscription_id: subscriptionId, result: "revoked" as const }
    })

    /** Moves a subscription by `trigger` with the fields `change` gives (a refused move is a `StateConflict`). */
    return { previewChange, changePrice, revokePriceChange } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
