/**
 * Checkout sessions: a hosted or embedded page where a customer pays for one line item.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { BillingAddress, Metadata, NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import type { Result } from "effect"
import * as Lifecycle from "../kernel/Lifecycle.js"

/** @since 0.1.0 */
export const Locale = Schema.Literals([
  "ar-SA",
  "de-DE",
  "en-US",
  "es-ES",
  "fr-FR",
  "id-ID",
  "it-IT",
  "ja-JP",
  "ko-KR",
  "nl-NL",
  "pl-PL",
  "pt-PT",
  "ru-RU",
  "th-TH",
  "zh-CN",
  "zh-TW"
])

/** @since 0.1.0 */
export const ProductType = Schema.Literals([
  "saas",
  "software",
  "online_video_content",
  "information_service",
  "ebook",
  "digital_graphic_template",
  "video_game",
  "blockchain_digital_product",
  "other_digital_product"
])

/** @since 0.1.0 */
export class SessionLineItem extends Schema.Class<SessionLineItem>("SessionLineItem")({
  price_id: Schema.String,
  quantity: Schema.String,
  quantity_editable: Schema.Boolean,
  quantity_min: NullableString,
  quantity_max: NullableString
}) {}

/**
 * A checkout session record.
 *
 * @since 0.1.0
 */
export class CheckoutSession extends Schema.Class<CheckoutSession>("CheckoutSession")({
  session_id: Schema.String,
  session_url: Schema.String,
  merchant_id: Schema.String,
  status: Lifecycle.SessionStatus,
  mode: Schema.Literals(["checkout", "payment"]),
  line_items: Schema.Array(SessionLineItem),
  customer_id: NullableString,
  payer_id: NullableString,
  email: NullableString,
  order_id: NullableString,
  return_url: NullableString,
  cancel_url: NullableString,
  integration_method: Schema.Literals(["hosted", "embedded"]),
  redirect_on_completion: Schema.Literals(["always", "if_required"]),
  locale: Schema.NullOr(Locale),
  payment_mode: Schema.Literals(["onetime_payment", "subscription"]),
  trial_policy: Schema.Literals([1, 2, 3]),
  total_cycles: Schema.NullOr(Schema.Int),
  convert_to_continuous: Schema.Boolean,
  product_type: Schema.NullOr(ProductType),
  terms_of_service_url: NullableString,
  privacy_policy_url: NullableString,
  first_source_channel: NullableString,
  billing_address: Schema.NullOr(BillingAddress),
  amount: NullableString,
  currency: Schema.String,
  target_currency: NullableString,
  merchant_rate: NullableString,
  metadata: Metadata,
  trade_id: NullableString,
  subscription_id: NullableString,
  expires_at: Timestamp,
  created_at: Timestamp,
  completed_at: NullableTimestamp,
  /** The discount redeemed by `discount_code` (sessions stored before discounts: none). */
  discount_id: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  discount_code: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The hosted page offers a discount code field (Stripe's `allow_promotion_codes`). */
  allow_discount_codes: Schema.Boolean.pipe(Schema.withDecodingDefault(Effect.succeed(false))),
  /**
   * The tax in `amount` (inclusive taxes are inside it, exclusive ones were added to it), at the
   * billing address or the customer's (sessions stored before taxes: null).
   */
  tax_amount: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * The billing cycle anchor the subscription's periods start on (Stripe's
   * `billing_cycle_anchor`); the first period runs from the payment to it. `null`: the payment
   * is the anchor (sessions stored before anchors: null).
   */
  billing_cycle_anchor: NullableTimestamp.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * With an anchor, whether the short first period is charged as its share of a whole period
   * (`create_prorations`) or free (`none`); `null` without an anchor.
   */
  proration_behavior: Schema.NullOr(Schema.Literals(["create_prorations", "none"])).pipe(
    Schema.withDecodingDefault(Effect.succeed(null))
  )
}) {}

/**
 * Moves a session's `status` (the {@link Lifecycle.checkoutSession} machine). The only way it
 * changes.
 *
 * @since 0.1.0
 */
export const move = (
  session: CheckoutSession,
  trigger: "paid" | "expire",
  patch: Partial<Omit<CheckoutSession, "status">> = {}
): Result.Result<Lifecycle.Moved<CheckoutSession>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.checkoutSession,
    session.status,
    trigger,
    (to) => new CheckoutSession({ ...session, ...patch, status: to }, { disableChecks: true })
  )

/**
 * An absolute web URL with a host, of one of `protocols`, at most `max` characters, parsed (or
 * undefined). The terms and privacy links are `https:` only (≤ 512, or empty). The redirect
 * URLs, where the hosted page sends the payer, may also be `http:` (≤ 2,048; for sandbox
 * merchants only, which the checkout service decides, knowing the merchant) and carry no
 * credentials; `javascript:`, `data:`, scheme-relative (`//evil.example`) and relative URLs
 * never pass.
 */
const webUrl = (s: string, protocols: ReadonlyArray<string>, max: number): URL | undefined => {
  if (s.length > max || !/^https?:\/\//i.test(s)) return undefined
  try {
    const u = new URL(s)
    return protocols.includes(u.protocol) && u.hostname !== "" ? u : undefined
  } catch {
    return undefined
  }
}

/**
 * A session page's terms or privacy link: empty, or an absolute https URL of at most 512 characters.
 *
 * @since 0.1.0
 */
export const isPolicyUrl = (s: string): boolean => s === "" || webUrl(s, ["https:"], 512) !== undefined

/**
 * An absolute http(s) URL without credentials, of at most 2048 characters: where a hosted page may send its visitor back.
 *
 * @since 0.1.0
 */
export const isRedirectUrl = (s: string): boolean => {
  const u = webUrl(s, ["https:", "http:"], 2048)
  return u !== undefined && u.username === "" && u.password === ""
}
