/**
 * The customer's balance is the customer's, not one subscription's: credit held as another
 * subscription's share (`credit_balance`) or by no subscription (a manual adjustment, a credit
 * note of a one-off invoice) is applied to whichever invoice of the customer comes next in that
 * currency, before it is charged — as Stripe applies a customer balance to the next invoice.
 *
 * Credit is still *held* somewhere (a subscription's share, or unheld on the ledger), so that a
 * renewal can keep applying its own share with its own tax rules; an invoice that needs more than
 * its subscription holds *takes* what it needs from the customer's other credit first — unheld
 * credit, then the other subscriptions' positive shares — in the transaction that bills it. A move
 * between holders does not change the customer's balance, so it writes no ledger entry; the
 * invoice that applies the credit writes the one `applied_to_invoice` entry, as before.
 *
 * A subscription due to renew by the taking invoice's instant keeps its share for its own renewal
 * (whichever of two subscriptions renewing at one instant runs first, each applies its own credit
 * first). Never more than the customer's balance allows: what another holder has is taken only up to
 * the balance beyond the taker's own share (a debit held by a third subscription stays owed, and
 * lowers what can be taken).
 *
 * @since 0.1.0
 */
import { DateTime, Effect, type Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import * as Subscription from "../subscriptions/Subscription.js"
import type * as Store from "../kernel/Store.js"
import type { CustomerBalanceRecord } from "./BalanceEntities.js"
import * as CustomerBalance from "./CustomerBalance.js"
import * as GrantLedger from "../credits/GrantLedger.js"

const shareOf = (rec: Entities.SubscriptionRecord, currency: string): bigint =>
  Result.getOrElse(
    Result.map(Money.parse(rec.subscription.credit_balance, currency, { allowNegative: true }), (m) => m.amount),
    () => 0n
  )

/**
 * What a holder (a subscription, or `null` for an invoice outside any) may take from the
 * customer's other credit in `currency`: `amount` (≥ 0), from `unheld` credit first, then from
 * the other subscriptions' positive shares in `shares`.
 *
 * @since 0.1.0
 */
export interface Available {
  readonly currency: string
  /** The customer whose credit it is (its credit grants follow what is taken of the unheld credit). */
  readonly customerId: string
  /** When the taking invoice bills. */
  readonly at: number
  readonly amount: bigint
  /** Positive credit no subscription holds. */
  readonly unheld: bigint
  /** Other subscriptions holding a positive share, largest first (ties by id). */
  readonly shares: ReadonlyArray<{ readonly subscriptionId: string; readonly share: bigint }>
  /** The customer's running balance as read: {@link take} holds it at this version. */
  readonly row: Option.Option<Store.Versioned<CustomerBalanceRecord>>
}

const none = (currency: string, customerId: string, at: number, row: Available["row"]): Available => ({
  currency,
  customerId,
  at,
  amount: 0n,
  unheld: 0n,
  shares: [],
  row
})

/** Every subscription of a customer (paged through: none is missed, however many it has). */
const subscriptionsOf = (storage: StorageService, merchantId: string, customerId: string) =>
  Effect.gen(function* () {
    const all: Array<Entities.SubscriptionRecord> = []
    let after: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        storage.repository(Entities.subscription).list(merchantId, {
          limit: 100,
          filters: [{ column: "customer_id", op: "in", values: [customerId] }],
          ...(after !== undefined ? { starting_after: after } : {})
        })
      )
      all.push(...page.list)
      if (!page.has_more || page.list.length === 0) return all
      after = page.list.at(-1)!.subscription.id
    }
  })

/**
 * The credit a holder may take (see {@link Available}). One read (the customer's running
 * balance) when the customer has nothing beyond the holder's own share — the usual case — and one
 * more (its subscriptions) otherwise.
 *
 * @since 0.1.0
 */
export const available = (
  storage: StorageService,
  input: {
    readonly merchantId: string
    readonly customerId: string
    readonly currency: string
    /** The subscription whose invoice takes, with its share as it holds it now; none for a one-off invoice. */
    readonly holder: Entities.SubscriptionRecord | null
    /**
     * When the taking invoice bills (a renewal: its scheduled instant, even when forced early): a
     * subscription due to renew by then keeps its share for that renewal. So two renewals never
     * take from each other, and a renewal only writes holders due after it (no lock cycle).
     */
    readonly at: number
  }
): Effect.Effect<Available> =>
  Effect.gen(function* () {
    const { currency } = input
    const row = yield* CustomerBalance.rowOf(storage, input.merchantId, input.customerId, currency)
    const balance = row._tag === "Some" ? row.value.value.balance : 0n
    const own = input.holder === null ? 0n : shareOf(input.holder, currency)
    // the balance beyond the holder's own share: all another holder may give (never overdrawn)
    const beyond = balance - own
    if (beyond <= 0n) return none(currency, input.customerId, input.at, row)
    const mine = input.holder?.subscription.id
    const subs = (yield* subscriptionsOf(storage, input.merchantId, input.customerId)).filter(
      (s) => s.currency === currency
    )
    const held = subs.reduce((a, s) => a + (s.subscription.id === mine ? own : shareOf(s, currency)), 0n)
    // credit grants expired by then (their expiry work not run yet) are going away: never used
    const expiring =
      balance - held > 0n
        ? yield* GrantLedger.expiringBy(storage, input.merchantId, input.customerId, currency, input.at)
        : 0n
    const unheld = balance - held - expiring > 0n ? balance - held - expiring : 0n
    // a holder gives only from a period that strictly contains a renewal's instant: one renewing
    // (or renewed, or started) at that instant keeps its share, whichever of the two runs first;
    // a one-off invoice leaves only holders due to renew by now
    const renewsBy = (s: Entities.SubscriptionRecord) =>
      s.subscription.status !== "canceled" &&
      ((s.subscription.next_invoice_date !== null &&
        DateTime.toEpochMillis(s.subscription.next_invoice_date) <= input.at) ||
        (input.holder !== null &&
          s.subscription.current_period_start !== null &&
          DateTime.toEpochMillis(s.subscription.current_period_start) >= input.at))
    const shares = subs
      .filter((s) => s.subscription.id !== mine && !renewsBy(s))
      .map((s) => ({ subscriptionId: s.subscription.id, share: shareOf(s, currency) }))
      .filter((x) => x.share > 0n)
      .sort((a, b) =>
        a.share === b.share ? (a.subscriptionId < b.subscriptionId ? -1 : 1) : a.share > b.share ? -1 : 1
      )
    const pool = shares.reduce((a, x) => a + x.share, unheld)
    return {
      currency,
      customerId: input.customerId,
      at: input.at,
      amount: pool < beyond ? pool : beyond,
      unheld,
      shares,
      row
    }
  })

/**
 * Takes `amount` (at most `available.amount`) from the other holders, in the caller's
 * transaction: the customer's running balance held at the version read (so that no two invoices
 * take one credit), then unheld credit first (it becomes the taker's once the taker holds or
 * applies it; the customer's credit grants give it first, earliest-expiring first, each written at
 * its version — `GrantLedger.consume`), then the other subscriptions' shares, each written at the version read now (a
 * concurrent writer of one fails this with `ConcurrentUpdate`, and the caller's transaction rolls
 * back). No ledger entry: the customer's balance does not change.
 *
 * @since 0.1.0
 */
export const take = (
  storage: StorageService,
  merchantId: string,
  from: Available,
  amount: bigint
): Effect.Effect<void, Errors.ConcurrentUpdate> =>
  Effect.gen(function* () {
    if (amount <= 0n) return
    // the customer's balance held at the version read: a concurrent taker (of unheld credit too,
    // which no subscription row guards) fails with ConcurrentUpdate and its transaction rolls back
    yield* CustomerBalance.hold(storage, from.row)
    const wanted = amount < from.amount ? amount : from.amount
    const fromUnheld = wanted < from.unheld ? wanted : from.unheld
    if (fromUnheld > 0n)
      yield* GrantLedger.consume(storage, {
        merchantId,
        customerId: from.customerId,
        currency: from.currency,
        amount: fromUnheld,
        at: from.at
      })
    let left = wanted - from.unheld
    const subs = storage.repository(Entities.subscription)
    for (const x of from.shares) {
      if (left <= 0n) return
      const current = yield* Effect.orDie(subs.get(merchantId, x.subscriptionId))
      if (current._tag === "None")
        return yield* new Errors.ConcurrentUpdate({ resource: "subscription", id: x.subscriptionId })
      const share = shareOf(current.value.value, from.currency)
      // it moved since it was read: the caller reads again
      if (share !== x.share)
        return yield* new Errors.ConcurrentUpdate({ resource: "subscription", id: x.subscriptionId })
      const part = share < left ? share : left
      const rec = current.value.value
      yield* subs
        .update(
          {
            ...rec,
            subscription: new Subscription.Subscription(
              {
                ...rec.subscription,
                credit_balance: Money.format(Money.make(share - part, from.currency)),
                updated_at: rec.subscription.updated_at
              },
              { disableChecks: true }
            )
          },
          current.value.version
        )
        .pipe(
          Effect.catchTag("VersionConflict", () =>
            Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: x.subscriptionId }))
          ),
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        )
      left -= part
    }
  })

/**
 * What to take of `available` for an invoice charging `wanted`: all of it when it covers the
 * charge, else as much as leaves the processor's `minimum` (or more) to charge — never an amount
 * left under the minimum (which would be carried, not charged).
 *
 * @since 0.1.0
 */
export const capped = (available: bigint, wanted: bigint, minimum: bigint): bigint => {
  if (available <= 0n || wanted <= 0n) return 0n
  if (available >= wanted) return wanted
  const left = wanted - available
  if (left >= minimum) return available
  return wanted - minimum > 0n ? wanted - minimum : 0n
}

/**
 * For a subscription's invoice that still charges `wanted` after its own share: takes up to that
 * from the customer's other credit and adds it to the subscription's share, written at `version`
 * (no ledger entry). Answers the record and its new version, and the amount taken — none when
 * nothing was taken (nothing wanted, or no other credit).
 *
 * @since 0.1.0
 */
export const pull = (
  storage: StorageService,
  input: {
    readonly merchantId: string
    readonly holder: Entities.SubscriptionRecord
    readonly version: number
    readonly wanted: Money.Money
    /** When the invoice bills. */
    readonly at: number
    /** The processor's minimum charge (0: none): what is left to charge is 0 or at least this. */
    readonly minimum: bigint
  }
): Effect.Effect<
  { readonly rec: Entities.SubscriptionRecord; readonly version: number; readonly taken: Money.Money } | undefined,
  Errors.ConcurrentUpdate
> =>
  Effect.gen(function* () {
    const { holder } = input
    const currency = holder.currency
    if (input.wanted.amount <= 0n || input.wanted.currency !== currency) return undefined
    const from = yield* available(storage, {
      merchantId: input.merchantId,
      customerId: holder.subscription.customer_id,
      currency,
      holder,
      at: input.at
    })
    const amount = capped(from.amount, input.wanted.amount, input.minimum)
    if (amount <= 0n) return undefined
    yield* take(storage, input.merchantId, from, amount)
    const rec: Entities.SubscriptionRecord = {
      ...holder,
      subscription: new Subscription.Subscription(
        {
          ...holder.subscription,
          credit_balance: Money.format(Money.make(shareOf(holder, currency) + amount, currency))
        },
        { disableChecks: true }
      )
    }
    const version = yield* storage
      .repository(Entities.subscription)
      .update(rec, input.version)
      .pipe(
        Effect.catchTag("VersionConflict", () =>
          Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: holder.subscription.id }))
        ),
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
      )
    return { rec, version, taken: Money.make(amount, currency) }
  })
