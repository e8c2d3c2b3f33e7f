/**
 * Price and quantity changes of a running subscription: the plan (what a change credits and
 * charges, with the proration rule of docs/proration.md), the preview and its quote, the commit
 * that produces exactly the quoted numbers, scheduled changes and their revocation, quantity
 * changes for the next cycle. A change keeps the interval and stays within the amount bounds.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Catalog from "./Catalog.js"
import * as Decimal from "./Decimal.js"
import * as Entities from "./Entities.js"
import * as Errors from "./Errors.js"
import { dt, emit, msOf, nowOf } from "./internal/engine.js"
import {
  cycleAmounts,
  fullCycle,
  invalid,
  loadSub,
  mustBeLive,
  newInvoice,
  newTrade,
  planBasis,
  writes
} from "./internal/records.js"
import * as Invoicing from "./Invoicing.js"
import * as Lifecycle from "./Lifecycle.js"
import * as Merchants from "./Merchants.js"
import * as Money from "./Money.js"
import * as Payments from "./Payments.js"
import * as PriceRules from "./PriceRules.js"
import * as Proration from "./Proration.js"
import * as Refunds from "./Refunds.js"
import * as Secrets from "./Secrets.js"
import * as Store from "./Store.js"
import * as Subscription from "./Subscription.js"
import * as Trade from "./Trade.js"

/**
 * The body of `POST /api/v1/subscription/{id}` (and of preview-change).
 *
 * @since 0.1.0
 */
export interface ChangeInput {
  readonly price_id?: string | undefined
  readonly quantity?: string | undefined
  readonly effective_type?: "immediate" | "end_of_period" | undefined
  readonly proration?: "immediate" | "none" | undefined
  readonly quote_id?: string | undefined
}

/**
 * What a change will bill, exactly.
 *
 * @since 0.1.0
 */
export interface Quote {
  readonly quote_id: string
  readonly subscription_id: string
  readonly effective_type: "immediate" | "end_of_period"
  readonly proration: "immediate" | "none"
  readonly at: number
  readonly currency: string
  readonly credit: string
  readonly charge: string
  readonly net: string
  /** `upgrade` (charged now), `refund`, `credit_balance`, `none` or `scheduled`. */
  readonly outcome: "upgrade" | "refund" | "credit_balance" | "none" | "scheduled" | "quantity_next_cycle"
  readonly lines: ReadonlyArray<{ readonly description: string; readonly amount: string }>
  readonly effective_at: number
}

const QUOTE_TTL_MS = 15 * 60_000

/**
 * The price-change service.
 *
 * @since 0.1.0
 */
export class PriceChanges extends Context.Service<PriceChanges>()("@recur/core/PriceChanges", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const payments = yield* Payments.Payments
    const refunds = yield* Refunds.Refunds
    const { saveSub, schedule, subEvents, version } = writes(storage)
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const trades = storage.repository(Entities.trade)

    const load = (merchantId: string, id: string) => loadSub(subs, merchantId, id)
    const live = mustBeLive

    const plan = (merchantId: string, subscriptionId: string, input: ChangeInput, at: number) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* load(merchantId, subscriptionId)
        const rec = sv.value
        yield* live(rec, "change")
        const effective_type = input.effective_type ?? "immediate"
        const prorationMode = input.proration ?? "immediate"
        if (!["immediate", "end_of_period"].includes(effective_type))
          return yield* invalid("effective_type", "must be immediate or end_of_period")
        if (!["immediate", "none"].includes(prorationMode))
          return yield* invalid("proration", "must be immediate or none")
        if (input.price_id === undefined && input.quantity === undefined)
          return yield* invalid("price_id", "price_id or quantity is required")
        let quantity: Option.Option<bigint> = Option.none()
        if (input.quantity !== undefined) {
          if (rec.subscription.billing_dimension !== "quantity")
            return yield* invalid("quantity", "only subscriptions with billing_dimension quantity have a quantity")
          const q = PriceRules.validateQuantity("quantity", input.quantity)
          if (Result.isFailure(q)) return yield* invalid("quantity", q.failure.message)
          quantity = Option.some(q.success)
        }
        const current = yield* version(merchantId, rec.subscription.price_version_id)
        const target =
          input.price_id !== undefined && input.price_id !== rec.subscription.price_id
            ? yield* Effect.catchTag(catalog.sellableVersion(merchantId, input.price_id), "NotFound", () =>
                invalid("price_id", "no such price")
              )
            : undefined
        if (target) {
          if (target.billing_type !== "recurring" || target.price_plan === null)
            return yield* invalid("price_id", "a subscription can only change to a recurring price")
          if (target.currency !== current.currency || target.billing_dimension !== current.billing_dimension) {
            return yield* invalid("price_id", "the new price must have the same currency and billing dimension")
          }
          const [from, to] = [current.price_plan, target.price_plan]
          if (
            from === null ||
            from.billing_cycle_unit !== to.billing_cycle_unit ||
            from.billing_cycle_count !== to.billing_cycle_count
          ) {
            return yield* invalid(
              "price_id",
              `the new price must bill every ${from?.billing_cycle_count ?? 1} ${from?.billing_cycle_unit ?? "cycle"} like the current one; start a new subscription to change the interval`
            )
          }
        }
        const qty = BigInt(rec.subscription.quantity)
        // no cycle of the new price or quantity may bill more than an invoice can carry
        const sells = target ?? current
        const sellsQty = Option.getOrElse(quantity, () => qty)
        for (const amount of cycleAmounts(sells, sellsQty)) {
          const settled =
            rec.fx_rate !== null && rec.currency !== amount.currency
              ? Result.getOrThrow(Money.convert(amount, Result.getOrThrow(Decimal.parse(rec.fx_rate)), rec.currency))
              : amount
          if (!Money.isWithinBounds(settled)) {
            return yield* invalid(
              Option.isSome(quantity) ? "quantity" : "price_id",
              `${Money.format(settled)} ${settled.currency} a cycle is above the most one invoice may carry`
            )
          }
        }
        const periodStart =
          rec.subscription.current_period_start !== null ? msOf(rec.subscription.current_period_start) : at
        const periodEnd = rec.subscription.current_period_end !== null ? msOf(rec.subscription.current_period_end) : at
        const currency = rec.currency
        const zero = Money.format(Money.zero(currency))
        let quote: Omit<Quote, "quote_id">
        // nothing to prorate: a quantity change at the next cycle, a change at the period's end,
        // proration "none" or a change during a trial
        const unprorated = (outcome: Quote["outcome"], effective_at: number): Omit<Quote, "quote_id"> => ({
          subscription_id: subscriptionId,
          effective_type,
          proration: prorationMode,
          at,
          currency,
          credit: zero,
          charge: zero,
          net: zero,
          outcome,
          lines: [],
          effective_at
        })
        if (!target) {
          quote = unprorated("quantity_next_cycle", periodEnd)
        } else if (effective_type === "end_of_period") {
          quote = unprorated("scheduled", periodEnd)
        } else if (prorationMode === "none" || rec.subscription.status === "trial") {
          quote = unprorated("none", at)
        } else {
          // credit what a whole period of the plan in force was bought for (not the cycle
          // invoice: an earlier change this cycle replaced it), charge the new plan the same way
          const paid = planBasis(rec, current)
          const newFull = fullCycle(rec, target, qty, rec.subscription.cycle_index)
          const policy = Result.getOrElse(
            Proration.parsePolicy(merchant.proration_policy),
            () => Proration.defaultPolicy
          )
          const p = Result.getOrThrow(
            Proration.prorate({
              policy,
              period: { start: periodStart, end: periodEnd },
              at,
              paid,
              newAmount: newFull,
              creditMode: merchant.proration_credit
            })
          )
          quote = {
            subscription_id: subscriptionId,
            effective_type,
            proration: prorationMode,
            at,
            currency,
            credit: Money.format(p.credit),
            charge: Money.format(p.charge),
            net: Money.format(p.net),
            outcome:
              p.outcome._tag === "Upgrade"
                ? "upgrade"
                : p.outcome._tag === "Refund"
                  ? "refund"
                  : p.outcome._tag === "CreditBalance"
                    ? "credit_balance"
                    : "none",
            lines: [
              { description: `Unused time on ${current.price_name}`, amount: Money.format(Money.negate(p.credit)) },
              { description: `Remaining time on ${target.price_name}`, amount: Money.format(p.charge) }
            ],
            effective_at: at
          }
        }
        const hash = yield* Secrets.sha256Hex(
          JSON.stringify([
            subscriptionId,
            sv.version,
            input.price_id ?? null,
            input.quantity ?? null,
            effective_type,
            prorationMode,
            at,
            quote.net,
            quote.credit,
            quote.charge
          ])
        )
        const basis =
          quote.outcome === "upgrade" ||
          quote.outcome === "refund" ||
          quote.outcome === "credit_balance" ||
          (quote.outcome === "none" && prorationMode === "immediate")
            ? Option.some(Money.format(fullCycle(rec, target!, qty, rec.subscription.cycle_index)))
            : Option.none<string>()
        return {
          rec,
          version: sv.version,
          merchant,
          current,
          target,
          quantity,
          basis,
          quote: { ...quote, quote_id: `quo_${at.toString(36)}_${hash.slice(0, 24)}` } as Quote
        }
      })

    const previewChange = (merchantId: string, subscriptionId: string, input: ChangeInput) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        return (yield* plan(merchantId, subscriptionId, input, yield* nowOf(merchant))).quote
      }).pipe(Effect.withSpan("Subscriptions.previewChange"))

    const changePrice = (merchantId: string, subscriptionId: string, input: ChangeInput) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const now = yield* nowOf(merchant)
        let at = now
        if (input.quote_id !== undefined) {
          const m = /^quo_([0-9a-z]+)_[0-9a-f]{24}$/.exec(input.quote_id)
          if (!m) return yield* invalid("quote_id", "malformed quote id")
          at = parseInt(m[1]!, 36)
          if (at > now || now - at > QUOTE_TTL_MS)
            return yield* new Errors.StateConflict({
              resource: "quote",
              id: input.quote_id,
              state: "expired",
              reason: "the quote has expired; preview again"
            })
        }
        const planned = yield* plan(merchantId, subscriptionId, input, at)
        if (input.quote_id !== undefined && planned.quote.quote_id !== input.quote_id) {
          return yield* new Errors.StateConflict({
            resource: "subscription",
            id: subscriptionId,
            state: planned.rec.subscription.status,
            reason: "the subscription changed since the quote; preview again"
          })
        }
        const { quote, rec, target } = planned
        const charge = yield* storage.withTransaction(
          Effect.gen(function* () {
            let next: Entities.SubscriptionRecord = rec
            if (Option.isSome(planned.quantity)) {
              const pending = rec.subscription.pending_change
              next = {
                ...next,
                subscription: new Subscription.Subscription({
                  ...next.subscription,
                  pending_change: new Subscription.PendingChange({
                    quantity: planned.quantity.value.toString(),
                    cycle_index: rec.subscription.cycle_index + 1,
                    version: (pending?.version ?? 0) + 1,
                    effective_at: dt(quote.effective_at > at ? quote.effective_at : at)
                  })
                })
              }
            }
            let tradeToCharge: Option.Option<string> = Option.none()
            if (target) {
              if (quote.outcome === "scheduled") {
                next = { ...next, scheduled_price_version_id: target.price_version_id }
              } else {
                next = {
                  ...next,
                  scheduled_price_version_id: null,
                  // proration none keeps the basis: the remainder stays paid at the old plan's rate
                  plan_basis: Option.getOrElse(planned.basis, () => next.plan_basis),
                  subscription: new Subscription.Subscription(
                    {
                      ...next.subscription,
                      price_id: target.id,
                      price_version_id: target.price_version_id,
                      price_type: target.price_type,
                      quantity_tiers: target.quantity_tiers,
                      usage_tiers: target.usage_tiers
                    },
                    { disableChecks: true }
                  )
                }
                const cur = rec.currency
                const net = Result.getOrThrow(Money.parse(quote.net, cur, { allowNegative: true }))
                if (quote.outcome === "upgrade") {
                  const draft = Invoicing.total({
                    invoice_type: "upgrade",
                    cycle_index: rec.subscription.cycle_index,
                    currency: cur,
                    lines: quote.lines.map((l) => ({
                      kind: "proration_charge" as const,
                      description: l.description,
                      quantity: 1n,
                      amount: Result.getOrThrow(Money.parse(l.amount, cur, { allowNegative: true }))
                    }))
                  })
                  const trade = yield* newTrade({
                    merchant: planned.merchant,
                    amount: draft.total,
                    customer_id: rec.subscription.customer_id,
                    order_id: rec.subscription.order_id,
                    payment_mode: "subscription",
                    order_type: "upgrade",
                    session: Option.none(),
                    line: null,
                    tax: Money.zero(cur),
                    metadata: {},
                    at: now
                  })
                  const inv = yield* newInvoice({
                    merchant_id: merchantId,
                    draft,
                    trade_id: trade.trade_id,
                    subscription_id: subscriptionId,
                    price_id: target.id,
                    price_version_id: target.price_version_id,
                    customer_id: rec.subscription.customer_id,
                    order_id: rec.subscription.order_id,
                    trigger: "charge",
                    at: now
                  })
                  yield* Effect.orDie(invoices.insert(inv))
                  yield* Effect.orDie(
                    trades.insert({
                      trade: Lifecycle.must(Trade.move(trade, "submit_payment")),
                      attempts: 1,
                      invoice_id: inv.invoice_id,
                      subscription_id: subscriptionId
                    })
                  )
                  yield* emit(storage, {
                    merchant_id: merchantId,
                    type: "v2.trades.created",
                    business_id: trade.trade_id,
                    schema: Trade.Trade,
                    data: trade,
                    at: now
                  })
                  if (rec.payment_token !== null) {
                    tradeToCharge = Option.some(trade.trade_id)
                    yield* schedule(planned.merchant, "charge", trade.trade_id, now)
                  }
                } else if (quote.outcome === "credit_balance") {
                  const credit = Result.getOrThrow(
                    Money.parse(next.subscription.credit_balance, cur, { allowNegative: true })
                  )
                  next = {
                    ...next,
                    subscription: new Subscription.Subscription(
                      {
                        ...next.subscription,
                        credit_balance: Money.format(Money.make(credit.amount - net.amount, cur))
                      },
                      { disableChecks: true }
                    )
                  }
                }
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
                Effect.fail(
                  new Errors.StateConflict({
                    resource: "subscription",
                    id: subscriptionId,
                    state: rec.subscription.status,
                    reason: "modified concurrently; retry"
                  })
                )
              )
            )
            return {
              tradeToCharge,
              refundNet: quote.outcome === "refund" ? Option.some(quote.net) : Option.none<string>()
            }
          })
        )
        if (Option.isSome(charge.tradeToCharge) && rec.payment_token !== null) {
          yield* payments.chargeInvoiceTrade(merchantId, charge.tradeToCharge.value, rec.payment_token)
        }
        if (Option.isSome(charge.refundNet)) {
          const owed = Money.negate(
            Result.getOrThrow(Money.parse(charge.refundNet.value, rec.currency, { allowNegative: true }))
          )
          yield* refunds.refundCycle(merchantId, subscriptionId, rec.subscription.cycle_index, owed)
        }
        return quote
      }).pipe(Effect.withSpan("Subscriptions.changePrice"))

    const revokePriceChange = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* load(merchantId, subscriptionId)
        if (sv.value.scheduled_price_version_id === null)
          return { subscription_id: subscriptionId, result: "no_pending_change" as const }
        yield* saveSub({ ...sv.value, scheduled_price_version_id: null }, sv.version, yield* nowOf(merchant))
        return { subscription_id: subscriptionId, result: "revoked" as const }
      }).pipe(Effect.withSpan("Subscriptions.revokePriceChange"))

    /** Moves a subscription by `trigger` with the fields `change` gives (a refused move is a 409). */
    return { previewChange, changePrice, revokePriceChange } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
