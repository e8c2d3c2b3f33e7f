/**
 * Issue 33 review (5, 6, 9, 1), the pure rules: an immediate item change keeps another item's
 * scheduled version and pending quantity; a next_cycle item set supersedes every item's; the
 * portal offers no quantity while one waits; a metered base item is not left alone after others.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Option, Result, Schema } from "effect"
import {
  Entities,
  ItemRules,
  Money,
  PortalQuantities,
  PortalSession,
  Price,
  RenewalPlan,
  Subscription,
  SubscriptionItems
} from "../../src/index.js"
import { priceVersion } from "../fixtures.js"

const JAN = Date.UTC(2026, 0, 1)
const FEB = Date.UTC(2026, 1, 1)
const flat = (id: number, name: string, amount: string) =>
  priceVersion({
    id: `pri_01jd000000000000000000000${id}`,
    price_version_id: `prv_01jd000000000000000000000${id}`,
    price_name: name,
    price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: amount })
  })
/** API calls: `unit` per started block of 100. */
const calls = (unit = "0.50", pvId = "prv_01jd0000000000000000000004") =>
  priceVersion({
    id: "pri_01jd0000000000000000000004",
    price_version_id: pvId,
    price_name: "API calls",
    price_type: "based_on_usage",
    model_type: "per_unit",
    payment_timing: "postpaid",
    billing_dimension: "usage",
    usage_unit: "calls",
    usage_unit_price: unit,
    billing_threshold: "100",
    usage_amount: "1",
    price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: "0" })
  })
const team = flat(1, "Team plan", "49.00")
const seat = flat(2, "Seat", "12.00")
const seatV2 = priceVersion({ ...seat, price_version_id: "prv_01jd0000000000000000000009" })
const sso = flat(3, "SSO add-on", "99.00")
const term = (pv: Price.PriceVersion, quantity: number): Entities.ItemTerm => ({
  id: `si_${pv.id.slice(4)}`,
  price_id: pv.id,
  price_version_id: pv.price_version_id,
  quantity: String(quantity),
  created_at: JAN,
  version: pv
})
const recordOf = (extras: ReadonlyArray<Entities.ItemTerm>, accrued: number): Entities.SubscriptionRecord => {
  const at = DateTime.makeUnsafe(JAN)
  const subscription = new Subscription.Subscription({
    id: "sub_01jd0000000000000000000001",
    customer_id: "cus_01jd0000000000000000000000",
    email: null,
    cancel_reason: null,
    sub_merchant_id: null,
    status: "active",
    price_id: team.id,
    current_period_start: at,
    current_period_end: DateTime.makeUnsafe(FEB),
    next_invoice_date: DateTime.makeUnsafe(FEB),
    created_at: at,
    updated_at: at,
    cancel_at: null,
    order_id: null,
    source_trade_id: null,
    price_type: team.price_type,
    price_version_id: team.price_version_id,
    first_source_channel: null,
    last_source_channel: null,
    quantity: "1",
    quantity_unit: null,
    payment_timing: team.payment_timing,
    billing_dimension: team.billing_dimension,
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
    trial_end: null,
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
const billOf = (rec: Entities.SubscriptionRecord) => Result.getOrThrow(RenewalPlan.bill(rec, team, team, []))
const planned = (items: ReadonlyArray<readonly [Entities.ItemTerm | undefined, Price.PriceVersion, number]>) =>
  items.map(([t, version, q]) => ({
    id: t?.id ?? "si_base",
    created_at: JAN,
    version,
    quantity: BigInt(q),
    entry: undefined
  }))

const pendingSeats = (quantity: string): Subscription.PendingChange =>
  new Subscription.PendingChange({ quantity, cycle_index: 1, version: 1, effective_at: DateTime.makeUnsafe(FEB) })
const waiting = (rec: Entities.SubscriptionRecord, extras: ReadonlyArray<Entities.ItemTerm>) => ({
  ...rec,
  pending_items: {
    cycle_index: 1,
    base_price_version_id: team.price_version_id,
    base_quantity: "1",
    extra_items: extras,
    quote_id: "quo_x",
    at: JAN + 86_400_000
  }
})

describe("items' end-of-period changes meeting item changes", () => {
  it("an immediate item change keeps an add-on's migration (scheduled_version) and portal pending quantity", () => {
    const seatTerm: Entities.ItemTerm = {
      ...term(seat, 5),
      scheduled_version: seatV2,
      pending_change: pendingSeats("8")
    }
    const rec = recordOf([seatTerm], 0)
    // the change only adds the SSO add-on
    const after = ItemRules.recordAfter(
      rec,
      planned([
        [undefined, team, 1],
        [seatTerm, seat, 5],
        [term(sso, 1), sso, 1]
      ]),
      [],
      Option.none()
    )
    const kept = after.extra_items[0]!
    expect(kept.scheduled_version?.price_version_id ?? null).toBe(seatV2.price_version_id)
    expect(kept.pending_change?.quantity ?? null).toBe("8")
    expect(after.extra_items[1]!.pending_change ?? null).toBeNull()
    // the renewal bills both: 8 seats at the migrated version
    const b = billOf(after)
    expect(b.draft.lines.map((l) => [l.quantity, Money.format(l.amount)])).toEqual([
      [1n, "49.00"],
      [8n, "96.00"],
      [1n, "99.00"]
    ])
  })

  it("a change naming the add-on's quantity drops its pending quantity, its price its scheduled version", () => {
    const seatTerm: Entities.ItemTerm = {
      ...term(seat, 5),
      scheduled_version: seatV2,
      pending_change: pendingSeats("8")
    }
    const rec = recordOf([seatTerm], 0)
    const quantity = ItemRules.recordAfter(
      rec,
      planned([
        [undefined, team, 1],
        [seatTerm, seat, 6]
      ]),
      [],
      Option.none()
    ).extra_items[0]!
    expect([quantity.pending_change ?? null, quantity.scheduled_version?.price_version_id]).toEqual([
      null,
      seatV2.price_version_id
    ])
    const moved = ItemRules.recordAfter(
      rec,
      planned([
        [undefined, team, 1],
        [seatTerm, seatV2, 5]
      ]),
      [],
      Option.none()
    ).extra_items[0]!
    expect([moved.pending_change?.quantity, moved.scheduled_version ?? null]).toEqual(["8", null])
  })

  it("a next_cycle item set supersedes every pending quantity and scheduled version, the base item's and the add-ons'", () => {
    const seatTerm: Entities.ItemTerm = {
      ...term(seat, 5),
      scheduled_version: seatV2,
      pending_change: pendingSeats("8")
    }
    const base = recordOf([seatTerm], 0)
    const rec: Entities.SubscriptionRecord = {
      ...base,
      scheduled_price_version_id: "prv_01jd0000000000000000000007",
      subscription: new Subscription.Subscription(
        { ...base.subscription, pending_change: pendingSeats("2") },
        { disableChecks: true }
      )
    }
    const set = planned([
      [undefined, team, 1],
      [seatTerm, seat, 5],
      [term(sso, 1), sso, 1]
    ])
    const after = ItemRules.withPendingItems(rec, set, "quo_x", JAN)
    expect([after.subscription.pending_change, after.scheduled_price_version_id]).toEqual([null, null])
    expect(after.extra_items.map((x) => [x.pending_change ?? null, x.scheduled_version ?? null])).toEqual([
      [null, null]
    ])
    // revoked (revoke-price-change clears the set): the renewal bills the items as they are
    const revoked = { ...after, pending_items: null }
    expect(billOf(revoked).draft.lines.map((l) => l.quantity)).toEqual([1n, 5n])
  })

  it("the portal offers no quantity while a next_cycle item set waits (the set says the next cycle's quantities)", () => {
    const allowed = new PortalSession.PortalSettings({
      ...PortalSession.defaultPortalSettings,
      adjust_quantities: [
        { price_id: team.id, min: 1, max: 5 },
        { price_id: seat.id, min: 1, max: 20 }
      ]
    })
    const rec = recordOf([term(seat, 5)], 0)
    expect(PortalQuantities.quantityOptions(allowed, rec, "Team plan").map((o) => o.price_id)).toEqual([
      team.id,
      seat.id
    ])
    expect(PortalQuantities.quantityOptions(allowed, waiting(rec, [term(seat, 5), term(sso, 1)]), "Team plan")).toEqual(
      []
    )
  })

  it("a metered base item is not left alone once the subscription has other items", () => {
    expect(SubscriptionItems.meteredAlone(2, [calls()])).toBe(true)
    expect(SubscriptionItems.meteredAlone(1, [calls()])).toBe(false)
    expect(SubscriptionItems.meteredAlone(2, [calls(), seat])).toBe(false)
    expect(SubscriptionItems.meteredAlone(3, [team])).toBe(false)
    const entry = (id: string, deleted: boolean): ItemRules.ItemEntry => ({
      id: Option.some(id),
      priceId: Option.none(),
      quantity: Option.none(),
      deleted
    })
    const seatRef = { id: "si_seat", price_id: seat.id, price_version_id: seat.price_version_id, quantity: "3" }
    const current = [
      {
        ref: {
          id: "si_base",
          price_id: calls().id,
          price_version_id: calls().price_version_id,
          quantity: "1",
          created_at: JAN
        },
        version: calls()
      },
      { ref: { ...seatRef, created_at: JAN }, version: seat }
    ]
    const applied = ItemRules.apply({
      subscriptionId: "sub_x",
      current,
      entries: [entry("si_seat", true)],
      targets: [undefined],
      newIds: [undefined],
      at: FEB
    })
    expect(Result.isFailure(applied) ? [applied.failure.part, applied.failure.index] : "applied").toEqual([
      "deleted",
      0
    ])
  })
})
