/**
 * Prepaid credits as a service: merchants grant credit (`create`), customers buy it (`topUp`, a
 * charge whose credit lands only when it succeeds), grants are read, voided, and expire at
 * `expires_at` (the `credit_grant_expiry` work item). Invoices consume grants through
 * `SharedCredit` (see `GrantLedger.consume`). See docs/customer-balance.md, "Prepaid credits".
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { Timestamp } from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { pageErrors } from "../kernel/Paging.js"
import * as Ports from "../kernel/Ports.js"
import { laneOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import { cardOnFile } from "../payments/CardOnFile.js"
import { malformedField, type CardInput, type NewPaymentSource } from "../payments/PaymentSources.js"
import * as Merchants from "../tenants/Merchants.js"
import { nowOf } from "../kernel/ServiceSupport.js"
import * as CreditGrant from "./CreditGrant.js"
import * as GrantLedger from "./GrantLedger.js"

/** The most one reason may hold. */
const MAX_REASON = 500

/**
 * A grant as given (the contract's `CreditGrantRequests.CreateCreditGrant`): `amount` a positive
 * decimal, `currency`, `reason`, `category` (`paid` or `promotional`), `expires_at` (RFC 3339, in
 * the future) optional.
 *
 * @since 0.1.0
 */
export interface GrantCommand {
  readonly customer_id: string
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly reason?: string | undefined
  readonly category?: string | undefined
  readonly expires_at?: string | null | undefined
}

/**
 * A top-up as given: `amount` and `currency`; paid with `card` or `payment_method` when given
 * (on session), else the customer's card on file (off session). `key` (the request's
 * `Request-Id`) makes a retry answer the first outcome.
 *
 * @since 0.1.0
 */
export interface TopUpCommand {
  readonly customer_id: string
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly card?: CardInput | undefined
  readonly payment_method?: string | undefined
  readonly key?: string | undefined
}

/**
 * A customer's automatic top-up as given.
 *
 * @since 0.1.0
 */
export interface AutoTopUpCommand {
  readonly customer_id: string
  readonly enabled?: boolean | undefined
  readonly threshold?: string | undefined
  readonly amount?: string | undefined
  readonly currency?: string | undefined
}

/**
 * A page of a customer's grants.
 *
 * @since 0.1.0
 */
export interface ListGrants {
  readonly limit?: number
  readonly starting_after?: string
  readonly ending_before?: string
  readonly created?: Store.CreatedRange
}

/**
 * Days after a declined automatic top-up before it is tried again: 1, then 3, then 5 more (four
 * attempts in all); after the last the top-up is given up for its cause (the setting stays on,
 * the next invoice under the threshold starts another).
 *
 * @since 0.1.0
 */
export const AUTO_TOP_UP_RETRY_DAYS: ReadonlyArray<number> = [1, 3, 5]

const DAY = 86_400_000

const positiveAmount = (param: string, value: string | undefined, currency: string) =>
  Effect.gen(function* () {
    if (value === undefined) return yield* new Errors.InvalidParameter({ param, reason: "is required" })
    const m = yield* Effect.mapError(Effect.fromResult(Money.parse(value, currency)), (e) =>
      e._tag === "UnknownCurrency"
        ? new Errors.InvalidParameter({ param: "currency", reason: "is not a currency Recur knows" })
        : new Errors.InvalidParameter({
            param,
            reason: "must be a positive decimal amount with at most the currency's decimals"
          })
    )
    if (m.amount <= 0n) return yield* new Errors.InvalidParameter({ param, reason: "must be greater than 0" })
    if (!Money.isWithinBounds(m))
      return yield* new Errors.InvalidParameter({ param, reason: "is above the most Recur holds" })
    return m
  })

const requiredCurrency = (currency: string | undefined) =>
  currency === undefined || currency.trim() === ""
    ? Effect.fail(new Errors.InvalidParameter({ param: "currency", reason: "is required" }))
    : Effect.succeed(currency.toUpperCase())

/**
 * The credit grants service.
 *
 * @since 0.1.0
 */
export class CreditGrants extends Context.Service<CreditGrants>()("@recur/core/CreditGrants", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const gateway = yield* Ports.PaymentGateway
    const grants = storage.repository(Entities.creditGrant)
    const customers = storage.repository(Entities.customer)
    const settings = storage.repository(Entities.autoTopUp)

    const customer = (merchantId: string, customerId: string) =>
      Effect.flatMap(Effect.orDie(customers.get(merchantId, customerId)), (o) =>
        o._tag === "Some" && o.value.value.deleted_at === null
          ? Effect.succeed(o.value.value)
          : Effect.fail(new Errors.NotFound({ resource: "customer", id: customerId }))
      )

    const found = (merchantId: string, id: string) =>
      Effect.flatMap(Effect.orDie(grants.get(merchantId, id)), (o) =>
        o._tag === "Some" ? Effect.succeed(o.value) : Effect.fail(new Errors.NotFound({ resource: "credit_grant", id }))
      )

    /** A grant by the merchant (no money moves): its credit is on the balance at once. */
    const create = Effect.fn("CreditGrants.create")(function* (merchantId: string, input: GrantCommand) {
      const currency = yield* requiredCurrency(input.currency)
      const amount = yield* positiveAmount("amount", input.amount, currency)
      const category = input.category
      if (category === undefined)
        return yield* new Errors.InvalidParameter({ param: "category", reason: "is required" })
      if (category !== "paid" && category !== "promotional")
        return yield* new Errors.InvalidParameter({ param: "category", reason: "must be paid or promotional" })
      const reason = (input.reason ?? "").trim()
      if (reason === "" || reason.length > MAX_REASON)
        return yield* new Errors.InvalidParameter({ param: "reason", reason: `must be 1 to ${MAX_REASON} characters` })
      const merchant = yield* merchants.get(merchantId)
      const at = yield* nowOf(merchant)
      let expiresAt: number | null = null
      if (input.expires_at !== undefined && input.expires_at !== null) {
        const parsed = Schema.decodeUnknownOption(Timestamp)(input.expires_at)
        if (Option.isNone(parsed))
          return yield* new Errors.InvalidParameter({ param: "expires_at", reason: "must be an RFC 3339 timestamp" })
        expiresAt = DateTime.toEpochMillis(parsed.value)
        if (expiresAt <= at)
          return yield* new Errors.InvalidParameter({ param: "expires_at", reason: "must be in the future" })
      }
      yield* customer(merchantId, input.customer_id)
      return yield* storage.withTransaction(
        GrantLedger.grant(storage, {
          merchantId,
          customerId: input.customer_id,
          amount,
          category,
          source: "grant",
          reason,
          expiresAt,
          paymentKey: null,
          lane: laneOf(merchant),
          at
        })
      )
    })

    /** One grant. */
    const get = Effect.fn("CreditGrants.get")(function* (merchantId: string, id: string) {
      return (yield* found(merchantId, id)).value
    })

    /** A customer's grants, newest first, paged as every list. */
    const list = Effect.fn("CreditGrants.list")(function* (merchantId: string, customerId: string, q: ListGrants) {
      yield* customer(merchantId, customerId)
      const page = yield* pageErrors(
        grants.list(merchantId, {
          filters: [{ column: "customer_id", op: "in", values: [customerId] }],
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
      return { has_more: page.has_more, list: page.list as ReadonlyArray<CreditGrant.CreditGrant> }
    })

    /** A customer's active grants in consumption order (the portal's list). */
    const active = Effect.fn("CreditGrants.active")(function* (merchantId: string, customerId: string) {
      const page = yield* Effect.orDie(
        grants.list(merchantId, {
          limit: 100,
          filters: [
            { column: "customer_id", op: "in", values: [customerId] },
            { column: "status", op: "in", values: ["active"] }
          ]
        })
      )
      return [...page.list].sort(CreditGrant.consumptionOrder) as ReadonlyArray<CreditGrant.CreditGrant>
    })

    /** Voids an active grant: what remains leaves the balance. */
    const voidGrant = Effect.fn("CreditGrants.void")(function* (merchantId: string, id: string) {
      const at = yield* nowOf(yield* merchants.get(merchantId))
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const current = yield* found(merchantId, id)
          if (current.value.status !== "active")
            return yield* new Errors.StateConflict({
              resource: "credit_grant",
              id,
              state: current.value.status,
              reason: "only an active grant can be voided"
            })
          return yield* GrantLedger.remove(storage, merchantId, current, "void", at).pipe(
            Effect.catchTag("InvalidTransition", (e) => Effect.die(e))
          )
        })
      )
    })

    /** The `credit_grant_expiry` work item: at `expires_at`, what remains of an active grant leaves the balance. */
    const expire = Effect.fn("CreditGrants.expire")(function* (merchantId: string, id: string) {
      const at = yield* nowOf(yield* merchants.get(merchantId))
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const current = yield* Effect.orDie(grants.get(merchantId, id))
          if (current._tag === "None" || current.value.value.status !== "active") return
          const expiresAt = current.value.value.expires_at
          if (expiresAt === null || DateTime.toEpochMillis(expiresAt) > at) return
          yield* GrantLedger.remove(storage, merchantId, current.value, "expire", at).pipe(
            Effect.catchTag("InvalidTransition", (e) => Effect.die(e))
          )
        })
      )
    })

    /**
     * A top-up: charges `amount` and grants it (`paid`, `source: top_up`, a `top_up` ledger entry)
     * once the charge succeeded — never before. A declined charge grants nothing
     * (`InvalidRequest`); a processor that did not answer grants nothing yet (`ProcessorUnreachable`:
     * retry with the same `Request-Id`, the charge is keyed by it).
     */
    const topUp = Effect.fn("CreditGrants.topUp")(function* (merchantId: string, input: TopUpCommand) {
      const currency = yield* requiredCurrency(input.currency)
      const amount = yield* positiveAmount("amount", input.amount, currency)
      const merchant = yield* merchants.get(merchantId)
      yield* customer(merchantId, input.customer_id)
      let source: NewPaymentSource | { readonly _tag: "Token"; readonly token: string }
      let param: string
      if (input.card !== undefined) {
        source = { _tag: "Card", card: input.card }
        param = "card"
      } else if (input.payment_method !== undefined) {
        source = { _tag: "PaymentMethod", id: input.payment_method }
        param = "payment_method"
      } else {
        const token = yield* cardOnFile(storage, merchantId, input.customer_id)
        if (Option.isNone(token))
          return yield* new Errors.InvalidRequest({
            reason: "the customer has no card on file: give card or payment_method",
            param: "customer_id"
          })
        source = { _tag: "Token", token: token.value }
        param = "customer_id"
      }
      if (source._tag !== "Token") {
        const bad = malformedField(source)
        if (bad !== undefined)
          return yield* new Errors.InvalidParameter({
            param: bad === "card_number" ? "card.number" : "payment_method",
            reason: "is not a valid card or payment method"
          })
      }
      const key = input.key !== undefined ? `tpu_${merchantId}_${input.key}` : yield* Ids.make("tpu")
      const seen = yield* Effect.orDie(grants.findBy(merchantId, "payment_key", key))
      if (seen._tag === "Some") return seen.value.value
      const at = yield* nowOf(merchant)
      const outcome = yield* gateway.charge({
        trade_id: key,
        merchant_id: merchantId,
        customer_id: input.customer_id,
        amount,
        source,
        off_session: source._tag === "Token",
        now: at
      })
      switch (outcome._tag) {
        case "Succeeded":
          // the money moved: a lost race over the balance is written again, never dropped
          return yield* storage
            .withTransaction(
              GrantLedger.grant(storage, {
                merchantId,
                customerId: input.customer_id,
                amount,
                category: "paid",
                source: "top_up",
                reason: "Top-up",
                expiresAt: null,
                paymentKey: key,
                lane: laneOf(merchant),
                at
              })
            )
            .pipe(Effect.retry({ while: (e) => e._tag === "ConcurrentUpdate", times: 10 }))
        case "Failed":
          return yield* new Errors.InvalidRequest({
            reason: `the payment was declined (${outcome.code}): no credit was granted`,
            param
          })
        case "RequiresAction":
          return yield* new Errors.InvalidRequest({
            reason: "the card asks for authentication, which a top-up does not take: no credit was granted",
            param
          })
        default:
          return yield* new Errors.ProcessorUnreachable({
            detail:
              "the processor did not confirm the payment: no credit was granted yet; retry with the same Request-Id"
          })
      }
    })

    /** Sets a customer's automatic top-up (`enabled`, `threshold`, `amount`, `currency`). */
    const setAutoTopUp = Effect.fn("CreditGrants.setAutoTopUp")(function* (
      merchantId: string,
      input: AutoTopUpCommand
    ) {
      if (input.enabled === undefined)
        return yield* new Errors.InvalidParameter({ param: "enabled", reason: "is required" })
      const currency = yield* requiredCurrency(input.currency)
      const amount = yield* positiveAmount("amount", input.amount, currency)
      const threshold = yield* positiveAmount("threshold", input.threshold, currency)
      yield* customer(merchantId, input.customer_id)
      const at = DateTime.makeUnsafe(yield* nowOf(yield* merchants.get(merchantId)))
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const current = yield* Effect.orDie(settings.get(merchantId, input.customer_id))
          const fields = {
            customer_id: input.customer_id,
            merchant_id: merchantId,
            enabled: input.enabled === true,
            currency,
            threshold: Money.format(threshold),
            amount: Money.format(amount),
            updated_at: at
          }
          if (current._tag === "None") {
            const made = new CreditGrant.AutoTopUp(
              { ...fields, in_flight: null, failed_attempts: 0, created_at: at },
              { disableChecks: true }
            )
            yield* settings
              .insert(made)
              .pipe(
                Effect.catchTag("UniqueViolation", () =>
                  Effect.fail(new Errors.ConcurrentUpdate({ resource: "auto_top_up", id: input.customer_id }))
                )
              )
            return made
          }
          const next = new CreditGrant.AutoTopUp({ ...current.value.value, ...fields }, { disableChecks: true })
          yield* settings.update(next, current.value.version).pipe(
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "auto_top_up", id: input.customer_id }))
            ),
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
          )
          return next
        })
      )
    })

    /** A customer's automatic top-up, if set. */
    const autoTopUp = Effect.fn("CreditGrants.autoTopUp")(function* (merchantId: string, customerId: string) {
      yield* customer(merchantId, customerId)
      return Option.map(yield* Effect.orDie(settings.get(merchantId, customerId)), (v) => v.value)
    })

    /**
     * The `auto_top_up` work item: charges the top-up in flight off session (keyed by its payment
     * key and attempt) and grants it on success; a decline emits `v2.customer.auto_top_up_failed`
     * and is tried again per {@link AUTO_TOP_UP_RETRY_DAYS}. A processor that did not answer fails
     * the item (the worker tries the same attempt again later).
     */
    const runAutoTopUp = Effect.fn("CreditGrants.runAutoTopUp")(function* (merchantId: string, customerId: string) {
      const current = yield* Effect.orDie(settings.get(merchantId, customerId))
      if (current._tag === "None" || current.value.value.in_flight === null) return
      const s = current.value.value
      const key = s.in_flight!
      const merchant = yield* merchants.get(merchantId)
      const at = yield* nowOf(merchant)
      const settle = (patch: { readonly in_flight: string | null; readonly failed_attempts: number }) =>
        Effect.gen(function* () {
          const now = yield* Effect.orDie(settings.get(merchantId, customerId))
          if (now._tag === "None") return
          yield* settings
            .update(
              new CreditGrant.AutoTopUp(
                { ...now.value.value, ...patch, updated_at: DateTime.makeUnsafe(at) },
                { disableChecks: true }
              ),
              now.value.version
            )
            .pipe(
              Effect.catchTag("VersionConflict", () =>
                Effect.fail(new Errors.ConcurrentUpdate({ resource: "auto_top_up", id: customerId }))
              ),
              Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
            )
        })
      // turned off since it was put in flight: nothing is charged
      if (!s.enabled) return yield* storage.withTransaction(settle({ in_flight: null, failed_attempts: 0 }))
      const amount = yield* Effect.orDie(Effect.fromResult(Money.parse(s.amount, s.currency)))
      const attempt = s.failed_attempts + 1
      const token = yield* cardOnFile(storage, merchantId, customerId)
      const outcome = Option.isNone(token)
        ? Ports.ChargeOutcome.Failed({ code: "no_card_on_file", message: "The customer has no card on file." })
        : yield* gateway.charge({
            trade_id: key,
            attempt,
            merchant_id: merchantId,
            customer_id: customerId,
            amount,
            source: { _tag: "Token", token: token.value },
            off_session: true,
            now: at
          })
      if (outcome._tag === "Succeeded")
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            yield* GrantLedger.grant(storage, {
              merchantId,
              customerId,
              amount,
              category: "paid",
              source: "top_up",
              reason: "Automatic top-up",
              expiresAt: null,
              paymentKey: key,
              lane: laneOf(merchant),
              at
            })
            yield* settle({ in_flight: null, failed_attempts: 0 })
          })
        )
      if (outcome._tag !== "Failed" && outcome._tag !== "RequiresAction")
        return yield* new Errors.ProcessorUnreachable({
          detail: `automatic top-up ${key}: no answer from the processor`
        })
      const code = outcome._tag === "Failed" ? outcome.code : "authentication_required"
      const message = outcome._tag === "Failed" ? outcome.message : "The card asks for authentication."
      const delay = AUTO_TOP_UP_RETRY_DAYS[attempt - 1]
      const nextAt = delay === undefined ? null : at + delay * DAY
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* settle(
            nextAt === null ? { in_flight: null, failed_attempts: 0 } : { in_flight: key, failed_attempts: attempt }
          )
          yield* GrantLedger.failed(storage, {
            merchantId,
            data: new CreditGrant.AutoTopUpFailure(
              {
                customer_id: customerId,
                currency: s.currency,
                amount: s.amount,
                payment_key: key,
                attempt,
                code,
                message,
                next_attempt_at: nextAt === null ? null : DateTime.makeUnsafe(nextAt)
              },
              { disableChecks: true }
            ),
            at
          })
          if (nextAt !== null)
            yield* storage.workQueue.schedule({
              lane: laneOf(merchant),
              merchant_id: merchantId,
              kind: "auto_top_up",
              subject_id: customerId,
              due_at: nextAt
            })
        })
      )
    })

    return {
      create,
      get,
      list,
      active,
      void: voidGrant,
      expire,
      topUp,
      setAutoTopUp,
      autoTopUp,
      runAutoTopUp
    } as const
  })
}) {
  /** The live implementation: needs `Storage`, `Merchants` and the `PaymentGateway` port. */
  static readonly layer = Layer.effect(this, this.make)
}
