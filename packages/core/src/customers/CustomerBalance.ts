/**
 * The customer balance ledger: every change of what a customer holds (credit) or owes on its
 * balance, in one currency, is an append-only entry with its source; a running balance per
 * customer and currency is updated at its optimistic version with each entry, so that two
 * writers at once (two subscriptions of one customer renewing together on PostgreSQL) never lose
 * an update — the second fails with `ConcurrentUpdate` and its transaction rolls back.
 *
 * Invariant: a customer's balance in a currency is the sum of its entries, and each entry's
 * `ending_balance` is the balance right after it.
 *
 * The functions here run inside the caller's transaction (they write and emit
 * `v2.customer.balance_updated`); `Customers`/`Billing` expose the reads and manual adjustments.
 *
 * @since 0.1.0
 */
import { Effect, type Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { emit, type StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import type * as Store from "../kernel/Store.js"
import type { BalanceSourceType, BalanceTransactionRecord, CustomerBalanceRecord } from "./BalanceEntities.js"
import { BalanceTransaction, toTransaction } from "./BalanceTransaction.js"
import * as AutoTopUpTrigger from "../credits/AutoTopUpTrigger.js"

/**
 * One change of a customer's balance.
 *
 * @since 0.1.0
 */
export interface Entry {
  readonly merchantId: string
  readonly customerId: string
  readonly currency: string
  /** Minor units; positive credits the customer, negative debits. Zero writes nothing. */
  readonly amount: bigint
  readonly sourceType: BalanceSourceType
  readonly sourceId: string | null
  readonly subscriptionId?: string | null | undefined
  readonly description?: string | null | undefined
  readonly at: number
}

/** The id of a customer's running balance in one currency. */
const balanceId = (customerId: string, currency: string) => `${customerId}:${currency}`

const conflict = (customerId: string, currency: string) =>
  new Errors.ConcurrentUpdate({ resource: "customer_balance", id: balanceId(customerId, currency) })

/**
 * Appends one entry and moves the running balance by it (in the caller's transaction), and emits
 * `v2.customer.balance_updated`. A concurrent writer of the same customer and currency makes it
 * fail with `ConcurrentUpdate`. Returns the entry (none for a zero amount).
 *
 * @since 0.1.0
 */
export const record = (
  storage: StorageService,
  entry: Entry
): Effect.Effect<BalanceTransactionRecord | undefined, Errors.ConcurrentUpdate> =>
  Effect.gen(function* () {
    if (entry.amount === 0n) return undefined
    const balances = storage.repository(Entities.customerBalance)
    const id = balanceId(entry.customerId, entry.currency)
    const current = yield* balances.get(entry.merchantId, id)
    const before = current._tag === "Some" ? current.value.value.balance : 0n
    const ending = before + entry.amount
    if (current._tag === "Some") {
      const next: CustomerBalanceRecord = {
        ...current.value.value,
        balance: ending,
        entries: current.value.value.entries + 1,
        updated_at: entry.at
      }
      yield* balances.update(next, current.value.version).pipe(
        Effect.catchTag("VersionConflict", () => Effect.fail(conflict(entry.customerId, entry.currency))),
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
      )
    } else {
      yield* balances
        .insert({
          id,
          merchant_id: entry.merchantId,
          customer_id: entry.customerId,
          currency: entry.currency,
          balance: ending,
          entries: 1,
          created_at: entry.at,
          updated_at: entry.at
        })
        .pipe(Effect.catchTag("UniqueViolation", () => Effect.fail(conflict(entry.customerId, entry.currency))))
    }
    const txn: BalanceTransactionRecord = {
      id: yield* Ids.make(Ids.prefixes.balanceTransaction),
      merchant_id: entry.merchantId,
      customer_id: entry.customerId,
      currency: entry.currency,
      amount: entry.amount,
      ending_balance: ending,
      source_type: entry.sourceType,
      source_id: entry.sourceId,
      subscription_id: entry.subscriptionId ?? null,
      description: entry.description ?? null,
      created_at: entry.at
    }
    yield* Effect.orDie(storage.repository(Entities.balanceTransaction).insert(txn))
    yield* emit(storage, {
      merchant_id: entry.merchantId,
      type: "v2.customer.balance_updated",
      business_id: entry.customerId,
      schema: BalanceTransaction,
      data: toTransaction(txn),
      at: entry.at
    })
    // credit applied to an invoice may bring the balance under an automatic top-up's threshold
    if (entry.sourceType === "applied_to_invoice" && entry.amount < 0n)
      yield* AutoTopUpTrigger.afterApplied(storage, {
        merchantId: entry.merchantId,
        customerId: entry.customerId,
        currency: entry.currency,
        ending,
        entryId: txn.id,
        at: entry.at
      })
    return txn
  })

/**
 * The running balance row of a customer in one currency, with its version (none before its first
 * entry).
 *
 * @since 0.1.0
 */
export const rowOf = (
  storage: StorageService,
  merchantId: string,
  customerId: string,
  currency: string
): Effect.Effect<Option.Option<Store.Versioned<CustomerBalanceRecord>>> =>
  storage.repository(Entities.customerBalance).get(merchantId, balanceId(customerId, currency))

/**
 * Holds a customer's running balance at the version read (`row`), in the caller's transaction:
 * writes it unchanged at that version, so that a concurrent holder of it fails with
 * `ConcurrentUpdate` — two invoices taking one credit are never both committed. Nothing for a
 * customer without a balance row (nothing to take).
 *
 * @since 0.1.0
 */
export const hold = (
  storage: StorageService,
  row: Option.Option<Store.Versioned<CustomerBalanceRecord>>
): Effect.Effect<void, Errors.ConcurrentUpdate> =>
  row._tag === "None"
    ? Effect.void
    : storage
        .repository(Entities.customerBalance)
        .update(row.value.value, row.value.version)
        .pipe(
          Effect.asVoid,
          Effect.catchTag("VersionConflict", () =>
            Effect.fail(conflict(row.value.value.customer_id, row.value.value.currency))
          ),
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        )

/**
 * A customer's balance in one currency (zero when it has no entry).
 *
 * @since 0.1.0
 */
export const balanceOf = (
  storage: StorageService,
  merchantId: string,
  customerId: string,
  currency: string
): Effect.Effect<Money.Money> =>
  Effect.map(storage.repository(Entities.customerBalance).get(merchantId, balanceId(customerId, currency)), (o) =>
    Money.make(o._tag === "Some" ? o.value.value.balance : 0n, currency)
  )

/**
 * A customer's balances, one per currency it ever had an entry in.
 *
 * @since 0.1.0
 */
export const balancesOf = (
  storage: StorageService,
  merchantId: string,
  customerId: string
): Effect.Effect<ReadonlyArray<CustomerBalanceRecord>> =>
  Effect.map(
    storage.repository(Entities.customerBalance).list(merchantId, {
      limit: 100,
      filters: [{ column: "customer_id", op: "in", values: [customerId] }]
    }),
    (page) => [...page.list].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0))
  ).pipe(Effect.orDie)

/**
 * What a change of a subscription's `credit_balance` was, when its writer does not say: a rise is
 * a proration credit, a fall credit applied to an invoice.
 *
 * @since 0.1.0
 */
export interface SubscriptionSource {
  /** Inferred from the sign when absent. */
  readonly sourceType?: BalanceSourceType
  readonly sourceId?: string | null
  readonly description?: string | null
}

/**
 * Mirrors a change of a subscription's `credit_balance` (its share of the customer's balance)
 * into the ledger: the difference between `before` (absent for a new subscription: zero) and
 * `after`, with its source (told, else inferred from its sign). Nothing when it did not change.
 *
 * @since 0.1.0
 */
export const mirrorSubscription = (
  storage: StorageService,
  before: Entities.SubscriptionRecord | undefined,
  after: Entities.SubscriptionRecord,
  at: number,
  source?: SubscriptionSource
): Effect.Effect<BalanceTransactionRecord | undefined, Errors.ConcurrentUpdate> =>
  Effect.suspend(() => {
    const currency = after.currency
    const parse = (s: string) => Result.getOrElse(Money.parse(s, currency, { allowNegative: true }), () => undefined)
    const was = before === undefined ? Money.make(0n, currency) : parse(before.subscription.credit_balance)
    const now = parse(after.subscription.credit_balance)
    if (was === undefined || now === undefined || now.amount === was.amount) return Effect.succeed(undefined)
    const delta = now.amount - was.amount
    return record(storage, {
      merchantId: after.merchant_id,
      customerId: after.subscription.customer_id,
      currency,
      amount: delta,
      sourceType: source?.sourceType ?? (delta > 0n ? "proration_credit" : "applied_to_invoice"),
      sourceId: source?.sourceId ?? after.subscription.id,
      subscriptionId: after.subscription.id,
      description: source?.description ?? null,
      at
    })
  })
