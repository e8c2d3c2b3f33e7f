/**
 * Owed refunds: what a downgrade gives back of the cycle's payments, durable on the subscription
 * as `owed_refunds` until paid out — refunded from the cycle's payments, the newest first (each
 * through `Refunds`, keyed so that a rerun takes the refunds already made), the rest credited to
 * the balance. Run by the change itself and by the `refund_owed` work item.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as GiveBack from "../invoices/GiveBack.js"
import * as Decimal from "../money/Decimal.js"
import * as Entities from "../kernel/Entities.js"
import * as Ids from "../kernel/Ids.js"
import { laneOf, must, nowOf } from "../kernel/ServiceSupport.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type * as Invoicing from "../invoices/Invoicing.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import type * as Refund from "./Refund.js"
import * as Refunds from "./Refunds.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"

/**
 * The owed refunds service.
 *
 * @since 0.1.0
 */
export class OwedRefunds extends Context.Service<OwedRefunds>()("@recur/core/OwedRefunds", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const refunds = yield* Refunds.Refunds
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const trades = storage.repository(Entities.trade)
    const { saveSub } = writes(storage)

    /**
     * Pays out what one downgrade owes (a negative net) from the cycle's payments, the newest
     * first (an upgrade's charge before the cycle's invoice), never more than each still holds,
     * each keyed by `${key}:${trade}` so that a rerun after a crash takes the refunds already
     * made instead of making them again; answers what no payment could take (a charge not
     * collected: the caller credits it).
     */
    const refundCycle = (
      merchantId: string,
      subscriptionId: string,
      entry: {
        readonly key: string
        readonly cycle_index: number
        readonly owed: Money.Money
        readonly shares?: ReadonlyArray<Entities.OwedShare> | undefined
      }
    ) =>
      Effect.gen(function* () {
        const { owed } = entry
        /** What the trade still holds (0 unless it succeeded). */
        const holdsOf = (tradeId: string) =>
          Effect.gen(function* () {
            const t = (yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) =>
              Effect.orDie(must(o, "trade", tradeId))
            )).value.trade
            if (t.trade_status !== "succeeded") return 0n
            return GiveBack.refundable(
              Result.getOrThrow(Money.parse(t.amount, t.currency)),
              Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency))
            ).amount
          })
        /** One refund of `take` from a trade, keyed so that a rerun takes the one already made. */
        const pay = (tradeId: string, take: bigint, tax_lines: ReadonlyArray<Invoicing.TaxLine> | null) =>
          refunds.refundOwed(
            merchantId,
            {
              tradeId: Ids.TradeId.make(tradeId),
              amount: Option.some(Decimal.make(take, Money.exponentOf(owed.currency))),
              reason: Option.some("proration"),
              requestKey: Option.some(`${entry.key}:${tradeId}`)
            },
            tax_lines
          )
        const earlierOf = (tradeId: string) =>
          Effect.map(refunds.refundByKey(merchantId, `${entry.key}:${tradeId}`), (o) =>
            Option.map(o, (r) => Result.getOrThrow(Money.parse(r.refund_amount, owed.currency)).amount)
          )
        // the quote's shares: each refunded from its invoice's trade with the tax the quote stated;
        // what a trade cannot take (credit applied to the invoice) is credited against that invoice
        // only settled refunds count as paid out: one still pending (or unanswered) keeps the
        // entry for a later run; a failed one gave nothing back, so its amount is credited instead
        let unsettled = false
        const counted = (r: Refund.Refund, take: bigint) => {
          if (r.refund_status === "pending") unsettled = true
          return r.refund_status === "failed" ? 0n : take
        }
        if (entry.shares !== undefined) {
          const leftovers: Array<{ readonly invoice_id: string | null; readonly amount: bigint }> = []
          for (const share of entry.shares) {
            const whole = Result.getOrThrow(Money.parse(share.amount, owed.currency))
            const earlier = share.trade_id !== null ? yield* earlierOf(share.trade_id) : Option.none<bigint>()
            let take = 0n
            if (Option.isSome(earlier)) take = earlier.value
            else if (share.trade_id !== null) {
              const holds = yield* holdsOf(share.trade_id)
              take = holds < whole.amount ? holds : whole.amount
            }
            if (take > 0n && share.trade_id !== null)
              take = counted(
                yield* pay(
                  share.trade_id,
                  take,
                  GiveBack.partOf(
                    CycleLedger.linesOf(share.tax_lines, owed.currency),
                    Money.make(take, owed.currency),
                    whole
                  )
                ),
                take
              )
            if (whole.amount - take > 0n) leftovers.push({ invoice_id: share.invoice_id, amount: whole.amount - take })
          }
          return { leftovers, unsettled }
        }
        const cycle = (yield* Effect.orDie(
          invoices.list(merchantId, {
            limit: 100,
            filters: [
              { column: "subscription_id", op: "in", values: [subscriptionId] },
              { column: "cycle_index", op: "in", values: [entry.cycle_index] }
            ]
          })
        )).list
        // newest first; ids sort in creation order within one instant
        const paying = CycleLedger.newestFirst(
          cycle.filter((i) => i.trade_id !== null && CycleLedger.PAYING.includes(i.invoice_type))
        )
        let left = owed.amount
        for (const inv of paying) {
          if (left <= 0n) break
          const earlier = yield* earlierOf(inv.trade_id!)
          let take: bigint
          if (Option.isSome(earlier)) take = earlier.value
          else {
            const holds = yield* holdsOf(inv.trade_id!)
            take = holds < left ? holds : left
          }
          if (take <= 0n) continue
          // a pending refund found by its key is asked again (the gateway de-duplicates by refund id)
          left -= counted(yield* pay(inv.trade_id!, take, null), take)
        }
        return { leftovers: left > 0n ? [{ invoice_id: null, amount: left }] : [], unsettled }
      })

    /**
     * Settles every refund a subscription's downgrades still owe: refunds from the cycle's
     * payments, the rest to the credit balance, and the entry removed in the same transaction
     * as that credit — so a crash at any point leaves the entry for the next run, and no run
     * refunds or credits twice. Run by the change itself and by the `refund_owed` work item.
     */
    const settle = Effect.fn("OwedRefunds.settle")(function* (merchantId: string, subscriptionId: string) {
      const merchant = yield* merchants.get(merchantId)
      const first = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        Effect.orDie(must(o, "subscription", subscriptionId))
      )
      for (const pending of first.value.owed_refunds) {
        const owed = Result.getOrThrow(Money.parse(pending.owed, first.value.currency))
        const { leftovers, unsettled } = yield* refundCycle(merchantId, subscriptionId, { ...pending, owed })
        if (unsettled) {
          // a refund of it has not settled yet: the entry stays, and is looked at again later
          yield* storage.workQueue.schedule({
            lane: laneOf(merchant),
            merchant_id: merchantId,
            kind: "refund_owed",
            subject_id: subscriptionId,
            due_at: (yield* nowOf(merchant)) + settings.reconcileAfterMs
          })
          continue
        }
        const left = leftovers.reduce((a, l) => a + l.amount, 0n)
        yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
              Effect.orDie(must(o, "subscription", subscriptionId))
            )
            // another run settled it meanwhile
            if (!sv.value.owed_refunds.some((e) => e.key === pending.key)) return
            const credit = Result.getOrThrow(
              Money.parse(sv.value.subscription.credit_balance, owed.currency, { allowNegative: true })
            )
            yield* saveSub(
              {
                ...leftovers.reduce(
                  (r, l) =>
                    CycleLedger.withCredited(r, pending.cycle_index, Money.make(l.amount, owed.currency), l.invoice_id),
                  sv.value
                ),
                owed_refunds: sv.value.owed_refunds.filter((e) => e.key !== pending.key),
                subscription:
                  left > 0n
                    ? new Subscription.Subscription(
                        {
                          ...sv.value.subscription,
                          credit_balance: Money.format(Money.make(credit.amount + left, owed.currency))
                        },
                        { disableChecks: true }
                      )
                    : sv.value.subscription
              },
              sv.version,
              at,
              {
                sourceType: "refund_leftover",
                sourceId: pending.key,
                description: "a refund the charges could not take, credited to the balance"
              }
            )
          })
        )
      }
    })

    return { settle } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
