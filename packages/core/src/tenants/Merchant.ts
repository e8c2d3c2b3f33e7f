/**
 * Merchants: the tenant of every record, with the settings the engine reads.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { NullableTimestamp, Timestamp } from "../kernel/Common.js"
import { GrantingStatus } from "../entitlements/Entitlement.js"
import type { Result } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { PortalSettings } from "../portal/PortalSession.js"
import { NotificationSettings } from "../notifications/Notification.js"
import { CreditMode } from "../money/Proration.js"
import { DeclineRules } from "../payments/DunningPolicy.js"

/**
 * A merchant's processor as stored: secrets encrypted.
 *
 * @since 0.1.0
 */
export class PaymentProcessor extends Schema.Class<PaymentProcessor>("PaymentProcessor")({
  provider: Schema.Literal("stripe"),
  publishable_key: Schema.String,
  secret_key_ciphertext: Schema.String,
  secret_key_last4: Schema.String,
  webhook_secret_ciphertext: Schema.NullOr(Schema.String),
  /**
   * The processor account the keys belong to (Stripe's `acct_…`), as verified when they were
   * saved; `null` on records saved before it was kept.
   */
  account_id: Schema.NullOr(Schema.String).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  )
}) {}

/**
 * What a merchant does with the renewals of a subscription whose charge is under an open fraud
 * dispute: `hold` them (the default) or `charge` them as usual.
 *
 * @since 0.1.0
 */
export const FraudDisputeRenewals = Schema.Literals(["hold", "charge"])

/**
 * A merchant and its billing settings.
 *
 * @since 0.1.0
 */
export class Merchant extends Schema.Class<Merchant>("Merchant")({
  merchant_id: Schema.String,
  name: Schema.String,
  currency: Schema.String,
  mode: Schema.Literals(["sandbox", "live"]),
  /** A sandbox merchant's frozen clock; moves only through `advance_clock`. */
  frozen_time: NullableTimestamp,
  /** `per_second` (default), `per_day` or `fixed_days(n)`. */
  proration_policy: Schema.String,
  proration_credit: CreditMode,
  /** Where a subscription goes when dunning retries are exhausted. */
  dunning_final_state: Schema.Literals(["unpaid", "canceled"]),
  /** Dunning retries, in days after the first failed renewal; `null` follows the engine's default policy. */
  dunning_retry_days: Schema.NullOr(Schema.Array(Schema.Int)).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * What each class of decline does to dunning (`retry` or `stop`); `null` follows the engine's
   * default policy (hard declines and expired cards stop, soft declines retry).
   */
  dunning_on_decline: Schema.NullOr(DeclineRules).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * How long a renewal's invoice stays an editable draft before it is finalised (numbered, taxed,
   * charged), in seconds: 0 (the default) finalises it at once, as before drafts; at most 30 days.
   */
  invoice_draft_grace_seconds: Schema.Int.pipe(
    Schema.withDecodingDefault(Effect.succeed(0)),
    Schema.withConstructorDefault(Effect.succeed(0))
  ),
  /**
   * What a re-rated closed period's difference becomes (issue 35, late events and corrections):
   * `automatic` (the default) issues the extra invoice or credit note at once; `review` keeps it
   * as a pending usage adjustment until the merchant applies it.
   */
  usage_adjustments: Schema.Literals(["automatic", "review"]).pipe(
    Schema.withDecodingDefault(Effect.succeed("automatic" as const)),
    Schema.withConstructorDefault(Effect.succeed("automatic" as const))
  ),
  /** What invoice numbers start with (`INV` → `INV-000001`, credit notes `INV-CN-000001`). */
  invoice_prefix: Schema.String.pipe(Schema.withDecodingDefault(Effect.succeed("INV"))),
  /** What its customers may do in the portal; `null` follows the server's default (`Settings.portal`). */
  portal_settings: Schema.NullOr(PortalSettings).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** Who charges its customers: `null` the sandbox; its Stripe account (secrets encrypted). */
  payment_processor: Schema.NullOr(PaymentProcessor).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  created_at: Timestamp,
  /**
   * Whether off-session charges (renewals, dunning retries, upgrades) of a subscription whose
   * charge is under an open fraud dispute (reason `fraudulent`) are made: `hold` (the default)
   * makes none while the dispute is open, `charge` makes them as usual.
   */
  fraud_dispute_renewals: FraudDisputeRenewals.pipe(
    Schema.withDecodingDefault(Effect.succeed("hold" as const)),
    Schema.withConstructorDefault(Effect.succeed("hold" as const))
  ),
  /** Its customer notifications (sender, messages, language); `null`: none are sent. */
  notification_settings: Schema.NullOr(NotificationSettings).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /** The subscription states that grant entitlements; `null` the default (trial, active, past_due). */
  entitlement_statuses: Schema.NullOr(Schema.Array(GrantingStatus)).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  )
}) {}

/**
 * Moves an API key record's `status` (the {@link Lifecycle.apiKey} machine). The only way it
 * changes.
 *
 * @since 0.1.0
 */
export const moveKey = <K extends { readonly status: Lifecycle.ApiKeyStatus }>(
  key: K,
  trigger: "rotate" | "revoke",
  patch: Partial<Omit<K, "status">> = {}
): Result.Result<Lifecycle.Moved<K>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(Lifecycle.apiKey, key.status, trigger, (to) => ({ ...key, ...patch, status: to }))

/**
 * A merchant's proration and dunning settings as the API shows them (the billing settings read).
 *
 * @since 0.1.0
 */
export class BillingSettings extends Schema.Class<BillingSettings>("BillingSettings")({
  /** How a mid-period change is prorated: `per_second`, `per_day` or `fixed_days(n)`. */
  proration_policy: Schema.String,
  /** What a downgrade's unused time becomes: a `refund` to the card or a `credit_balance`. */
  proration_credit: CreditMode,
  /** Where a subscription goes when dunning retries are exhausted. */
  dunning_final_state: Schema.Literals(["unpaid", "canceled"]),
  /** Days after the first failed renewal to retry; `null`: the engine's default policy. */
  dunning_retry_days: Schema.NullOr(Schema.Array(Schema.Int)),
  /**
   * What each class of decline (`hard`, `soft`, `expired_card`) does: `retry` on the schedule or
   * `stop` and wait for a new payment method; `null`: the engine's default policy.
   */
  dunning_on_decline: Schema.NullOr(DeclineRules),
  /** How long a renewal's invoice stays an editable draft, in seconds (0: finalised at once). */
  invoice_draft_grace_seconds: Schema.Int,
  /** Usage adjustments issued at once (`automatic`) or held for the merchant's review (`review`). */
  usage_adjustments: Schema.Literals(["automatic", "review"])
}) {}

/**
 * The billing settings of a merchant, as the API shows them.
 *
 * @example
 * billingSettingsOf(merchant).proration_policy // "per_second"
 * @since 0.1.0
 */
export const billingSettingsOf = (merchant: Merchant): BillingSettings =>
  new BillingSettings({
    proration_policy: merchant.proration_policy,
    proration_credit: merchant.proration_credit,
    dunning_final_state: merchant.dunning_final_state,
    dunning_retry_days: merchant.dunning_retry_days,
    dunning_on_decline: merchant.dunning_on_decline,
    invoice_draft_grace_seconds: merchant.invoice_draft_grace_seconds,
    usage_adjustments: merchant.usage_adjustments
  })
