/**
 * A credit grant: prepaid credit on a customer's balance in one currency — granted by the merchant
 * (`source: "grant"`, no money moves) or bought by the customer (`source: "top_up"`, a charge that
 * succeeded). It is credit no subscription holds (never a subscription's share): invoices of the
 * customer apply it through `SharedCredit`, earliest-expiring grant first, and `remaining` follows
 * every application in the transaction that writes it. See docs/customer-balance.md, "Prepaid credits".
 *
 * @since 0.1.0
 */
import { DateTime, Result, Schema } from "effect"
import { NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Money from "../money/Money.js"
import { CreditGrantStatus } from "./CreditGrantMachine.js"

/**
 * `category`: `paid` (the customer paid for it: a top-up, or a grant the merchant records as
 * paid) or `promotional` (a gift).
 *
 * @since 0.1.0
 */
export const CreditGrantCategory = Schema.Literals(["paid", "promotional"])
/** @since 0.1.0 */
export type CreditGrantCategory = typeof CreditGrantCategory.Type

/**
 * `source`: `grant` (the merchant granted it) or `top_up` (the customer bought it).
 *
 * @since 0.1.0
 */
export const CreditGrantSource = Schema.Literals(["grant", "top_up"])

/**
 * A credit grant. Amounts are decimal strings in the currency's units.
 *
 * @since 0.1.0
 */
export class CreditGrant extends Schema.Class<CreditGrant>("CreditGrant")({
  credit_grant_id: Schema.String,
  merchant_id: Schema.String,
  customer_id: Schema.String,
  currency: Schema.String,
  /** What was granted. */
  amount: Schema.String,
  /** What is left of it on the customer's balance (0 once depleted, expired or voided). */
  remaining: Schema.String,
  category: CreditGrantCategory,
  source: CreditGrantSource,
  reason: NullableString,
  /** When what remains is removed; `null`: never. */
  expires_at: NullableTimestamp,
  status: CreditGrantStatus,
  /** A top-up's payment key (the charge's idempotency key); `null` for a merchant's grant. */
  payment_key: NullableString,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/**
 * A customer's automatic top-up: when its balance in `currency` falls under `threshold` after an
 * invoice applies credit, `amount` is charged to its card on file and granted on success.
 *
 * @since 0.1.0
 */
export class AutoTopUp extends Schema.Class<AutoTopUp>("AutoTopUp")({
  customer_id: Schema.String,
  merchant_id: Schema.String,
  enabled: Schema.Boolean,
  currency: Schema.String,
  threshold: Schema.String,
  amount: Schema.String,
  /** The payment key of the top-up in flight (at most one per customer), if any. */
  in_flight: NullableString,
  /** Declined attempts of the top-up in flight. */
  failed_attempts: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/**
 * The payload of `v2.customer.auto_top_up_failed`: the customer, what was charged, the
 * processor's decline and when it is tried again (`null`: not again for this cause).
 *
 * @since 0.1.0
 */
export class AutoTopUpFailure extends Schema.Class<AutoTopUpFailure>("AutoTopUpFailure")({
  customer_id: Schema.String,
  currency: Schema.String,
  amount: Schema.String,
  payment_key: Schema.String,
  attempt: Schema.Int,
  code: Schema.String,
  message: Schema.String,
  next_attempt_at: NullableTimestamp
}) {}

/**
 * A grant's amount and remaining as money.
 *
 * @since 0.1.0
 */
export const remainingOf = (g: CreditGrant): bigint =>
  Result.getOrElse(
    Result.map(Money.parse(g.remaining, g.currency), (m) => m.amount),
    () => 0n
  )

/**
 * Consumption order: earliest `expires_at` first (a grant that never expires last), then oldest,
 * then by id.
 *
 * @since 0.1.0
 */
export const consumptionOrder = (a: CreditGrant, b: CreditGrant): number => {
  const ea = a.expires_at === null ? Number.POSITIVE_INFINITY : DateTime.toEpochMillis(a.expires_at)
  const eb = b.expires_at === null ? Number.POSITIVE_INFINITY : DateTime.toEpochMillis(b.expires_at)
  if (ea !== eb) return ea < eb ? -1 : 1
  const ca = DateTime.toEpochMillis(a.created_at)
  const cb = DateTime.toEpochMillis(b.created_at)
  if (ca !== cb) return ca - cb
  return a.credit_grant_id < b.credit_grant_id ? -1 : a.credit_grant_id > b.credit_grant_id ? 1 : 0
}

/**
 * Moves a grant's `status` by `trigger` (the {@link Lifecycle.creditGrant} machine) with its new
 * `remaining`: the only way a grant's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  grant: CreditGrant,
  trigger: "consume" | "deplete" | "expire" | "void",
  remaining: bigint,
  at: number
): Result.Result<Lifecycle.Moved<CreditGrant>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.creditGrant,
    grant.status,
    trigger,
    (to) =>
      new CreditGrant(
        {
          ...grant,
          remaining: Money.format(Money.make(remaining, grant.currency)),
          status: to,
          updated_at: DateTime.makeUnsafe(at)
        },
        { disableChecks: true }
      )
  )
