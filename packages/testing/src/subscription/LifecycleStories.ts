/**
 * Subscription scenarios of the lifecycle, usage and refunds: cancel and pause, usage in arrears
 * and over a threshold, refunds never above what was paid, finding a subscription by its invoice
 * or refund. Registered in order by `SubscriptionScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect, type Vitest } from "@effect/vitest"
import { Billing, Metering, PriceChanges, Refunds, SandboxClock, Subscriptions } from "@recur/core"
import { DateTime, Effect, Option } from "effect"
import {
  eventsOf,
  invoicesOf,
  setup,
  subscribe,
  type Services,
  iso,
  monthlyOfFirstProduct,
  subscriptionOf
} from "../ScenarioKit.js"
import { usageEventsOf } from "../Fixtures.js"

const usageTiers = {
  price_type: "based_on_usage",
  model_type: "tiers_price",
  payment_timing: "postpaid",
  billing_dimension: "usage",
  usage_amount: "1",
  usage_unit: "call",
  price_tier_type: "graduated",
  usage_tiers: [
    { usage_min: "0", usage_max: "100", unit_price: "0.20", flat_amount: "" },
    { usage_min: "101", usage_max: "500", unit_price: "0.15", flat_amount: "" },
    { usage_min: "501", usage_max: "", unit_price: "0.10", flat_amount: "" }
  ]
} as const

/**
 * Registers the lifecycle, usage and refund scenarios.
 *
 * @since 0.1.0
 */
export const lifecycleStories = (it: Vitest.MethodsNonLive<Services>) => {
  it.effect("cancel at period end (revocable), immediate cancel, and nothing runs after", () =>
    Effect.gen(function* () {
      const subs = yield* Subscriptions.Subscriptions
      const priceChanges = yield* PriceChanges.PriceChanges
      const billing = yield* Billing.Billing
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
      const a = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* subs.cancel(merchantId, Subscriptions.cancelOf(a.id, { when: "end_of_period" }))
      yield* subs.revokeCancel(merchantId, a.id)
      expect(yield* Effect.flip(subs.revokeCancel(merchantId, a.id))).toMatchObject({
        _tag: "SubscriptionActionRefused",
        action: "revoke cancel"
      })
      const requested = yield* subs.cancel(
        merchantId,
        Subscriptions.cancelOf(a.id, {
          when: "end_of_period",
          reason: "too_expensive"
        })
      )
      expect(requested.cancel_at_period_end).toBe(true)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-06-15T00:00:00Z"))
      const ended = yield* billing.getSubscription(merchantId, a.id)
      expect([ended.status, ended.cancel_reason, DateTime.formatIso(ended.cancel_at!)]).toEqual([
        "canceled",
        "too_expensive",
        "2024-05-01T00:00:00.000Z"
      ])
      expect(yield* invoicesOf(merchantId, a.id)).toHaveLength(1)
      expect(yield* eventsOf(merchantId, a.id)).toEqual([
        "v2.subscription.first",
        "v2.subscription.cancellation_requested",
        "v2.subscription.cancellation_revoked",
        "v2.subscription.cancellation_requested",
        "v2.subscription.canceled"
      ])
      const b = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* subs.cancel(merchantId, Subscriptions.cancelOf(b.id))
      expect(
        yield* Effect.flip(priceChanges.changePrice(merchantId, PriceChanges.change(b.id, { quantity: 2n })))
      ).toMatchObject({ _tag: "SubscriptionNotLive", subscriptionId: b.id, state: "canceled", action: "change" })
      expect(yield* Effect.flip(subs.pause(merchantId, b.id))).toMatchObject({
        _tag: "SubscriptionActionRefused",
        subscriptionId: b.id,
        state: "canceled",
        action: "pause"
      })
    })
  )

  it.effect("pause stops billing; resume starts a new period and bills it", () =>
    Effect.gen(function* () {
      const subs = yield* Subscriptions.Subscriptions
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-04-20T00:00:00Z"))
      yield* subs.pause(merchantId, sub.id)
      yield* sandboxClock.advanceClock(merchantId, iso("2024-07-10T00:00:00Z"))
      expect(yield* invoicesOf(merchantId, sub.id)).toHaveLength(1)
      const resumed = yield* subs.resume(merchantId, sub.id)
      expect([
        resumed.status,
        DateTime.formatIso(resumed.current_period_start!),
        DateTime.formatIso(resumed.current_period_end!)
      ]).toEqual(["active", "2024-07-10T00:00:00.000Z", "2024-08-10T00:00:00.000Z"])
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
        ["initial", "30.00", "success"],
        ["renewal", "30.00", "success"]
      ])
      expect(yield* eventsOf(merchantId, sub.id)).toEqual([
        "v2.subscription.first",
        "v2.subscription.paused",
        "v2.subscription.resumed"
      ])
    })
  )

  it.effect("postpaid usage with graduated tiers is invoiced in arrears; duplicates by event_id count once", () =>
    Effect.gen(function* () {
      const metering = yield* Metering.Metering
      const sandboxClock = yield* SandboxClock.SandboxClock
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
        ...usageTiers,
        price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
      })
      const { result } = yield* subscribe(merchantId, priceId)
      expect(result.trade.amount).toBe("0.00")
      const sub = subscriptionOf(result)
      expect(
        (yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 400, { eventId: "e1" }))).duplicate
      ).toBe(false)
      expect(
        (yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 400, { eventId: "e1" }))).duplicate
      ).toBe(true)
      yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 50, { eventId: "e2" }))
      const summary = yield* metering.usageSummary(merchantId, sub.id)
      expect([
        summary.total_usage_count,
        summary.billing_usage_count,
        summary.trial_usage_count,
        summary.billing_amount
      ]).toEqual([450, 450, 0, "72.50"])
      expect((yield* Effect.flip(metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 0))))._tag).toBe(
        "UsageRefused"
      )
      yield* sandboxClock.advanceClock(merchantId, iso("2024-05-01T00:00:00Z"))
      const invoices = yield* invoicesOf(merchantId, sub.id)
      expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
        ["initial", 0, "0.00"],
        ["renewal", 0, "72.50"]
      ])
      expect((yield* metering.usageSummary(merchantId, sub.id)).total_usage_count).toBe(0)
    })
  )

  it.effect(
    "a cancel bills the usage still owed on a final invoice: now the period so far, at the period's end (or a fixed term's) the whole period",
    () =>
      Effect.gen(function* () {
        const metering = yield* Metering.Metering
        const subs = yield* Subscriptions.Subscriptions
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
          ...usageTiers,
          price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
        })
        const now = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        const atEnd = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        // a fixed term of one cycle: it completes at the period's end, as a cancel then
        const term = subscriptionOf(
          (yield* subscribe(merchantId, priceId, "4242424242424242", { total_cycles: 1 })).result
        )
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(term.id, 200, { eventId: "t-1" }))
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(now.id, 150, { eventId: "n-1" }))
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(atEnd.id, 450, { eventId: "e-1" }))
        yield* subs.cancel(merchantId, Subscriptions.cancelOf(atEnd.id, { when: "end_of_period" }))
        yield* sandboxClock.advanceClock(merchantId, iso("2024-04-10T00:00:00Z"))
        // 100 × 0.20 + 50 × 0.15, rated at the version in force, charged at once
        const canceled = yield* subs.cancel(merchantId, Subscriptions.cancelOf(now.id))
        expect(canceled.status).toBe("canceled")
        yield* sandboxClock.advanceClock(merchantId, iso("2024-06-01T00:00:00Z"))
        const billed = (id: string) =>
          Effect.map(invoicesOf(merchantId, id), (invoices) =>
            invoices.map((i) => [
              i.invoice_type,
              i.cycle_index,
              i.amount,
              i.biz_status,
              i.lines.filter((l) => l.kind === "usage" && l.quantity !== "0").map((l) => [l.quantity, l.amount])
            ])
          )
        expect(yield* billed(now.id)).toEqual([
          ["initial", 0, "0.00", "success", []],
          ["upgrade", 0, "27.50", "success", [["150", "27.50"]]]
        ])
        // no renewal of the ended period: its final invoice is the whole April
        expect(yield* billed(atEnd.id)).toEqual([
          ["initial", 0, "0.00", "success", []],
          ["upgrade", 0, "72.50", "success", [["450", "72.50"]]]
        ])
        expect(yield* billed(term.id)).toEqual([
          ["initial", 0, "0.00", "success", []],
          ["upgrade", 0, "35.00", "success", [["200", "35.00"]]]
        ])
        // the usage stays recorded for its cycle (the summary), billed once
        expect((yield* metering.usageSummary(merchantId, now.id)).total_usage_count).toBe(150)
      })
  )

  it.effect("over_threshold bills as soon as accrued usage reaches the threshold", () =>
    Effect.gen(function* () {
      const metering = yield* Metering.Metering
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
        price_type: "based_on_usage",
        model_type: "per_unit",
        billing_threshold: "1",
        usage_unit_price: "0.10",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call",
        usage_threshold: "100",
        price_plan: { billing_cycle_unit: "over_threshold", base_price_val: "0" }
      })
      const sub = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
      yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 60))
      expect(yield* invoicesOf(merchantId, sub.id)).toHaveLength(1)
      yield* metering.recordUsage(merchantId, Subscriptions.usageOf(sub.id, 50))
      expect((yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
        ["initial", "0.00", "success"],
        ["renewal", "11.00", "success"]
      ])
    })
  )

  it.effect(
    "usage batches: many subscriptions in one call, re-sends counted once, all or nothing, thresholds billed",
    () =>
      Effect.gen(function* () {
        const metering = yield* Metering.Metering
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z", {
          price_type: "based_on_usage",
          model_type: "per_unit",
          billing_threshold: "1",
          usage_unit_price: "0.10",
          payment_timing: "postpaid",
          billing_dimension: "usage",
          usage_amount: "1",
          usage_unit: "call",
          usage_threshold: "100",
          price_plan: { billing_cycle_unit: "over_threshold", base_price_val: "0" }
        })
        const a = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        const b = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
        const flat = subscriptionOf(
          (yield* subscribe(merchantId, yield* monthlyOfFirstProduct(merchantId, "10.00"))).result
        )
        yield* metering.recordUsage(merchantId, Subscriptions.usageOf(a.id, 5, { eventId: "a-0" }))
        const batch = yield* metering.recordUsageBatch(
          merchantId,
          usageEventsOf([
            { subscription_id: a.id, usage_count: 10, event_id: "a-1" },
            { subscription_id: b.id, usage_count: 7, event_id: "b-1" },
            { subscription_id: a.id, usage_count: 5, event_id: "a-0" }, // recorded before
            { subscription_id: b.id, usage_count: 7, event_id: "b-1" }, // twice in this batch
            { subscription_id: a.id, usage_count: 3 } // no event id: never a duplicate
          ])
        )
        expect([batch.accepted, batch.duplicates]).toEqual([3, 2])
        expect(batch.records.map((r) => [r.subscription_id, r.usage_count, r.duplicate])).toEqual([
          [a.id, 10, false],
          [b.id, 7, false],
          [a.id, 5, true],
          [b.id, 7, true],
          [a.id, 3, false]
        ])
        expect((yield* metering.usageSummary(merchantId, a.id)).total_usage_count).toBe(18)
        expect((yield* metering.usageSummary(merchantId, b.id)).total_usage_count).toBe(7)

        // one bad record rejects the batch and writes nothing
        const before = yield* Effect.all([
          metering.usageSummary(merchantId, a.id),
          metering.usageSummary(merchantId, b.id)
        ])
        const bad = [
          [{ subscription_id: b.id, usage_count: 0 }, "count"],
          [{ subscription_id: b.id, usage_count: 1.5 }, "count"],
          [{ subscription_id: b.id, usage_count: 1, event_id: "" }, "event_id"],
          [{ subscription_id: flat.id, usage_count: 1 }, "not_metered"]
        ] as const
        for (const [record, reason] of bad) {
          expect(
            yield* Effect.flip(
              metering.recordUsageBatch(
                merchantId,
                usageEventsOf([{ subscription_id: a.id, usage_count: 1, event_id: "never" }, record])
              )
            )
          ).toMatchObject({ _tag: "UsageRefused", index: 1, reason })
        }
        expect(
          yield* Effect.flip(
            metering.recordUsageBatch(
              merchantId,
              usageEventsOf([
                { subscription_id: a.id, usage_count: 1, event_id: "never" },
                { subscription_id: "sub_missing", usage_count: 1 }
              ])
            )
          )
        ).toMatchObject({ _tag: "NotFound", id: "sub_missing" })
        expect(yield* Effect.flip(metering.recordUsageBatch(merchantId, usageEventsOf([])))).toMatchObject({
          _tag: "UsageBatchRefused",
          size: 0
        })
        expect(
          yield* Effect.flip(
            metering.recordUsageBatch(
              merchantId,
              usageEventsOf(
                Array.from({ length: Subscriptions.MAX_USAGE_BATCH + 1 }, () => ({
                  subscription_id: a.id,
                  usage_count: 1
                }))
              )
            )
          )
        ).toMatchObject({ _tag: "UsageBatchRefused", size: Subscriptions.MAX_USAGE_BATCH + 1 })
        expect(
          yield* Effect.all([metering.usageSummary(merchantId, a.id), metering.usageSummary(merchantId, b.id)])
        ).toEqual(before)

        // concurrent batches on the same subscriptions, overlapping event ids: every event counted exactly once
        const batches = Array.from({ length: 8 }, (_, k) =>
          Array.from({ length: 10 }, (_, i) => ({
            subscription_id: i % 2 === 0 ? b.id : a.id,
            usage_count: 1,
            event_id: `c-${k * 4 + i}`
          }))
        )
        const distinct = new Set(batches.flat().map((r) => `${r.subscription_id}/${r.event_id}`)).size
        expect(distinct).toBeLessThan(80)
        const results = yield* Effect.forEach(
          batches,
          (records) => metering.recordUsageBatch(merchantId, usageEventsOf(records)),
          {
            concurrency: 8
          }
        )
        expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(distinct)
        const totals = yield* Effect.all([
          metering.usageSummary(merchantId, a.id),
          metering.usageSummary(merchantId, b.id)
        ])
        expect(totals[0].total_usage_count + totals[1].total_usage_count).toBe(18 + 7 + distinct)

        // a batch that takes a subscription over its threshold invoices it
        yield* metering.recordUsageBatch(
          merchantId,
          usageEventsOf([{ subscription_id: a.id, usage_count: 100, event_id: "big" }])
        )
        expect((yield* invoicesOf(merchantId, a.id)).map((i) => i.invoice_type)).toEqual(["initial", "renewal"])
        expect((yield* invoicesOf(merchantId, b.id)).map((i) => i.invoice_type)).toEqual(["initial"])
      })
  )

  it.effect("refunds: partial then full, never more than paid, even when requested concurrently", () =>
    Effect.gen(function* () {
      const refunds = yield* Refunds.Refunds
      const billing = yield* Billing.Billing
      const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
      const { result } = yield* subscribe(merchantId, priceId)
      const tradeId = result.trade.trade_id
      const partial = yield* refunds.refund(
        merchantId,
        Refunds.refundOf(tradeId, { amount: "10.00", reason: "goodwill", requestKey: "req-refund-1" })
      )
      expect([partial.refund_status, partial.refund_amount]).toEqual(["succeeded", "10.00"])
      // the same request again (a client's retry after a crash): the same refund, nothing more refunded
      const again = yield* refunds.refund(
        merchantId,
        Refunds.refundOf(tradeId, { amount: "10.00", reason: "goodwill", requestKey: "req-refund-1" })
      )
      expect(again.refund_id).toBe(partial.refund_id)
      expect((yield* billing.getTrade(merchantId, tradeId)).total_refunded_amount).toBe("10.00")
      expect(
        yield* Effect.flip(refunds.refund(merchantId, Refunds.refundOf(tradeId, { amount: "25.00" })))
      ).toMatchObject({
        _tag: "RefundRefused",
        reason: "above_refundable"
      })
      // six concurrent 5.00 refunds against 20.00 left; a client retries "in progress" conflicts
      const attempts = yield* Effect.all(
        Array.from({ length: 6 }, () =>
          Effect.result(
            refunds
              .refund(merchantId, Refunds.refundOf(tradeId, { amount: "5.00" }))
              .pipe(Effect.retry({ while: (e) => e._tag === "ConcurrentUpdate", times: 50 }))
          )
        ),
        { concurrency: 6 }
      )
      const ok = attempts.filter((a) => a._tag === "Success").length
      expect(ok).toBe(4)
      const trade = yield* billing.getTrade(merchantId, tradeId)
      expect([trade.refund_status, trade.total_refunded_amount]).toEqual(["refunded", "30.00"])
      const invoices = yield* invoicesOf(merchantId, Option.getOrThrow(result.subscription).id)
      expect(invoices[0]!.biz_status).toBe("refunded")
      expect(invoices.filter((i) => i.invoice_type === "refund").map((i) => i.amount)).toEqual([
        "10.00",
        "5.00",
        "5.00",
        "5.00",
        "5.00"
      ])
      expect(
        (yield* refunds.listRefunds(merchantId, {
          limit: 100,
          filters: [{ column: "trade_id", op: "in", values: [tradeId] }]
        })).list
      ).toHaveLength(5)
    })
  )

  it.effect(
    "search: the subscription of an invoice, and of a refund through its trade's invoice; none for an unknown id or another merchant's",
    () =>
      Effect.gen(function* () {
        const subs = yield* Subscriptions.Subscriptions
        const { merchantId, priceId } = yield* setup("2024-04-01T00:00:00Z")
        const { result } = yield* subscribe(merchantId, priceId)
        const sub = Option.getOrThrow(result.subscription)
        const invoice = (yield* invoicesOf(merchantId, sub.id))[0]!
        const refund = yield* (yield* Refunds.Refunds).refund(
          merchantId,
          Refunds.refundOf(result.trade.trade_id, { amount: "1.00" })
        )
        expect(yield* subs.search(merchantId, { invoiceId: invoice.invoice_id })).toEqual(Option.some(sub.id))
        expect(yield* subs.search(merchantId, { refundId: refund.refund_id })).toEqual(Option.some(sub.id))
        expect(yield* subs.search(merchantId, { invoiceId: "inv_unknown" })).toEqual(Option.none())
        expect(yield* subs.search(merchantId, { refundId: "rfd_unknown" })).toEqual(Option.none())
        const other = yield* setup("2024-04-01T00:00:00Z")
        expect(yield* subs.search(other.merchantId, { invoiceId: invoice.invoice_id })).toEqual(Option.none())
        expect(yield* subs.search(other.merchantId, { refundId: refund.refund_id })).toEqual(Option.none())
      })
  )
}
