/**
 * The request bodies of the merchant API as Schemas: what the REST adapter decodes from the
 * wire, and what the Promise facade checks its callers' input against, so both refuse the same
 * input with the same `InvalidParameter` naming the same field. Fields are as the API names them;
 * the services decide what is required and what the values mean.
 *
 * @since 0.1.0
 */
import { CheckoutSession, Common, Customer, PriceRules, Proration } from "@recur/core"
import { Schema, SchemaIssue } from "effect"
import { AnchorFields } from "./BillingAnchors.js"
import { CollectionFields } from "./CollectionRequests.js"
import { DeclineRulesPatch } from "./DunningRequests.js"
import { PortalQuantityRules } from "./PortalRequests.js"

/**
 * A customer's postal address.
 *
 * @since 0.1.0
 */
export const Address = Schema.Struct(Customer.Address.fields)
const CustomerFields = {
  email: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  address: Schema.optional(Address),
  metadata: Schema.optional(Common.Metadata),
  payer_id: Schema.optional(Schema.String),
  email_subscription: Schema.optional(Schema.Literals([1, 2])),
  ...CollectionFields
}

/**
 * The body of `POST /api/v1/customer/create`.
 *
 * @since 0.1.0
 */
export const CreateCustomer = Schema.Struct(CustomerFields)

/**
 * The body of `POST /api/v1/customer/update`.
 *
 * @since 0.1.0
 */
export const UpdateCustomer = Schema.Struct({ ...CustomerFields, customer_id: Schema.optional(Schema.String) })

/**
 * The body of `POST /api/v1/products`.
 *
 * @since 0.1.0
 */
export const CreateProduct = Schema.Struct({
  product_name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  category_id: Schema.optional(Schema.String),
  image_url: Schema.optional(Schema.String),
  merchant_product_id: Schema.optional(Schema.String),
  quantity_unit: Schema.optional(Schema.String),
  features: Schema.optional(
    Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, type: Schema.String }))
  ),
  metadata: Schema.optional(Common.Metadata),
  product_status: Schema.optional(Schema.Literals(["draft", "active"])),
  /** What a subscription to the product grants: feature → boolean or integer (`{ "seats": 10, "sso": true }`). */
  entitlements: Schema.optional(Schema.Record(Schema.String, Schema.Union([Schema.Boolean, Schema.Number])))
})

/**
 * A price's `price_plan`.
 *
 * @since 0.1.0
 */
export const PricePlan = PriceRules.PricePlanInput

/**
 * The body of `POST /api/v1/prices`.
 *
 * @since 0.1.0
 */
export const CreatePrice = PriceRules.PriceInput

/**
 * The body of `POST /api/v1/session`.
 *
 * @since 0.1.0
 */
export const CreateSession = Schema.Struct({
  order_id: Schema.optional(Schema.String),
  line_items: Schema.optional(
    Schema.Array(
      Schema.Struct({
        price_id: Schema.optional(Schema.String),
        quantity: Schema.optional(Schema.String),
        quantity_editable: Schema.optional(Schema.Boolean),
        quantity_min: Schema.optional(Schema.String),
        quantity_max: Schema.optional(Schema.String)
      })
    )
  ),
  customer_id: Schema.optional(Schema.String),
  payer_id: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  mode: Schema.optional(Schema.Literals(["checkout", "payment"])),
  return_url: Schema.optional(Schema.String),
  cancel_url: Schema.optional(Schema.String),
  target_currency: Schema.optional(Schema.String),
  merchant_rate: Schema.optional(Schema.Union([Schema.Finite, Schema.String])),
  metadata: Schema.optional(Common.Metadata),
  integration_method: Schema.optional(Schema.Literals(["hosted", "embedded"])),
  redirect_on_completion: Schema.optional(Schema.Literals(["always", "if_required"])),
  locale: Schema.optional(CheckoutSession.Locale),
  payment_mode: Schema.optional(Schema.Literals(["onetime_payment", "subscription"])),
  trial_policy: Schema.optional(Schema.Literals([1, 2, 3])),
  total_cycles: Schema.optional(Schema.Finite),
  convert_to_continuous: Schema.optional(Schema.Boolean),
  product_type: Schema.optional(CheckoutSession.ProductType),
  terms_of_service_url: Schema.optional(Schema.String),
  privacy_policy_url: Schema.optional(Schema.String),
  first_source_channel: Schema.optional(Schema.String),
  billing_address: Schema.optional(Schema.Struct(Common.BillingAddress.fields)),
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String),
  discount_code: Schema.optional(Schema.String),
  allow_discount_codes: Schema.optional(Schema.Boolean),
  ...AnchorFields
})

/**
 * The body of `POST /api/v1/subscription/{id}/change` and its preview.
 *
 * @since 0.1.0
 */
export const ChangePrice = Schema.Struct({
  subscription_id: Schema.optional(Schema.String),
  merchant_id: Schema.optional(Schema.String),
  price_id: Schema.optional(Schema.String),
  effective_type: Schema.optional(Schema.String),
  proration: Schema.optional(Schema.String),
  quantity: Schema.optional(Schema.String),
  quote_id: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/subscription/{id}/cancel`.
 *
 * @since 0.1.0
 */
export const Cancel = Schema.Struct({
  cancel_type: Schema.optional(Schema.String),
  cancel_reason: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/subscription/{id}/usage`.
 *
 * @since 0.1.0
 */
export const Usage = Schema.Struct({
  usage_count: Schema.optional(Schema.Finite),
  event_id: Schema.optional(Schema.String),
  timestamp: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/usage/batch`.
 *
 * @since 0.1.0
 */
export const UsageBatch = Schema.Struct({
  records: Schema.Array(Schema.Struct({ subscription_id: Schema.optional(Schema.String), ...Usage.fields }))
})

/**
 * The body of `POST /api/v1/refund`.
 *
 * @since 0.1.0
 */
export const Refund = Schema.Struct({
  trade_id: Schema.optional(Schema.String),
  amount: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v2/webhook/endpoints` and its update.
 *
 * @since 0.1.0
 */
export const WebhookEndpoint = Schema.Struct({
  url: Schema.optional(Schema.String),
  desc: Schema.optional(Schema.String),
  all_events: Schema.optional(Schema.Boolean),
  event_types: Schema.optional(Schema.Array(Schema.String)),
  event_version: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/discounts`.
 *
 * @since 0.1.0
 */
export const CreateDiscount = Schema.Struct({
  name: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  discount_type: Schema.optional(Schema.String),
  percent_off: Schema.optional(Schema.Finite),
  amount_off: Schema.optional(Schema.String),
  duration: Schema.optional(Schema.String),
  duration_cycles: Schema.optional(Schema.Finite),
  product_ids: Schema.optional(Schema.Array(Schema.String)),
  max_redemptions: Schema.optional(Schema.Finite),
  max_redemptions_per_customer: Schema.optional(Schema.Finite),
  min_amount: Schema.optional(Schema.String),
  starts_at: Schema.optional(Schema.String),
  expires_at: Schema.optional(Schema.String),
  metadata: Schema.optional(Common.Metadata)
})

/**
 * The body of `POST /api/v1/subscription/{id}/discount`: one of `discount_id` and `discount_code`.
 *
 * @since 0.1.0
 */
export const ApplyDiscount = Schema.Struct({
  discount_id: Schema.optional(Schema.String),
  discount_code: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/subscription/{id}/discount/remove`.
 *
 * @since 0.1.0
 */
export const RemoveDiscount = Schema.Struct({ discount_id: Schema.optional(Schema.String) })

/**
 * The body of `POST /api/v1/subscription/{id}/payment_method`: the new card.
 *
 * @since 0.1.0
 */
export const PaymentMethod = Schema.Struct({
  /** A payment method the processor's form collected (Stripe.js `pm_…`), instead of card fields. */
  payment_method: Schema.optional(Schema.String),
  card_number: Schema.optional(Schema.String),
  exp_month: Schema.optional(Schema.Finite),
  exp_year: Schema.optional(Schema.Finite),
  cvc: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/customer-portal/auth`.
 *
 * @since 0.1.0
 */
export const PortalSession = Schema.Struct({
  customer_id: Schema.optional(Schema.String),
  return_url: Schema.optional(Schema.String),
  flow: Schema.optional(Schema.String),
  locale: Schema.optional(CheckoutSession.Locale)
})

/**
 * The body of `POST /api/v1/portal_settings`: the fields to change (the others keep their value);
 * `reset: true` drops the merchant's own settings for the server's default.
 *
 * @since 0.1.0
 */
export const PortalSettings = Schema.Struct({
  payment_method_update: Schema.optional(Schema.Boolean),
  cancel: Schema.optional(Schema.Boolean),
  invoice_history: Schema.optional(Schema.Boolean),
  switch_prices: Schema.optional(Schema.Array(Schema.String)),
  adjust_quantities: Schema.optional(PortalQuantityRules),
  reset: Schema.optional(Schema.Boolean)
})

/**
 * The body of `POST /api/v1/payment_settings`.
 *
 * @since 0.1.0
 */
export const PaymentSettings = Schema.Struct({
  provider: Schema.optional(Schema.String),
  secret_key: Schema.optional(Schema.String),
  publishable_key: Schema.optional(Schema.String),
  webhook_secret: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/tax_rates`: core's `TaxRates.TaxRateCommand` field for field (the
 * engine checks it as it checks a configured table's entry), so it needs no decoding of its own.
 *
 * @since 0.1.0
 */
export const CreateTaxRate = Schema.Struct({
  name: Schema.optional(Schema.String),
  percentage: Schema.optional(Schema.String),
  country: Schema.optional(Schema.String),
  region: Schema.optional(Schema.String),
  inclusive: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Common.Metadata)
})

/**
 * A new merchant (the CLI's `recur merchants create` and the facade's `merchants.create`).
 *
 * @since 0.1.0
 */
export const CreateMerchant = Schema.Struct({
  name: Schema.String,
  currency: Schema.String,
  mode: Schema.optionalKey(Schema.Literals(["sandbox", "live"])),
  frozen_time: Schema.optionalKey(Schema.Finite),
  proration_policy: Schema.optionalKey(Schema.String),
  proration_credit: Schema.optionalKey(Proration.CreditMode),
  dunning_final_state: Schema.optionalKey(Schema.Literals(["unpaid", "canceled"])),
  dunning_retry_days: Schema.optionalKey(Schema.Array(Schema.Finite)),
  invoice_prefix: Schema.optionalKey(Schema.String)
})

/**
 * The body of `POST /api/v1/invoice_settings`.
 *
 * @since 0.1.0
 */
export const InvoiceSettings = Schema.Struct({ invoice_prefix: Schema.optional(Schema.String) })

/**
 * The body of `POST /api/v1/billing_settings`: the fields given change (`dunning_retry_days: null`
 * and `dunning_on_decline: null` return to the engine's default policy; the classes of
 * `dunning_on_decline` given change, the others keep the policy in force).
 *
 * @since 0.1.0
 */
export const BillingSettings = Schema.Struct({
  proration_policy: Schema.optional(Schema.String),
  proration_credit: Schema.optional(Proration.CreditMode),
  dunning_final_state: Schema.optional(Schema.Literals(["unpaid", "canceled"])),
  dunning_retry_days: Schema.optional(Schema.NullOr(Schema.Array(Schema.Finite))),
  dunning_on_decline: Schema.optional(Schema.NullOr(DeclineRulesPatch)),
  invoice_draft_grace_seconds: Schema.optional(Schema.Int),
  usage_adjustments: Schema.optional(Schema.Literals(["automatic", "review"]))
})

/**
 * The body of `POST /api/v1/dispute_settings`.
 *
 * @since 0.1.0
 */
export const DisputeSettings = Schema.Struct({
  fraud_dispute_renewals: Schema.optional(Schema.Literals(["hold", "charge"]))
})

/**
 * The body of `POST /api/v1/product/{product_id}/entitlements`: the features the product
 * declares from now on (they replace the previous ones).
 *
 * @since 0.1.0
 */
export const ProductEntitlements = Schema.Struct({
  entitlements: Schema.Record(Schema.String, Schema.Union([Schema.Boolean, Schema.Number]))
})

/**
 * The body of `POST /api/v1/entitlement_settings`: the subscription states that grant
 * entitlements (`null`: the default, trial, active and past_due).
 *
 * @since 0.1.0
 */
export const EntitlementSettings = Schema.Struct({
  granting_statuses: Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
})

/**
 * A card as the hosted checkout page's form posts it.
 *
 * @since 0.1.0
 */
export const Card = Schema.Struct({
  number: Schema.String,
  exp_month: Schema.Finite,
  exp_year: Schema.Finite,
  cvc: Schema.String,
  name: Schema.optionalKey(Schema.String)
})

/**
 * A payment method the processor's form collected in the payer's browser (Stripe.js `pm_…`), as
 * the facade takes it instead of a card.
 *
 * @since 0.1.0
 */
export const CollectedPaymentMethod = Schema.Struct({ payment_method: Schema.String })

/**
 * A card, or a payment method the processor collected.
 *
 * @since 0.1.0
 */
export const Payment = Schema.Union([Card, CollectedPaymentMethod])

/**
 * A body that does not decode, field by field: each issue with its field's path as the API spells
 * it (`line_items[0].price_id`, as the engine's own checks name it; empty for the body itself). The REST adapter and the Promise
 * facade both name the field at fault from it.
 *
 * @since 0.1.0
 */
export const issuesOf = (
  issue: SchemaIssue.Issue
): ReadonlyArray<{ readonly field: string; readonly message: string }> =>
  SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues.map((i) => ({
    field: fieldOf(i.path ?? []),
    message: expectedOnce(i.message)
  }))

/**
 * An "Expected a | b" message with each alternative once: an optional nullable field, read from
 * JSON, names `null` twice ("Expected string | null | null").
 */
const expectedOnce = (message: string): string => {
  const m = /^Expected (.+)$/s.exec(message)
  return m ? `Expected ${[...new Set(m[1]!.split(" | "))].join(" | ")}` : message
}

/** A decode issue's path as the engine's own checks name a field: `line_items[0].price_id`. */
const fieldOf = (path: ReadonlyArray<unknown>): string =>
  path
    .map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p))
    .reduce<string>(
      (out, key) =>
        typeof key === "number" || (typeof key === "string" && /^\d+$/.test(key))
          ? `${out}[${String(key)}]`
          : out === ""
            ? String(key)
            : `${out}.${String(key)}`,
      ""
    )
