import { describe, expect, it } from "@effect/vitest"
import { DateTime, Result, Schema } from "effect"
import fc from "fast-check"
import { Entities, ItemRules, Money, Price, RenewalPlan, Subscription, SubscriptionItems } from "../../src/index.js"
import * as KeptUsage from "../../src/subscriptions/KeptUsage.js"
import { fullCycle } from "../../src/subscriptions/SubscriptionTerms.js"
import { priceVersion } from "../fixtures.js"
import { prop } from "../prop.js"

// A metered (usage-based) item beside quantity items (issue 33): the renewal's pure draft.

const JAN = Date.UTC(2026, 0, 1)
const FEB = Date.UTC(2026, 1, 1)
const flat = (id: number, name: string, amount: string) =>
  priceVersion({
    id: `pri_01jd000000000000000000000${id}`,
    price_version_id: `prv_01jd000000000000000000000${id}`,
    price_name: name,
    price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: amount })
  })
/** API calls: 0.50 per started block of 100. */
const calls = (id = 4) =>
  priceVersion({
    id: `pri_01jd000000000000000000000${id}`,
    price_version_id: `prv_01jd000000000000000000000${id}`,
    price_name: "API calls",
    price_type: "based_on_usage",
    model_type: "per_unit",
    payment_timing: "postpaid",
    billing_dimension: "usage",
    usage_unit: "calls",
    usage_unit_price: "0.50",
    billing_threshold: "100",
    usage_amount: "1",
    price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: "0" })
  })
const team = flat(1, "Team plan", "49.00")
const seat = flat(2, "Seat", "12.00")
const sso = flat(3, "SSO add-on", "99.00")
const term = (pv: Price.PriceVersion, quantity: number): Entities.ItemTerm => ({
  id: `si_${pv.id.slice(4)}`,
  price_id: pv.id,
  price_version_id: pv.price_version_id,
  quantity: String(quantity),
  created_at: JAN,
  version: pv
})
/** A subscription in its first period (January), base item `base` × `quantity`, with `extras` and `accrued` usage. */
const recordOf = (
  base: Price.PriceVersion,
  quantity: number,
  extras: ReadonlyArray<Entities.ItemTerm>,
  accrued: number,
  trial = false
): Entities.SubscriptionRecord => {
  const at = DateTime.makeUnsafe(JAN)
  const subscription = new Subscription.Subscription({
    id: "sub_01jd0000000000000000000001",
    customer_id: "cus_01jd0000000000000000000000",
    email: null,
    cancel_reason: null,
    sub_merchant_id: null,
    status: trial ? "trial" : "active",
    price_id: base.id,
    current_period_start: at,
    current_period_end: DateTime.makeUnsafe(FEB),
    next_invoice_date: DateTime.makeUnsafe(FEB),
    created_at: at,
    updated_at: at,
    cancel_at: null,
    order_id: null,
    source_trade_id: null,
    price_type: base.price_type,
    price_version_id: base.price_version_id,
    first_source_channel: null,
    last_source_channel: null,
    quantity: String(quantity),
    quantity_unit: null,
    payment_timing: base.payment_timing,
    billing_dimension: base.billing_dimension,
    quantity_tier_type: null,
    price_tier_type: null,
    usage_amount: null,
    merchant_price_id: null,
    cycle_index: 0,
    total_cycles: null,
    metadata: {},
    quantity_tiers: [],
    usage_tiers: [],
    pending_change: null,
    billing_cycle_unit: "month",
    cancel_at_period_end: false,
    credit_balance: "0.00"
  })
  const rec = Schema.decodeUnknownSync(Entities.SubscriptionRecord)({
    merchant_id: "mch_01jd0000000000000000000000",
    subscription: Schema.encodeSync(Subscription.Subscription)(subscription),
    anchor: JAN,
    trial_end: trial ? FEB : null,
    payment_token: null,
    scheduled_price_version_id: null,
    dunning_attempts: 0,
    accrued_usage: String(accrued),
    fx_rate: null,
    currency: "USD",
    convert_to_continuous: false,
    paused_at: null
  })
  return { ...rec, extra_items: extras }
}
const amounts = (b: RenewalPlan.Bill) => b.draft.lines.map((l) => [l.kind, l.quantity, Money.format(l.amount)])
const billOf = (rec: Entities.SubscriptionRecord, base: Price.PriceVersion) =>
  Result.getOrThrow(RenewalPlan.bill(rec, base, base, []))

describe("a metered item beside quantity items", () => {
  it("compatible: one usage price among the items, base or extra; a second is refused naming it", () => {
    expect(Result.isSuccess(SubscriptionItems.compatible([team, seat, sso, calls()]))).toBe(true)
    expect(Result.isSuccess(SubscriptionItems.compatible([calls(), seat]))).toBe(true)
    const second = SubscriptionItems.compatible([team, calls(), seat, calls(5)])
    expect(Result.isFailure(second) && second.failure).toMatchObject({ index: 3 })
    expect(Result.isFailure(second) && second.failure.reason).toContain("at most one metered item")
  })

  it("a quote line names the prorated items only: the metered item is never prorated", () => {
    const set = (...xs: ReadonlyArray<[Price.PriceVersion, number]>) =>
      xs.map(([version, quantity]) => ({ version, quantity: BigInt(quantity) }))
    expect(ItemRules.label(set([team, 1], [seat, 5], [calls(), 1]))).toBe("1 × Team plan, 5 × Seat")
    expect(ItemRules.label(set([calls(), 1], [seat, 3]))).toBe("3 × Seat")
    // nothing else to name: the metered price by its name
    expect(ItemRules.label(set([calls(), 1]))).toBe("API calls")
  })

  it("the Team example's renewal: the prepaid items for the new cycle, then January's 1,234 calls in arrears", () => {
    const rec = recordOf(team, 1, [term(seat, 5), term(sso, 1), term(calls(), 1)], 1234)
    expect(SubscriptionItems.meteredIndex(rec)).toBe(3)
    const b = billOf(rec, team)
    expect([b.invoiceCycle, b.arrears, b.usageBilled]).toEqual([1, false, true])
    expect(amounts(b)).toEqual([
      ["subscription", 1n, "49.00"],
      ["subscription", 5n, "60.00"],
      ["subscription", 1n, "99.00"],
      ["usage", 1234n, "6.50"]
    ])
    expect(Money.format(b.draft.subtotal)).toBe("214.50")
    // usage starts again from 0; the proration basis is the prepaid items only
    const { next } = RenewalPlan.advance(rec, team, b, b.draft, FEB)
    expect([next.accrued_usage, next.plan_basis, next.subscription.cycle_index]).toEqual(["0", "208.00", 1])
  })

  it("a metered base item beside seats: its usage line first, on the new cycle's invoice", () => {
    const rec = recordOf(calls(), 1, [term(seat, 3)], 1500)
    expect(SubscriptionItems.meteredIndex(rec)).toBe(0)
    const b = billOf(rec, calls())
    expect([b.invoiceCycle, b.arrears, b.usageBilled]).toEqual([1, false, true])
    expect(amounts(b)).toEqual([
      ["usage", 1500n, "7.50"],
      ["subscription", 3n, "36.00"]
    ])
  })

  it("a one-item usage subscription keeps the seed's invoice: the ended cycle's usage alone", () => {
    const b = billOf(recordOf(calls(), 1, [], 250), calls())
    expect([b.invoiceCycle, b.arrears, b.usageBilled]).toEqual([0, true, true])
    expect(amounts(b)).toEqual([["usage", 250n, "1.50"]])
  })

  it("after a trial the first renewal has no usage line (trial usage is not billed)", () => {
    const b = billOf(recordOf(team, 1, [term(seat, 2), term(calls(), 1)], 0, true), team)
    expect(amounts(b)).toEqual([
      ["subscription", 1n, "49.00"],
      ["subscription", 2n, "24.00"]
    ])
  })

  prop(
    "the renewal bills each prepaid item once and the usage once, and the proration basis never includes usage",
    [fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 10_000_000 }), fc.boolean()] as const,
    ([seats, used, meteredBase]) => {
      const rec = meteredBase
        ? recordOf(calls(), 1, [term(seat, seats), term(sso, 1)], used)
        : recordOf(team, 1, [term(seat, seats), term(calls(), 1)], used)
      const base = meteredBase ? calls() : team
      const b = billOf(rec, base)
      const usage = BigInt(Math.ceil(used / 100)) * 50n
      const prepaid = meteredBase ? 1200n * BigInt(seats) + 9900n : 4900n + 1200n * BigInt(seats)
      expect(b.draft.lines.filter((l) => l.kind === "usage").map((l) => [l.quantity, l.amount.amount])).toEqual([
        [BigInt(used), usage]
      ])
      expect(b.draft.lines).toHaveLength(3)
      expect(b.draft.subtotal.amount).toBe(prepaid + usage)
      expect(fullCycle(rec, base, 1n, 1).amount).toBe(prepaid)
      const { next } = RenewalPlan.advance(rec, base, b, b.draft, FEB)
      expect(next.accrued_usage).toBe("0")
      // the next renewal bills no usage of this cycle again
      const again = billOf({ ...next, anchor: JAN }, base)
      expect(again.draft.subtotal.amount).toBe(prepaid)
    },
    { numRuns: 200 }
  )
})

describe("a metered item's usage is rated at the item in force during the period it was used", () => {
  /** API calls at another price: 1.00 per started block of 100. */
  const dearer = priceVersion({
    ...calls(5),
    id: calls().id,
    price_version_id: "prv_01jd0000000000000000000009",
    usage_unit_price: "1.00"
  })
  const usageLines = (b: RenewalPlan.Bill) =>
    b.draft.lines.filter((l) => l.kind === "usage").map((l) => [l.description, l.quantity, Money.format(l.amount)])

  it("a catalog migration's scheduled version of the metered item: the ended period at the old version, the next at the new", () => {
    const migrated: Entities.ItemTerm = { ...term(calls(), 1), scheduled_version: dearer }
    const rec = recordOf(team, 1, [term(seat, 5), migrated], 1234)
    const b = billOf(rec, team)
    // 13 blocks × 0.50, not × 1.00
    expect(usageLines(b)).toEqual([["API calls usage (1234 calls)", 1234n, "6.50"]])
    const { next } = RenewalPlan.advance(rec, team, b, b.draft, FEB)
    expect(next.extra_items[1]!.price_version_id).toBe(dearer.price_version_id)
    expect(usageLines(billOf({ ...next, accrued_usage: "100" }, team))).toEqual([
      ["API calls usage (100 calls)", 100n, "1.00"]
    ])
  })

  it("a phase or item set dropping the metered item: the renewal still bills the ended period's usage, once", () => {
    const ended = recordOf(team, 1, [term(seat, 5), term(calls(), 1)], 1234)
    const dropped: Entities.SubscriptionRecord = { ...ended, extra_items: [term(seat, 5)] }
    const b = Result.getOrThrow(RenewalPlan.bill(dropped, team, team, [], ended))
    expect(amounts(b)).toEqual([
      ["subscription", 1n, "49.00"],
      ["subscription", 5n, "60.00"],
      ["usage", 1234n, "6.50"]
    ])
    const { next } = RenewalPlan.advance(dropped, team, b, b.draft, FEB)
    expect(next.accrued_usage).toBe("0")
    // replaced by another metered price: the ended period at the old one
    const replaced: Entities.SubscriptionRecord = { ...ended, extra_items: [term(seat, 5), term(dearer, 1)] }
    expect(usageLines(Result.getOrThrow(RenewalPlan.bill(replaced, team, team, [], ended)))).toEqual([
      ["API calls usage (1234 calls)", 1234n, "6.50"]
    ])
  })

  it("an item change deleting the metered item now keeps its usage so far for the next renewal, billed once", () => {
    const JAN16 = Date.UTC(2026, 0, 16)
    const before = recordOf(team, 1, [term(seat, 5), term(calls(), 1)], 1234)
    const after = KeptUsage.keepRemovedUsage(before, { ...before, extra_items: [term(seat, 5)] }, team, JAN16)
    expect(after.accrued_usage).toBe("0")
    expect(after.kept_usage).toEqual([
      {
        cycle_index: 0,
        description: "API calls usage (1234 calls)",
        units: "1234",
        amount: "6.50",
        start: JAN,
        end: JAN16
      }
    ])
    // the item kept as it was: nothing moves
    expect(KeptUsage.keepRemovedUsage(before, before, team, JAN16)).toBe(before)
    const b = billOf(after, team)
    expect(amounts(b)).toEqual([
      ["subscription", 1n, "49.00"],
      ["subscription", 5n, "60.00"],
      ["usage", 1234n, "6.50"]
    ])
    expect(b.draft.lines.at(-1)!.span).toEqual({ start: JAN, end: JAN16 })
    const { next } = RenewalPlan.advance(after, team, b, b.draft, FEB)
    expect(next.kept_usage).toEqual([])
    expect(amounts(billOf({ ...next, anchor: JAN }, team)).filter((l) => l[0] === "usage")).toEqual([])
  })
})

describe("a metered base item repriced now, and a forced renewal of an ending subscription", () => {
  const JAN16 = Date.UTC(2026, 0, 16)
  it("an item change moving the metered base item to another price keeps its usage so far at the old version", () => {
    const before = recordOf(calls(), 1, [term(team, 1)], 1234)
    const dearer = calls(9)
    const moved: Entities.SubscriptionRecord = {
      ...before,
      subscription: new Subscription.Subscription(
        { ...before.subscription, price_id: dearer.id, price_version_id: dearer.price_version_id },
        { disableChecks: true }
      )
    }
    const after = KeptUsage.keepRemovedUsage(before, moved, calls(), JAN16)
    expect([after.accrued_usage, after.kept_usage?.map((k) => [k.units, k.amount, k.end])]).toEqual([
      "0",
      [["1234", "6.50", JAN16]]
    ])
    // the base item left at its version (another item changed): nothing kept
    const seats: Entities.SubscriptionRecord = { ...before, extra_items: [term(team, 2)] }
    expect(KeptUsage.keepRemovedUsage(before, seats, calls(), JAN16)).toBe(seats)
  })

  it("the usage of a one-item usage subscription is billed in arrears; beside other items, by the next cycle", () => {
    expect(RenewalPlan.inArrears(recordOf(calls(), 1, [], 0), calls())).toBe(true)
    expect(RenewalPlan.inArrears(recordOf(calls(), 1, [term(team, 1)], 0), calls())).toBe(false)
    expect(RenewalPlan.inArrears(recordOf(team, 1, [], 0), team)).toBe(false)
  })

  it("a renewal forced before the period's end of a subscription canceling then: not due, never canceled early", () => {
    const rec = recordOf(team, 1, [term(calls(), 1)], 100)
    const canceling: Entities.SubscriptionRecord = {
      ...rec,
      subscription: new Subscription.Subscription(
        { ...rec.subscription, cancel_at_period_end: true },
        { disableChecks: true }
      )
    }
    expect(RenewalPlan.decide(canceling, JAN16, true)._tag).toBe("NotDue")
    expect(RenewalPlan.decide(canceling, FEB, true)._tag).toBe("CancelAtPeriodEnd")
    expect(RenewalPlan.decide(canceling, FEB)._tag).toBe("CancelAtPeriodEnd")
    expect(RenewalPlan.decide(rec, JAN16, true)._tag).toBe("Bill")
  })
})
