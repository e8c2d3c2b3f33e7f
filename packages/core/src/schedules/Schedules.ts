/**
 * The schedules service: attaches a {@link Schedule.SubscriptionSchedule} to a subscription,
 * reads it, releases or cancels it. Its phases are billed by the renewals
 * (`RenewalPlan.scheduleStep`), one phase per cycle boundary, in the renewal's transaction.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Catalog from "../catalog/Catalog.js"
import * as Price from "../catalog/Price.js"
import type * as Discount from "../discounts/Discount.js"
import { redeem, refusalFor } from "../discounts/Discounts.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, emitAll, nowOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as Decimal from "../money/Decimal.js"
import * as Money from "../money/Money.js"
import { boundRefusal, targetRefusal } from "../subscriptions/ChangeQuote.js"
import { switchesInterval } from "../subscriptions/IntervalSwitch.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as SubscriptionItems from "../subscriptions/SubscriptionItems.js"
import { loadSub, mustBeLive, writes } from "../subscriptions/SubscriptionStore.js"
import { discountTerm, periodIndex, scheduleOf } from "../subscriptions/SubscriptionTerms.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Schedule from "./Schedule.js"

/**
 * One phase of a {@link ScheduleCommand}: its items (one today), an optional discount code for
 * its cycles, and how long it lasts: whole `cycles`, or until `endDate` (Unix ms), which must be
 * one of the subscription's period boundaries.
 *
 * @since 0.1.0
 */
export interface PhaseCommand {
  readonly items: ReadonlyArray<{ readonly priceId: string; readonly quantity: Option.Option<bigint> }>
  readonly discountCode: Option.Option<string>
  readonly duration: { readonly cycles: number } | { readonly endDate: number }
}

/**
 * A schedule to attach: its phases from the current period (`current_period`: the first phase
 * is what the subscription already bills) or from the next renewal (`next_period`), and what
 * happens after the last one.
 *
 * @since 0.1.0
 */
export interface ScheduleCommand {
  readonly subscriptionId: string
  readonly start: "current_period" | "next_period"
  readonly endBehavior: "release" | "cancel"
  readonly phases: ReadonlyArray<PhaseCommand>
}

const refused = (
  subscriptionId: string,
  phase: number | undefined,
  part: Errors.ScheduleRefused["part"],
  detail: string,
  missing?: true,
  item?: number
) =>
  new Errors.ScheduleRefused({
    subscriptionId,
    ...(phase !== undefined ? { phase } : {}),
    part,
    ...(item !== undefined ? { item } : {}),
    detail,
    ...(missing ? { missing } : {})
  })

/**
 * Why a phase of several items bills more a cycle than one invoice may carry (each item at its
 * dearest cycle, in the settlement currency), if it does.
 */
const phaseBound = (
  rec: Entities.SubscriptionRecord,
  targets: ReadonlyArray<{ readonly pv: Price.PriceVersion; readonly quantity: bigint }>
): string | undefined => {
  if (targets.length < 2) return undefined
  const rate = rec.fx_rate !== null ? Result.getOrThrow(Decimal.parse(rec.fx_rate)) : null
  let sum = 0n
  for (const t of targets) {
    const amounts = Price.cycleAmounts(t.pv, t.quantity).map((a) =>
      rate !== null && a.currency !== rec.currency
        ? Result.getOrThrow(Money.convert(a, rate, rec.currency)).amount
        : a.amount
    )
    sum += amounts.reduce((a, b) => (b > a ? b : a), 0n)
  }
  const total = Money.make(sum, rec.currency)
  return Money.isWithinBounds(total)
    ? undefined
    : `${Money.format(total)} ${rec.currency} a cycle is above the most one invoice may carry`
}

/** The record without the discount terms of the schedule's phases that have not started. */
const withoutLaterDiscounts = (rec: Entities.SubscriptionRecord, sc: Schedule.SubscriptionSchedule) => {
  const later = sc.phases.filter((p) => p.start_cycle > rec.subscription.cycle_index && p.discount_id !== null)
  return {
    ...rec,
    discounts: rec.discounts.filter(
      (t) => !later.some((p) => p.discount_id === t.discount_id && p.start_cycle === t.first_cycle)
    )
  }
}

/**
 * The schedules service.
 *
 * @since 0.1.0
 */
export class Schedules extends Context.Service<Schedules>()("@recur/core/Schedules", {
  make: Effect.gen(function* () {
    const storage: StorageService = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const subs = storage.repository(Entities.subscription)
    const discounts = storage.repository(Entities.discount)
    const { saveSub, subEvents, version } = writes(storage)

    const scheduleEvents = (merchantId: string, moved: Lifecycle.Moved<Schedule.SubscriptionSchedule>, at: number) =>
      emitAll(storage, moved.events, {
        merchant_id: merchantId,
        business_id: moved.value.id,
        schema: Schedule.SubscriptionSchedule,
        data: moved.value,
        at
      })

    /**
     * Attaches a schedule to a live subscription that renews on a calendar, in one transaction
     * with the subscription's version: each phase's price must be sellable and bill like the
     * current one (currency, dimension, interval), each discount redeemable (redeemed now), each
     * end date a period boundary. Refused while another schedule governs it, while a price or
     * quantity change or a cancellation waits for the period's end, and on a fixed term.
     */
    const create = Effect.fn("Schedules.create")(function* (merchantId: string, command: ScheduleCommand) {
      const merchant = yield* merchants.get(merchantId)
      const subscriptionId = command.subscriptionId
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const sv = yield* loadSub(subs, merchantId, subscriptionId)
          let rec = sv.value
          const s = rec.subscription
          yield* mustBeLive(rec, "take a schedule")
          const conflict = (reason: string) =>
            new Errors.StateConflict({ resource: "subscription", id: subscriptionId, state: s.status, reason })
          if (Schedule.governs(rec.schedule ?? null))
            return yield* conflict("it already has a schedule in force; release or cancel it first")
          if (
            rec.scheduled_price_version_id !== null ||
            s.pending_change !== null ||
            (rec.pending_items ?? null) !== null
          )
            return yield* conflict("a price or quantity change waits for the period's end; revoke it first")
          if (s.cancel_at_period_end) return yield* conflict("it cancels at the period's end")
          if (s.total_cycles !== null) return yield* conflict("a fixed-term subscription takes no schedule")
          if (s.next_invoice_date === null || s.current_period_end === null)
            return yield* conflict("it does not renew on a calendar")
          if (s.status !== "active")
            return yield* conflict(
              "only an active subscription takes a schedule (a trial's periods are not yet on its anchor)"
            )
          const current = yield* version(merchantId, s.price_version_id)
          // a price the subscription already has keeps its version in force; another is the catalog's
          const inForce = (priceId: string): Price.PriceVersion | undefined =>
            priceId === s.price_id ? current : rec.extra_items.find((x) => x.price_id === priceId)?.version
          const grid = scheduleOf(rec, current)
          const periodOf = (cycle: number) => BillingPeriod.period(grid, periodIndex(rec, cycle))
          const firstCycle = command.start === "current_period" ? s.cycle_index : s.cycle_index + 1
          const phases: Array<Schedule.SchedulePhase> = []
          const redemptions: Array<Store.Versioned<Discount.Discount>> = []
          let start = firstCycle
          // the items before each phase: a metered base item is not left alone after others
          let itemsBefore = SubscriptionItems.termsOf(rec).length
          for (const [i, phase] of command.phases.entries()) {
            const no = (part: Errors.ScheduleRefused["part"], detail: string, item?: number) =>
              refused(subscriptionId, i, part, detail, undefined, item)
            if (phase.items.length < 1 || phase.items.length > Schedule.MAX_ITEMS)
              return yield* no("items", `must hold 1 to ${Schedule.MAX_ITEMS} items`)
            const targets: Array<{ readonly pv: Price.PriceVersion; readonly quantity: bigint }> = []
            for (const [j, item] of phase.items.entries()) {
              const target: Price.PriceVersion =
                inForce(item.priceId) ??
                (yield* catalog
                  .sellableVersion(merchantId, item.priceId, s.customer_id)
                  .pipe(
                    Effect.catchTag("PriceNotFound", () =>
                      Effect.fail(refused(subscriptionId, i, "price", `no such price: ${item.priceId}`, true, j))
                    )
                  ))
              // an item after the base one may bill by another dimension than the base item's (a
              // metered item beside seats, as at checkout): the set's own rules below hold it to
              // one metered item and no mixed price; the currency stays the subscription's
              const wrong =
                j > 0 && target.currency === current.currency
                  ? targetRefusal(subscriptionId, target, target)
                  : targetRefusal(subscriptionId, current, target)
              if (wrong) return yield* no("price", wrong.message, j)
              // a phase bills on the subscription's calendar: another interval would be a switch
              if (switchesInterval(current, target))
                return yield* no("price", "must bill on the subscription's interval (unit and count)", j)
              const quantity = Option.getOrElse(item.quantity, () => 1n)
              if (target.billing_dimension !== "quantity" && quantity !== 1n)
                return yield* no("quantity", "only subscriptions with billing_dimension quantity have a quantity", j)
              const above = boundRefusal(subscriptionId, rec, target, item.quantity, quantity)
              if (above) return yield* no("quantity", above.message, j)
              targets.push({ pv: target, quantity })
            }
            // the items of a phase form one subscription: each price once, one interval and currency
            const together = SubscriptionItems.compatible(targets.map((t) => t.pv))
            if (Result.isFailure(together))
              return yield* together.failure.index === null
                ? no("items", together.failure.reason)
                : no("price", together.failure.reason, together.failure.index)
            const whole = phaseBound(rec, targets)
            if (whole !== undefined) return yield* no("items", whole)
            if (
              SubscriptionItems.meteredAlone(
                itemsBefore,
                targets.map((t) => t.pv)
              )
            )
              return yield* no(
                "items",
                "a metered base item cannot be left alone after other items: keep one of them in the phase"
              )
            itemsBefore = targets.length
            const [base, ...others] = targets
            if (i === 0 && command.start === "current_period") {
              const now = SubscriptionItems.termsOf(rec)
              const same =
                targets.length === now.length &&
                base!.pv.price_version_id === s.price_version_id &&
                targets.every((t) =>
                  now.some((n) => n.price_version_id === t.pv.price_version_id && n.quantity === t.quantity.toString())
                )
              if (!same)
                return yield* no(
                  "items",
                  "a phase of the current period must be the subscription's current items and quantities, its base item first; change the current period through a quote, or start the schedule at next_period"
                )
              if (Option.isSome(phase.discountCode))
                return yield* no(
                  "discount",
                  "the current period is billed already; apply a discount to the subscription instead"
                )
            }
            let cycles: number
            if ("cycles" in phase.duration) cycles = phase.duration.cycles
            else {
              const endDate = phase.duration.endDate
              const ends = Array.from({ length: Schedule.MAX_PHASE_CYCLES }, (_, n) =>
                Option.match(periodOf(start + n), { onNone: () => Number.NaN, onSome: (p) => p.end })
              )
              const n = ends.indexOf(endDate)
              if (n < 0) {
                const after = ends.find((e) => e > endDate)
                const before = ends.filter((e) => e < endDate).at(-1)
                const near = [before, after].filter((e) => e !== undefined).map((e) => DateTime.formatIso(dt(e!)))
                return yield* no(
                  "end_date",
                  `must fall on a period boundary of the subscription after the phase's start${near.length ? ` (nearest: ${near.join(", ")})` : ""}`
                )
              }
              cycles = n + 1
            }
            if (!Number.isInteger(cycles) || cycles < 1 || cycles > Schedule.MAX_PHASE_CYCLES)
              return yield* no("cycles", `must be a whole number from 1 to ${Schedule.MAX_PHASE_CYCLES}`)
            const [span] = Schedule.layout(start, [cycles])
            let discountId: string | null = null
            let discountCode: string | null = null
            if (Option.isSome(phase.discountCode)) {
              const code = phase.discountCode.value
              const found = yield* discounts.findBy(merchantId, "code", code)
              if (Option.isNone(found))
                return yield* refused(subscriptionId, i, "discount", `no such discount code: ${code}`, true)
              const d = found.value.value
              if (
                rec.discounts.some((t) => t.discount_id === d.discount_id) ||
                redemptions.some((r) => r.value.discount_id === d.discount_id)
              )
                return yield* no("discount", "the subscription already carries this discount")
              const why = yield* refusalFor(storage, merchantId, d, {
                at,
                pv: base!.pv,
                quantity: base!.quantity,
                currency: rec.currency,
                customerId: s.customer_id,
                otherProducts: others.map((t) => t.pv.product_id)
              })
              if (why !== undefined) return yield* no("discount", why)
              const term = discountTerm(d, span!.start_cycle)
              rec = {
                ...rec,
                discounts: [...rec.discounts, { ...term, cycles: Math.min(term.cycles ?? cycles, cycles) }]
              }
              redemptions.push(found.value)
              discountId = d.discount_id
              discountCode = code
            }
            const first = periodOf(span!.start_cycle)
            const last = periodOf(span!.end_cycle - 1)
            phases.push(
              new Schedule.SchedulePhase({
                items: targets.map(
                  (t) =>
                    new Schedule.ScheduleItem({
                      price_id: t.pv.id,
                      price_version_id: t.pv.price_version_id,
                      quantity: t.quantity.toString()
                    })
                ),
                discount_id: discountId,
                discount_code: discountCode,
                cycles,
                start_cycle: span!.start_cycle,
                end_cycle: span!.end_cycle,
                start_date: Option.match(first, { onNone: () => null, onSome: (p) => dt(p.start) }),
                end_date: Option.match(last, { onNone: () => null, onSome: (p) => dt(p.end) })
              })
            )
            start = span!.end_cycle
          }
          const born = new Schedule.SubscriptionSchedule({
            id: yield* Ids.make(Ids.prefixes.subscriptionSchedule),
            subscription_id: subscriptionId,
            customer_id: s.customer_id,
            status: Lifecycle.schedule.initial,
            end_behavior: command.endBehavior,
            current_phase: null,
            phases,
            created_at: dt(at),
            updated_at: dt(at),
            released_at: null,
            canceled_at: null,
            completed_at: null
          })
          const moved: Lifecycle.Moved<Schedule.SubscriptionSchedule> =
            command.start === "current_period"
              ? Result.getOrThrow(Schedule.move(born, "start", at, { current_phase: 0 }))
              : { value: born, events: [] }
          rec = { ...rec, schedule: moved.value }
          yield* saveSub(rec, sv.version, at)
          for (const dv of redemptions)
            yield* redeem(storage, merchantId, dv, { customerId: s.customer_id, subscriptionId }, at)
          yield* scheduleEvents(merchantId, moved, at)
          return moved.value
        })
      )
    })

    /** The subscription's schedule (the one in force, or the last one as it ended). */
    const get = Effect.fn("Schedules.get")(function* (merchantId: string, subscriptionId: string) {
      yield* merchants.get(merchantId)
      const sv = yield* loadSub(subs, merchantId, subscriptionId)
      const sc = sv.value.schedule ?? null
      if (sc === null) return yield* new Errors.NotFound({ resource: "subscription schedule", id: subscriptionId })
      return sc
    })

    /** Ends a governing schedule by `trigger`, in one transaction with the subscription's version. */
    const end = (merchantId: string, subscriptionId: string, trigger: "release" | "cancel") =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* loadSub(subs, merchantId, subscriptionId)
            const sc = sv.value.schedule ?? null
            if (sc === null)
              return yield* new Errors.NotFound({ resource: "subscription schedule", id: subscriptionId })
            const moved = Schedule.move(
              sc,
              trigger,
              at,
              trigger === "release" ? { released_at: dt(at) } : { canceled_at: dt(at) }
            )
            if (Result.isFailure(moved))
              return yield* new Errors.StateConflict({
                resource: "subscription schedule",
                id: sc.id,
                state: sc.status,
                reason: `a ${sc.status} schedule cannot be ${trigger === "release" ? "released" : "canceled"}`
              })
            let rec: Entities.SubscriptionRecord = {
              ...withoutLaterDiscounts(sv.value, sc),
              schedule: moved.success.value
            }
            const s = rec.subscription
            // canceling the schedule cancels the subscription at its period's end (the paid period is kept)
            const cancels =
              trigger === "cancel" && !s.cancel_at_period_end && ["trial", "active", "past_due"].includes(s.status)
            const subMoved = cancels
              ? Subscription.move(s, "request_cancel_at_period_end", {
                  cancel_at_period_end: true,
                  cancel_at: s.current_period_end,
                  cancel_reason: "schedule_canceled"
                })
              : undefined
            if (subMoved !== undefined && Result.isSuccess(subMoved))
              rec = { ...rec, subscription: subMoved.success.value }
            yield* saveSub(rec, sv.version, at)
            if (subMoved !== undefined && Result.isSuccess(subMoved))
              yield* subEvents(merchantId, rec, subMoved.success.events, at)
            yield* scheduleEvents(merchantId, moved.success, at)
            return moved.success.value
          })
        )
      })

    /** Releases the schedule: the subscription keeps its current price and quantity; no later phase starts. */
    const release = Effect.fn("Schedules.release")((merchantId: string, subscriptionId: string) =>
      end(merchantId, subscriptionId, "release")
    )

    /** Cancels the schedule: no later phase starts, and the subscription cancels at its period's end. */
    const cancel = Effect.fn("Schedules.cancel")((merchantId: string, subscriptionId: string) =>
      end(merchantId, subscriptionId, "cancel")
    )

    return { create, get, release, cancel } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
