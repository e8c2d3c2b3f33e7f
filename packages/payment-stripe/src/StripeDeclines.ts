/**
 * Stripe's decline codes classed for dunning (`hard`, `soft`, `expired_card`; see
 * `DunningPolicy.DeclineClass`): the class of every `Failed` charge outcome the Stripe gateway
 * answers. The table, and why each code is where it is, is in docs/payments.md ("Decline
 * classes"). Informed by Stripe's decline code reference (docs.stripe.com/declines/codes) and
 * Smart Retries, which does not retry the issuer's non-retryable codes.
 *
 * @since 0.1.0
 */
import type { DunningPolicy } from "@recur/core"

/**
 * The card can never pay: the customer must give another payment method. Stripe's next step for
 * each is "use another card" or "contact the issuer", and Smart Retries does not retry the
 * issuer's non-retryable ones (lost, stolen, pickup, revoked, incorrect number…). `do_not_honor`
 * is here as the issue asks (an issuer that refuses without a reason refuses again).
 *
 * @since 0.1.0
 */
export const hard: ReadonlySet<string> = new Set([
  "stolen_card",
  "lost_card",
  "pickup_card",
  "fraudulent",
  "merchant_blacklist",
  "invalid_account",
  "new_account_information_available",
  "do_not_honor",
  "do_not_try_again",
  "card_not_supported",
  "currency_not_supported",
  "restricted_card",
  "security_violation",
  "service_not_allowed",
  "transaction_not_allowed",
  "not_permitted",
  "no_action_taken",
  "revocation_of_authorization",
  "revocation_of_all_authorizations",
  "stop_payment_order",
  "incorrect_number",
  "invalid_number",
  "incorrect_cvc",
  "invalid_cvc",
  "invalid_token",
  "resource_missing",
  "testmode_decline",
  "live_mode_test_card"
])

/**
 * The card's expiry has passed (or is wrong): the customer must give the card's new expiry or
 * another card.
 *
 * @since 0.1.0
 */
export const expired: ReadonlySet<string> = new Set(["expired_card", "invalid_expiry_month", "invalid_expiry_year"])

/**
 * The class of a Stripe decline by its code (the decline code when it says more than "generic",
 * else the error code, as the gateway names a decline): `hard`, `expired_card`, else `soft` —
 * `insufficient_funds`, `processing_error`, `try_again_later`, `issuer_not_available`,
 * `reenter_transaction`, `card_velocity_exceeded`, `withdrawal_count_limit_exceeded`,
 * `generic_decline`/`card_declined`, `call_issuer`, `approve_with_id`, `authentication_required`
 * (the engine waits for the customer's 3-D Secure) and any code Stripe adds later: they may pay
 * on a later try, so the merchant's schedule decides.
 *
 * @example
 * classOf("stolen_card") // "hard"
 * classOf("insufficient_funds") // "soft"
 * @since 0.1.0
 */
export const classOf = (code: string): DunningPolicy.DeclineClass =>
  hard.has(code) ? "hard" : expired.has(code) ? "expired_card" : "soft"
