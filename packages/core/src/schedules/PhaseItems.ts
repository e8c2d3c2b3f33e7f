/**
 * A phase's items on the subscription: the base item (the phase's first item) is the
 * subscription's flat fields, moved by the renewal's end-of-period change; the items after it
 * become the record's `extra_items` at the renewal that starts the phase, each with its price
 * version. {@link resolve} reads those versions (and makes the ids of new items) before the
 * renewal's pure step (`RenewalPlan.scheduleStep`) sets them, in the same transaction.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type * as Price from "../catalog/Price.js"
import type * as Entities from "../kernel/Entities.js"
import * as Ids from "../kernel/Ids.js"
import * as Schedule from "./Schedule.js"

/**
 * The `extra_items` of the subscription once `phase` starts at `at`: the phase's items after the
 * first, in order, each at the phase's price version (`versions`, by version id). An item whose
 * price the subscription already has after its base item keeps that item's id and `created_at`
 * (the same item, maybe another quantity or version); a new one takes the next of `newIds`.
 *
 * @example
 * extraTerms(phase, rec, versions, ["si_…"], at) // [{ id: "si_…", price_id: "pri_seats", quantity: "20", … }]
 * @since 0.1.0
 */
export const extraTerms = (
  phase: Schedule.SchedulePhase,
  rec: Entities.SubscriptionRecord,
  versions: ReadonlyMap<string, Price.PriceVersion>,
  newIds: ReadonlyArray<string>,
  at: number
): ReadonlyArray<Entities.ItemTerm> => {
  let fresh = 0
  return phase.items.slice(1).map((item) => {
    const version = versions.get(item.price_version_id)
    if (version === undefined) throw new Error(`price version ${item.price_version_id} of a phase was not read`)
    const kept = rec.extra_items.find((x) => x.price_id === item.price_id)
    return {
      id: kept?.id ?? newIds[fresh++]!,
      price_id: item.price_id,
      price_version_id: item.price_version_id,
      quantity: item.quantity,
      created_at: kept?.created_at ?? at,
      version
    }
  })
}

/**
 * The phase the renewal that opens the subscription's next cycle starts, if it starts one.
 *
 * @since 0.1.0
 */
export const starting = (rec: Entities.SubscriptionRecord): Schedule.SchedulePhase | undefined => {
  const sc = rec.schedule ?? null
  const step = Schedule.stepAt(sc, rec.subscription.cycle_index + 1)
  return step._tag === "Start" ? sc!.phases[step.phase] : undefined
}

/**
 * The `extra_items` the renewal at `at` sets if it starts a phase ({@link extraTerms}), their
 * versions read by `version` and new items' ids made here; `undefined` when no phase starts.
 *
 * @since 0.1.0
 */
export const resolve = <E, R>(
  rec: Entities.SubscriptionRecord,
  at: number,
  version: (priceVersionId: string) => Effect.Effect<Price.PriceVersion, E, R>
): Effect.Effect<ReadonlyArray<Entities.ItemTerm> | undefined, E, R> =>
  Effect.gen(function* () {
    const phase = starting(rec)
    if (phase === undefined) return undefined
    const versions = new Map<string, Price.PriceVersion>()
    const newIds: Array<string> = []
    for (const item of phase.items.slice(1)) {
      if (!versions.has(item.price_version_id))
        versions.set(item.price_version_id, yield* version(item.price_version_id))
      if (!rec.extra_items.some((x) => x.price_id === item.price_id))
        newIds.push(yield* Ids.make(Ids.prefixes.subscriptionItem))
    }
    return extraTerms(phase, rec, versions, newIds, at)
  })
