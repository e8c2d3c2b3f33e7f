/**
 * The customer balance as a service: read a customer's balances and its ledger, and adjust the
 * balance by hand with a reason. An adjustment (like a credit note to the balance) is held as the
 * share of the customer's subscription in that currency that renews next, so its next invoice
 * applies it before charging (a debit is charged on it); a customer with no such subscription
 * keeps it on the ledger alone. See docs/decisions.md "Issue 34 — customer balance".
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import { pageErrors } from "../kernel/Paging.js"
import { merchantNow, type StorageService } from "../kernel/ServiceSupport.js"
import { Storage } from "../kernel/Store.js"
import type * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Subscription from "../subscriptions/Subscription.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import type { BalanceSourceType, BalanceTransactionRecord } from "./BalanceEntities.js"
import * as CustomerBalance from "./CustomerBalance.js"
import { type BalanceTransaction, type CustomerBalanceAmount, toAmount, toTransaction } from "./BalanceTransaction.js"

/** The most one reason may hold. */
const MAX_REASON = 500

/**
 * A manual adjustment: a signed decimal `amount` (positive credits the customer), its currency
 * and why.
 *
 * @since 0.1.0
 */
export interface Adjustment {
  readonly customer_id: string
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly reason?: string | undefined
}

/**
 * A ledger page request.
 *
 * @since 0.1.0
 */
export interface ListTransactions {
  readonly limit?: number
  readonly starting_after?: string
  readonly ending_before?: string
  readonly created?: Store.CreatedRange
}

const HOLDING = new Set(["trial", "active", "past_due", "paused", "unpaid"])

/**
 * Credits (positive) or debits (negative) a customer's balance in one currency, in the caller's
 * transaction: held as the share of its subscription in that currency that renews next (so the
 * next invoice applies it), or on the ledger alone when it has none. One ledger entry either way.
 *
 * @since 0.1.0
 */
export const allocate = (
  storage: StorageService,
  input: {
    readonly merchantId: string
    readonly customerId: string
    readonly amount: Money.Money
    readonly sourceType: BalanceSourceType
    readonly sourceId: string | null
    readonly description: string | null
    readonly at: number
    /** Hold it on this subscription (a credit note of its invoice), when it still bills. */
    readonly subscriptionId?: string | null
  }
): Effect.Effect<BalanceTransactionRecord | undefined, Errors.ConcurrentUpdate> =>
  Effect.gen(function* () {
    const subs = storage.repository(Entities.subscription)
    const page = yield* Effect.orDie(
      subs.list(input.merchantId, {
        limit: 100,
        filters: [{ column: "customer_id", op: "in", values: [input.customerId] }]
      })
    )
    const next = (s: Entities.SubscriptionRecord) =>
      s.subscription.next_invoice_date === null
        ? Number.MAX_SAFE_INTEGER
        : DateTime.toEpochMillis(s.subscription.next_invoice_date)
    const holders = page.list
      .filter((s) => s.currency === input.amount.currency && HOLDING.has(s.subscription.status))
      .sort((a, b) =>
        a.subscription.id === input.subscriptionId
          ? -1
          : b.subscription.id === input.subscriptionId
            ? 1
            : next(a) - next(b)
      )
    const holder = holders[0]
    const source = { sourceType: input.sourceType, sourceId: input.sourceId, description: input.description }
    if (holder === undefined)
      return yield* CustomerBalance.record(storage, {
        merchantId: input.merchantId,
        customerId: input.customerId,
        currency: input.amount.currency,
        amount: input.amount.amount,
        ...source,
        at: input.at
      })
    const current = yield* Effect.flatMap(subs.get(input.merchantId, holder.subscription.id), (o) =>
      o._tag === "Some"
        ? Effect.succeed(o.value)
        : Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: holder.subscription.id }))
    )
    const share = Result.getOrElse(
      Money.parse(current.value.subscription.credit_balance, input.amount.currency, { allowNegative: true }),
      () => Money.make(0n, input.amount.currency)
    )
    const saved: Entities.SubscriptionRecord = {
      ...current.value,
      subscription: new Subscription.Subscription(
        {
          ...current.value.subscription,
          credit_balance: Money.format(Money.make(share.amount + input.amount.amount, input.amount.currency))
        },
        { disableChecks: true }
      )
    }
    yield* writes(storage).saveSub(saved, current.version, input.at, source)
    const [last] = (yield* Effect.orDie(
      storage.repository(Entities.balanceTransaction).list(input.merchantId, {
        limit: 1,
        filters: [{ column: "customer_id", op: "in", values: [input.customerId] }]
      })
    )).list
    return last
  })

/**
 * The customer balance service.
 *
 * @since 0.1.0
 */
export class CustomerBalances extends Context.Service<CustomerBalances>()("@recur/core/CustomerBalances", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const customers = storage.repository(Entities.customer)
    const ledger = storage.repository(Entities.balanceTransaction)
    const now = merchantNow(storage)

    const customer = (merchantId: string, customerId: string) =>
      Effect.flatMap(customers.get(merchantId, customerId), (o) =>
        o._tag === "Some" && o.value.value.deleted_at === null
          ? Effect.succeed(o.value.value)
          : Effect.fail(new Errors.NotFound({ resource: "customer", id: customerId }))
      )

    /** A customer's balance in each currency it has one in (none: an empty list). */
    const balances = Effect.fn("CustomerBalances.balances")(function* (merchantId: string, customerId: string) {
      yield* customer(merchantId, customerId)
      const rows = yield* CustomerBalance.balancesOf(storage, merchantId, customerId)
      return rows.map(toAmount) as ReadonlyArray<CustomerBalanceAmount>
    })

    /** A customer's ledger, newest first, paged as every list. */
    const transactions = Effect.fn("CustomerBalances.transactions")(function* (
      merchantId: string,
      customerId: string,
      q: ListTransactions
    ) {
      yield* customer(merchantId, customerId)
      const page = yield* pageErrors(
        ledger.list(merchantId, {
          filters: [{ column: "customer_id", op: "in", values: [customerId] }],
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
      return { has_more: page.has_more, list: page.list.map(toTransaction) as ReadonlyArray<BalanceTransaction> }
    })

    /** A manual adjustment with its reason; bad input changes nothing. */
    const adjust = Effect.fn("CustomerBalances.adjust")(function* (merchantId: string, input: Adjustment) {
      for (const param of ["amount", "currency", "reason"] as const)
        if (input[param] === undefined) return yield* new Errors.InvalidParameter({ param, reason: "is required" })
      const currency = (input.currency ?? "").toUpperCase()
      const amount = yield* Money.parse(input.amount ?? "", currency, { allowNegative: true }).pipe(
        Effect.fromResult,
        Effect.mapError((e) =>
          e._tag === "UnknownCurrency"
            ? new Errors.InvalidParameter({ param: "currency", reason: "is not a currency Recur knows" })
            : new Errors.InvalidParameter({
                param: "amount",
                reason: "must be a signed decimal amount with at most the currency's decimals"
              })
        )
      )
      if (amount.amount === 0n) return yield* new Errors.InvalidParameter({ param: "amount", reason: "must not be 0" })
      if (!Money.isWithinBounds(amount))
        return yield* new Errors.InvalidParameter({ param: "amount", reason: "is above the most Recur holds" })
      const reason = (input.reason ?? "").trim()
      if (reason === "" || reason.length > MAX_REASON)
        return yield* new Errors.InvalidParameter({ param: "reason", reason: `must be 1 to ${MAX_REASON} characters` })
      yield* customer(merchantId, input.customer_id)
      const at = yield* now(merchantId)
      const entry = yield* storage.withTransaction(
        allocate(storage, {
          merchantId,
          customerId: input.customer_id,
          amount,
          sourceType: "manual_adjustment",
          sourceId: null,
          description: reason,
          at
        })
      )
      return toTransaction(entry!)
    })

    return { balances, transactions, adjust } as const
  })
}) {
  /** The live implementation: needs `Storage`. */
  static readonly layer = Layer.effect(this, this.make)
}
