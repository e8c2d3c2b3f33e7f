/**
 * Credit grants on the ledger, in the caller's transaction: a grant writes its credit (no
 * subscription holds it), an invoice that applies credit no subscription holds consumes grants
 * (earliest-expiring first, then oldest), and expiry or a void removes what remains. Each write is
 * at the version read, so two invoices consuming one grant at once never take more than it holds
 * (the second fails with `ConcurrentUpdate` and its transaction rolls back).
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Result } from "effect"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { emit, type StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import * as CreditGrant from "./CreditGrant.js"

/**
 * A new grant to write.
 *
 * @since 0.1.0
 */
export interface NewGrant {
  readonly merchantId: string
  readonly customerId: string
  readonly amount: Money.Money
  readonly category: CreditGrant.CreditGrantCategory
  readonly source: "grant" | "top_up"
  readonly reason: string | null
  readonly expiresAt: number | null
  readonly paymentKey: string | null
  readonly lane: "live" | "frozen"
  readonly at: number
}

const conflict = (id: string) => new Errors.ConcurrentUpdate({ resource: "credit_grant", id })

/**
 * Writes a grant, its ledger entry (`credit_grant` or `top_up`, held by no subscription) and
 * `v2.credit_grant.created`, and schedules its expiry. A top-up's payment key granted before
 * answers that grant (a payment is granted once).
 *
 * @since 0.1.0
 */
export const grant = (
  storage: StorageService,
  input: NewGrant
): Effect.Effect<CreditGrant.CreditGrant, Errors.ConcurrentUpdate> =>
  Effect.gen(function* () {
    const grants = storage.repository(Entities.creditGrant)
    if (input.paymentKey !== null) {
      const seen = yield* Effect.orDie(grants.findBy(input.merchantId, "payment_key", input.paymentKey))
      if (seen._tag === "Some") return seen.value.value
    }
    const id = yield* Ids.make(Ids.prefixes.creditGrant)
    const formatted = Money.format(input.amount)
    const created = new CreditGrant.CreditGrant(
      {
        credit_grant_id: id,
        merchant_id: input.merchantId,
        customer_id: input.customerId,
        currency: input.amount.currency,
        amount: formatted,
        remaining: formatted,
        category: input.category,
        source: input.source,
        reason: input.reason,
        expires_at: input.expiresAt === null ? null : DateTime.makeUnsafe(input.expiresAt),
        status: Lifecycle.creditGrant.initial,
        payment_key: input.paymentKey,
        created_at: DateTime.makeUnsafe(input.at),
        updated_at: DateTime.makeUnsafe(input.at)
      },
      { disableChecks: true }
    )
    yield* grants
      .insert(created)
      .pipe(Effect.catchTag("UniqueViolation", () => Effect.fail(conflict(input.paymentKey ?? id))))
    yield* CustomerBalance.record(storage, {
      merchantId: input.merchantId,
      customerId: input.customerId,
      currency: input.amount.currency,
      amount: input.amount.amount,
      sourceType: input.source === "top_up" ? "top_up" : "credit_grant",
      sourceId: id,
      subscriptionId: null,
      description: input.reason,
      at: input.at
    })
    yield* emit(storage, {
      merchant_id: input.merchantId,
      type: "v2.credit_grant.created",
      business_id: id,
      schema: CreditGrant.CreditGrant,
      data: created,
      at: input.at
    })
    if (input.expiresAt !== null)
      yield* storage.workQueue.schedule({
        lane: input.lane,
        merchant_id: input.merchantId,
        kind: "credit_grant_expiry",
        subject_id: id,
        due_at: input.expiresAt
      })
    return created
  })

/** Whether grant `g` has expired by `at` (its expiry work may not have run yet). */
const expiredBy = (g: CreditGrant.CreditGrant, at: number) =>
  g.expires_at !== null && DateTime.toEpochMillis(g.expires_at) <= at

/** Every active grant of a customer (paged through: none is missed, however many it has). */
const allActive = (storage: StorageService, merchantId: string, customerId: string) =>
  Effect.gen(function* () {
    const all: Array<CreditGrant.CreditGrant> = []
    let after: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        storage.repository(Entities.creditGrant).list(merchantId, {
          limit: 100,
          filters: [
            { column: "customer_id", op: "in", values: [customerId] },
            { column: "status", op: "in", values: ["active"] }
          ],
          ...(after !== undefined ? { starting_after: after } : {})
        })
      )
      all.push(...page.list)
      if (!page.has_more || page.list.length === 0) return all
      after = page.list.at(-1)!.credit_grant_id
    }
  })

/**
 * A customer's active grants in `currency` still usable at `at` (not expired by then, even when
 * their expiry work has not run yet), in consumption order.
 *
 * @since 0.1.0
 */
export const activeGrants = (
  storage: StorageService,
  merchantId: string,
  customerId: string,
  currency: string,
  at: number = Number.NEGATIVE_INFINITY
) =>
  Effect.map(allActive(storage, merchantId, customerId), (list) =>
    list
      .filter((g) => g.currency === currency && CreditGrant.remainingOf(g) > 0n && !expiredBy(g, at))
      .sort(CreditGrant.consumptionOrder)
  )

/**
 * What the customer's active grants in `currency` that have expired by `at` still hold: credit
 * on the balance that is going away (its expiry work removes it), which no invoice at `at` may use.
 *
 * @since 0.1.0
 */
export const expiringBy = (
  storage: StorageService,
  merchantId: string,
  customerId: string,
  currency: string,
  at: number
): Effect.Effect<bigint> =>
  Effect.map(allActive(storage, merchantId, customerId), (list) =>
    list.filter((g) => g.currency === currency && expiredBy(g, at)).reduce((a, g) => a + CreditGrant.remainingOf(g), 0n)
  )

/**
 * Consumes `amount` of the customer's credit no subscription holds from its active grants,
 * earliest-expiring first, in the caller's transaction (each grant written at the version read:
 * a concurrent consumer fails this with `ConcurrentUpdate`). What the grants do not cover was
 * other unheld credit (a manual adjustment). A grant used up is `depleted`
 * (`v2.credit_grant.depleted`). Answers what the grants gave.
 *
 * @since 0.1.0
 */
export const consume = (
  storage: StorageService,
  input: {
    readonly merchantId: string
    readonly customerId: string
    readonly currency: string
    readonly amount: bigint
    readonly at: number
  }
): Effect.Effect<bigint, Errors.ConcurrentUpdate> =>
  Effect.gen(function* () {
    if (input.amount <= 0n) return 0n
    const grants = storage.repository(Entities.creditGrant)
    const ordered = yield* activeGrants(storage, input.merchantId, input.customerId, input.currency, input.at)
    let left = input.amount
    for (const listed of ordered) {
      if (left <= 0n) break
      const current = yield* Effect.orDie(grants.get(input.merchantId, listed.credit_grant_id))
      if (current._tag === "None") return yield* conflict(listed.credit_grant_id)
      const g = current.value.value
      const remaining = CreditGrant.remainingOf(g)
      if (g.status !== "active" || remaining !== CreditGrant.remainingOf(listed))
        return yield* conflict(g.credit_grant_id)
      const part = remaining < left ? remaining : left
      const moved = Result.getOrThrow(
        CreditGrant.move(g, remaining === part ? "deplete" : "consume", remaining - part, input.at)
      )
      yield* grants.update(moved.value, current.value.version).pipe(
        Effect.catchTag("VersionConflict", () => Effect.fail(conflict(g.credit_grant_id))),
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
      )
      for (const type of moved.events)
        yield* emit(storage, {
          merchant_id: input.merchantId,
          type,
          business_id: g.credit_grant_id,
          schema: CreditGrant.CreditGrant,
          data: moved.value,
          at: input.at
        })
      left -= part
    }
    return input.amount - left
  })

/**
 * Removes what remains of an active grant from the balance (`credit_grant_expired` or
 * `credit_grant_voided`, held by no subscription) and ends it, in the caller's transaction.
 * Answers the ended grant.
 *
 * @since 0.1.0
 */
export const remove = (
  storage: StorageService,
  merchantId: string,
  current: { readonly value: CreditGrant.CreditGrant; readonly version: number },
  trigger: "expire" | "void",
  at: number
): Effect.Effect<CreditGrant.CreditGrant, Errors.ConcurrentUpdate | Lifecycle.InvalidTransition> =>
  Effect.gen(function* () {
    const g = current.value
    const remaining = CreditGrant.remainingOf(g)
    const moved = yield* Effect.fromResult(CreditGrant.move(g, trigger, 0n, at))
    yield* storage
      .repository(Entities.creditGrant)
      .update(moved.value, current.version)
      .pipe(
        Effect.catchTag("VersionConflict", () => Effect.fail(conflict(g.credit_grant_id))),
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
      )
    yield* CustomerBalance.record(storage, {
      merchantId,
      customerId: g.customer_id,
      currency: g.currency,
      amount: -remaining,
      sourceType: trigger === "expire" ? "credit_grant_expired" : "credit_grant_voided",
      sourceId: g.credit_grant_id,
      subscriptionId: null,
      description: g.reason,
      at
    })
    for (const type of moved.events)
      yield* emit(storage, {
        merchant_id: merchantId,
        type,
        business_id: g.credit_grant_id,
        schema: CreditGrant.CreditGrant,
        data: moved.value,
        at
      })
    return moved.value
  })

/**
 * Emits `v2.customer.auto_top_up_failed` (a declined automatic top-up), in the caller's transaction.
 *
 * @since 0.1.0
 */
export const failed = (
  storage: StorageService,
  input: { readonly merchantId: string; readonly data: CreditGrant.AutoTopUpFailure; readonly at: number }
) =>
  Effect.asVoid(
    emit(storage, {
      merchant_id: input.merchantId,
      type: "v2.customer.auto_top_up_failed",
      business_id: input.data.customer_id,
      schema: CreditGrant.AutoTopUpFailure,
      data: input.data,
      at: input.at
    })
  )
