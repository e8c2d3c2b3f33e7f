/**
 * The trigger of a customer's automatic top-up: after an invoice applies credit and the
 * customer's balance in the top-up's currency ends under its threshold, a top-up is put in flight
 * (its payment key derived from the cause, the ledger entry that applied the credit) and the
 * `auto_top_up` work item charges it — in the transaction of the invoice, so a rolled-back
 * invoice puts nothing in flight. At most one in flight per customer.
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { laneOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { AutoTopUp } from "./CreditGrant.js"

/**
 * The payment key of an automatic top-up caused by ledger entry `entryId`.
 *
 * @since 0.1.0
 */
export const keyOf = (entryId: string): string => `atu_${entryId}`

/**
 * Called after a ledger entry that applied credit to an invoice: puts a top-up in flight when the
 * customer's automatic top-up is on in `currency`, none is in flight, and `ending` is under its
 * threshold. One read (the setting) when the customer has none.
 *
 * @since 0.1.0
 */
export const afterApplied = (
  storage: StorageService,
  input: {
    readonly merchantId: string
    readonly customerId: string
    readonly currency: string
    readonly ending: bigint
    readonly entryId: string
    readonly at: number
  }
): Effect.Effect<void, Errors.ConcurrentUpdate> =>
  Effect.gen(function* () {
    const settings = storage.repository(Entities.autoTopUp)
    const found = yield* Effect.orDie(settings.get(input.merchantId, input.customerId))
    if (found._tag === "None") return
    const s = found.value.value
    if (!s.enabled || s.in_flight !== null || s.currency !== input.currency) return
    const threshold = Result.getOrElse(
      Result.map(Money.parse(s.threshold, s.currency), (m) => m.amount),
      () => 0n
    )
    if (input.ending >= threshold) return
    const next = new AutoTopUp(
      { ...s, in_flight: keyOf(input.entryId), failed_attempts: 0, updated_at: DateTime.makeUnsafe(input.at) },
      { disableChecks: true }
    )
    yield* settings.update(next, found.value.version).pipe(
      Effect.catchTag("VersionConflict", () =>
        Effect.fail(new Errors.ConcurrentUpdate({ resource: "auto_top_up", id: input.customerId }))
      ),
      Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
    )
    const merchant = yield* Effect.orDie(storage.repository(Entities.merchant).get(input.merchantId, input.merchantId))
    yield* storage.workQueue.schedule({
      lane: merchant._tag === "Some" ? laneOf(merchant.value.value) : "live",
      merchant_id: input.merchantId,
      kind: "auto_top_up",
      subject_id: input.customerId,
      due_at: input.at
    })
  })
