/**
 * The stored records of Recur and how each is stored (its {@link Store.Entity}): indexed
 * columns for filters, and the unique constraints that make duplicates impossible.
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Result, Schema } from "effect"
import * as CheckoutSession from "../checkout/CheckoutSession.js"
import * as Discount from "../discounts/Discount.js"
import { Feature, Metadata } from "./Common.js"
import { Address, CustomerType } from "../customers/Customer.js"
import * as Invoice from "../invoices/Invoice.js"
import { ApiKeyStatus, PriceVersionStatus, ProductStatus } from "./Lifecycle.js"
import * as Merchant from "../tenants/Merchant.js"
import * as Money from "../money/Money.js"
import * as PortalSession from "../portal/PortalSession.js"
import * as Price from "../catalog/Price.js"
import * as Refund from "../refunds/Refund.js"
import type * as Store from "./Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Tax from "../taxes/Tax.js"
import * as Trade from "../payments/Trade.js"
import * as Usage from "../usage/Usage.js"
import { webhookDelivery, webhookEndpoint, webhookEvent } from "../webhooks/WebhookEntities.js"

const ms = (dt: DateTime.Utc) => DateTime.toEpochMillis(dt)
const minor = (amount: string, currency: string): bigint =>
  Result.match(Money.parse(amount, currency, { allowNegative: true }), {
    onFailure: () => 0n,
    onSuccess: (m) => m.amount
  })

/** @since 0.1.0 */
export const merchant: Store.Entity<Merchant.Merchant, typeof Merchant.Merchant.Encoded> = {
  name: "merchant",
  table: "recur_merchants",
  schema: Merchant.Merchant,
  id: (m) => m.merchant_id,
  merchantId: (m) => m.merchant_id,
  createdAt: (m) => ms(m.created_at),
  columns: { mode: (m) => m.mode },
  unique: []
}

/**
 * A stored API key: never the key itself. `lookup_hash` is the SHA-256 of the key (for
 * authentication), `ciphertext` its AES-256-GCM encryption under the master key (webhook
 * signing needs the raw key).
 *
 * @since 0.1.0
 */
export const ApiKeyRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  lookup_hash: Schema.String,
  ciphertext: Schema.String,
  last4: Schema.String,
  mode: Schema.Literals(["sandbox", "live"]),
  status: ApiKeyStatus,
  /** Set when rotated: the key is refused from this instant on. */
  expires_at: Schema.NullOr(Schema.Number),
  replaced_by: Schema.NullOr(Schema.String),
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** @since 0.1.0 */
export const apiKey: Store.Entity<ApiKeyRecord, typeof ApiKeyRecord.Encoded> = {
  name: "api_key",
  table: "recur_api_keys",
  schema: ApiKeyRecord,
  id: (k) => k.id,
  merchantId: (k) => k.merchant_id,
  createdAt: (k) => k.created_at,
  columns: { lookup_hash: (k) => k.lookup_hash, status: (k) => k.status },
  unique: [{ name: "api_key_lookup_hash", columns: ["lookup_hash"] }]
}

/**
 * A stored customer: the structured address, the member/guest type and soft deletion.
 *
 * @since 0.1.0
 */
export const CustomerRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  email: Schema.NullOr(Schema.String),
  payer_id: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Address),
  metadata: Metadata,
  email_subscription: Schema.NullOr(Schema.Literals([1, 2])),
  type: CustomerType,
  created_at: Schema.Number,
  updated_at: Schema.Number,
  deleted_at: Schema.NullOr(Schema.Number)
})
/** @since 0.1.0 */
export type CustomerRecord = typeof CustomerRecord.Type

/** @since 0.1.0 */
export const customer: Store.Entity<CustomerRecord, typeof CustomerRecord.Encoded> = {
  name: "customer",
  table: "recur_customers",
  schema: CustomerRecord,
  id: (c) => c.id,
  merchantId: (c) => c.merchant_id,
  createdAt: (c) => c.created_at,
  columns: {
    email: (c) => c.email,
    payer_id: (c) => c.payer_id,
    type: (c) => c.type,
    deleted: (c) => c.deleted_at !== null
  },
  unique: [{ name: "customer_payer_id", columns: ["payer_id"] }]
}

/** @since 0.1.0 */
export const CategoryRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  status: Schema.Literals(["active", "disabled"]),
  chinese_name: Schema.NullOr(Schema.String),
  chinese_description: Schema.NullOr(Schema.String),
  is_default: Schema.Boolean,
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type CategoryRecord = typeof CategoryRecord.Type

/** @since 0.1.0 */
export const category: Store.Entity<CategoryRecord, typeof CategoryRecord.Encoded> = {
  name: "category",
  table: "recur_categories",
  schema: CategoryRecord,
  id: (c) => c.id,
  merchantId: (c) => c.merchant_id,
  createdAt: (c) => c.created_at,
  // `default_key` is "default" on the default category and null elsewhere: one default per merchant.
  columns: { default_key: (c) => (c.is_default ? "default" : null), status: (c) => c.status },
  unique: [{ name: "category_default", columns: ["default_key"] }]
}

/** @since 0.1.0 */
export const ProductRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  name: Schema.String,
  status: ProductStatus,
  merchant_product_id: Schema.NullOr(Schema.String),
  category_id: Schema.String,
  description: Schema.NullOr(Schema.String),
  image_url: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  quantity_unit: Schema.NullOr(Schema.String),
  features: Schema.Array(Feature),
  metadata: Metadata,
  /** Prices of the product (the `price_ids` list filter). */
  price_ids: Schema.Array(Schema.String),
  created_at: Schema.Number,
  updated_at: Schema.Number
})
/** @since 0.1.0 */
export type ProductRecord = typeof ProductRecord.Type

/** @since 0.1.0 */
export const product: Store.Entity<ProductRecord, typeof ProductRecord.Encoded> = {
  name: "product",
  table: "recur_products",
  schema: ProductRecord,
  id: (p) => p.id,
  merchantId: (p) => p.merchant_id,
  createdAt: (p) => p.created_at,
  columns: { status: (p) => p.status, category_id: (p) => p.category_id, price_ids: (p) => p.price_ids },
  unique: []
}

/**
 * A price: the stable id that versions hang off.
 *
 * @since 0.1.0
 */
export const PriceRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  product_id: Schema.String,
  name: Schema.String,
  merchant_price_id: Schema.NullOr(Schema.String),
  current_version_id: Schema.String,
  status: PriceVersionStatus,
  versions: Schema.Number,
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type PriceRecord = typeof PriceRecord.Type

/** @since 0.1.0 */
export const price: Store.Entity<PriceRecord, typeof PriceRecord.Encoded> = {
  name: "price",
  table: "recur_prices",
  schema: PriceRecord,
  id: (p) => p.id,
  merchantId: (p) => p.merchant_id,
  createdAt: (p) => p.created_at,
  columns: { product_id: (p) => p.product_id, merchant_price_id: (p) => p.merchant_price_id, status: (p) => p.status },
  unique: [{ name: "price_merchant_price_id", columns: ["merchant_price_id"] }]
}

/** @since 0.1.0 */
export const priceVersion: Store.Entity<Price.PriceVersion, typeof Price.PriceVersion.Encoded> = {
  name: "price_version",
  table: "recur_price_versions",
  schema: Price.PriceVersion,
  id: (v) => v.price_version_id,
  merchantId: (v) => v.merchant_id,
  createdAt: (v) => ms(v.created_at),
  columns: { price_id: (v) => v.id, product_id: (v) => v.product_id, biz_status: (v) => v.biz_status },
  unique: []
}

/** @since 0.1.0 */
export const checkoutSession: Store.Entity<
  CheckoutSession.CheckoutSession,
  typeof CheckoutSession.CheckoutSession.Encoded
> = {
  name: "checkout_session",
  table: "recur_checkout_sessions",
  schema: CheckoutSession.CheckoutSession,
  id: (s) => s.session_id,
  merchantId: (s) => s.merchant_id,
  createdAt: (s) => ms(s.created_at),
  columns: { status: (s) => s.status, customer_id: (s) => s.customer_id },
  unique: []
}

/**
 * A saved card as it may be shown: brand, last 4 digits, expiry.
 *
 * @since 0.1.0
 */
export const PaymentMethod = Schema.Struct({
  brand: Schema.String,
  last4: Schema.String,
  exp_month: Schema.Int,
  exp_year: Schema.Int
})
/** @since 0.1.0 */
export type PaymentMethod = typeof PaymentMethod.Type

/**
 * A discount a subscription carries: `basis_points` of the subtotal (1250 = 12.50 %) or a
 * fixed `amount` in the settlement currency, for the cycles from `first_cycle` (the first paid
 * cycle after it was redeemed) on, `cycles` of them (`null`: every cycle). Terms written before
 * the window existed apply to every cycle.
 *
 * @since 0.1.0
 */
export const DiscountTerm = Schema.Struct({
  discount_id: Schema.String,
  discount_code: Schema.String,
  basis_points: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  first_cycle: Schema.NullOr(Schema.Number).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  cycles: Schema.NullOr(Schema.Number).pipe(Schema.withDecodingDefault(Effect.succeed(null)))
})
/** @since 0.1.0 */
export type DiscountTerm = typeof DiscountTerm.Type

/**
 * One paid invoice's part of a give-back: how much, and the tax in it (as its credit note states
 * it).
 *
 * @since 0.1.0
 */
export const GiveBackShare = Schema.Struct({
  invoice_id: Schema.String,
  trade_id: Schema.NullOr(Schema.String),
  amount: Schema.String,
  tax_lines: Schema.Array(Invoice.InvoiceTaxLine)
})
/** @since 0.1.0 */
export type OwedShare = typeof GiveBackShare.Type

/**
 * A stored subscription: the record the API returns plus what the engine needs to bill it.
 *
 * @since 0.1.0
 */
export const SubscriptionRecord = Schema.Struct({
  merchant_id: Schema.String,
  subscription: Subscription.Subscription,
  /** Start of paid cycle 0 (Unix ms): the anniversary anchor. */
  anchor: Schema.NullOr(Schema.Number),
  trial_end: Schema.NullOr(Schema.Number),
  payment_token: Schema.NullOr(Schema.String),
  scheduled_price_version_id: Schema.NullOr(Schema.String),
  dunning_attempts: Schema.Number,
  accrued_usage: Schema.String,
  /** merchant_rate captured at checkout when billing in another currency (1 primary = rate target). */
  fx_rate: Schema.NullOr(Schema.String),
  /** The settlement currency: what invoices, trades and the credit balance are in. */
  currency: Schema.String,
  /** Trials already had by this customer count against `trial_policy` 2. */
  convert_to_continuous: Schema.Boolean,
  /** When the period was paused (resume restarts the period). */
  paused_at: Schema.NullOr(Schema.Number),
  /** The cycle index whose period starts at `anchor` (1 after a trial; moves on resume). */
  anchor_cycle: Schema.Number.pipe(Schema.withDecodingDefault(Effect.succeed(0))),
  /**
   * What the customer pays for a whole period of the plan in force, before tax, in the
   * settlement currency's minor units: set by the cycle's invoice and by each prorated change.
   * Proration credits this (not the cycle invoice's amount) for the unused remainder, so several
   * changes in one cycle credit what was actually paid for the plan they replace. `null` on
   * records written before it existed: the current price's full-cycle amount is used.
   */
  plan_basis: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** Discounts applied to every cycle invoice of this subscription (in order). */
  discounts: Schema.Array(DiscountTerm).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * What may be shown of the card `payment_token` charges (brand, last 4, expiry), when it was
   * saved through a payment method update; `null` otherwise.
   */
  payment_method: Schema.NullOr(PaymentMethod).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * Money a committed downgrade owes back and has not finished paying out: written in the
   * change's transaction, removed (with what no payment could take added to the credit
   * balance) once its refunds are made — by the change itself, or after a crash by the
   * `refund_owed` work item. `key` (the quote id) keys its refunds, so a rerun refunds nothing twice.
   */
  owed_refunds: Schema.Array(
    Schema.Struct({
      key: Schema.String,
      cycle_index: Schema.Number,
      owed: Schema.String,
      /**
       * What each paid invoice of the cycle gives back of it, with the tax it carries (the
       * quote's, `Invoicing.giveBack`): the refunds pay these and their credit notes state these
       * taxes. Absent on entries recorded before shares were.
       */
      shares: Schema.optional(Schema.Array(GiveBackShare))
    })
  ).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * What was credited to the balance from each cycle's payments (downgrades, and what their
   * refunds could not take), so that refunded + credited never exceeds what a cycle collected.
   */
  credited: Schema.Array(
    Schema.Struct({
      cycle_index: Schema.Number,
      amount: Schema.String,
      /** The paid invoice it was given back from (null: the cycle's, not one invoice's). */
      invoice_id: Schema.optional(Schema.NullOr(Schema.String))
    })
  ).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * What an upgrade's credit moved from the cycle's paid invoices into its own invoice (the old
   * plan's unused time paying for the new plan's): given back from the one, paid into the other,
   * so each invoice's ledger (and the tax it can still give back) stays right.
   */
  moved: Schema.Array(
    Schema.Struct({
      cycle_index: Schema.Number,
      from_invoice_id: Schema.String,
      to_invoice_id: Schema.String,
      amount: Schema.String
    })
  ).pipe(Schema.withDecodingDefault(Effect.succeed([])))
})
/** @since 0.1.0 */
export type SubscriptionRecord = typeof SubscriptionRecord.Type

/** @since 0.1.0 */
export const subscription: Store.Entity<SubscriptionRecord, typeof SubscriptionRecord.Encoded> = {
  name: "subscription",
  table: "recur_subscriptions",
  schema: SubscriptionRecord,
  id: (s) => s.subscription.id,
  merchantId: (s) => s.merchant_id,
  createdAt: (s) => ms(s.subscription.created_at),
  columns: {
    status: (s) => s.subscription.status,
    customer_id: (s) => s.subscription.customer_id,
    order_id: (s) => s.subscription.order_id,
    source_trade_id: (s) => s.subscription.source_trade_id,
    billing_cycle_unit: (s) => s.subscription.billing_cycle_unit,
    price_id: (s) => s.subscription.price_id
  },
  unique: []
}

/**
 * A stored trade: the record the API returns plus the engine's payment attempt counter (each
 * attempt is a distinct idempotency key at the gateway: `<trade_id>:<attempt>`).
 *
 * @since 0.1.0
 */
export const TradeRecord = Schema.Struct({
  trade: Trade.Trade,
  attempts: Schema.Number,
  invoice_id: Schema.NullOr(Schema.String),
  subscription_id: Schema.NullOr(Schema.String),
  /**
   * What refunds have actually returned (succeeded), as an amount; `total_refunded_amount` also
   * holds refunds still in flight (reserved so that concurrent refunds never exceed the
   * payment). Whether a trade is fully refunded is decided on this. Absent on records written
   * before it existed: the reserved total stands in.
   */
  refunds_settled: Schema.optional(Schema.String),
  /**
   * Since when (ms) the processor has been unavailable to this trade's charge (a run of
   * `ChargeOutcome.Unavailable` answers, the trade waiting in `requires_payment_method`): the
   * retry's backoff grows with it and the operator is told once per run. Absent otherwise.
   */
  unavailable_since: Schema.optional(Schema.Number),
  /**
   * The processor's reference of each attempt the gateway named (Stripe's `pi_…`), handed back to
   * it so that it reads the charges by id. Absent (none) on records written before it existed.
   */
  charges: Schema.optional(Schema.Array(Schema.Struct({ attempt: Schema.Number, reference: Schema.String })))
})
/** @since 0.1.0 */
export type TradeRecord = typeof TradeRecord.Type

/** @since 0.1.0 */
export const trade: Store.Entity<TradeRecord, typeof TradeRecord.Encoded> = {
  name: "trade",
  table: "recur_trades",
  schema: TradeRecord,
  id: (t) => t.trade.trade_id,
  merchantId: (t) => t.trade.merchant_id,
  createdAt: (t) => ms(t.trade.created_at),
  columns: {
    trade_status: (t) => t.trade.trade_status,
    order_id: (t) => t.trade.order_id,
    customer_id: (t) => t.trade.customer_id,
    amount_minor: (t) => minor(t.trade.amount, t.trade.currency),
    currency: (t) => t.trade.currency
  },
  unique: []
}

const CYCLE_TYPES: ReadonlyArray<string> = ["initial", "trial", "renewal"]

/** @since 0.1.0 */
export const invoice: Store.Entity<Invoice.Invoice, typeof Invoice.Invoice.Encoded> = {
  name: "invoice",
  table: "recur_invoices",
  schema: Invoice.Invoice,
  id: (i) => i.invoice_id,
  merchantId: (i) => i.merchant_id,
  createdAt: (i) => ms(i.created_at),
  columns: {
    trade_id: (i) => i.trade_id,
    order_id: (i) => i.order_id,
    subscription_id: (i) => i.subscription_id,
    customer_id: (i) => i.customer_id,
    biz_status: (i) => i.biz_status,
    invoice_type: (i) => i.invoice_type,
    cycle_index: (i) => i.cycle_index,
    amount_minor: (i) => minor(i.amount, i.currency),
    currency: (i) => i.currency,
    // One cycle invoice per (subscription, cycle, type); refunds and upgrades may repeat.
    cycle_key: (i) =>
      i.subscription_id !== null && CYCLE_TYPES.includes(i.invoice_type)
        ? `${i.subscription_id}:${i.cycle_index}:${i.invoice_type}`
        : null
  },
  unique: [{ name: "invoice_cycle", columns: ["cycle_key"] }]
}

/** @since 0.1.0 */
export const RefundRecord = Schema.Struct({
  merchant_id: Schema.String,
  refund: Refund.Refund,
  /** The Request-Id (or caller's key) that created it: a retry with the same key finds it. */
  request_key: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * The taxes its credit note states, fixed when the refund was reserved (a subscription cycle's
   * payment: from its invoice's own ledger, or the downgrade quote's share); null: computed from
   * the original invoice as it settles.
   */
  tax_lines: Schema.NullOr(Schema.Array(Invoice.InvoiceTaxLine)).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The processor's id of the refund once it named one (Stripe's `re_…`): it is read by it later. */
  reference: Schema.optional(Schema.String)
})
/** @since 0.1.0 */
export type RefundRecord = typeof RefundRecord.Type

/** @since 0.1.0 */
export const refund: Store.Entity<RefundRecord, typeof RefundRecord.Encoded> = {
  name: "refund",
  table: "recur_refunds",
  schema: RefundRecord,
  id: (r) => r.refund.refund_id,
  merchantId: (r) => r.merchant_id,
  createdAt: (r) => ms(r.refund.created_at),
  columns: {
    trade_id: (r) => r.refund.trade_id,
    refund_status: (r) => r.refund.refund_status,
    amount_minor: (r) => minor(r.refund.refund_amount, r.refund.currency),
    currency: (r) => r.refund.currency,
    request_key: (r) => r.request_key
  },
  unique: []
}

/** @since 0.1.0 */
export const UsageRecordRow = Schema.Struct({
  merchant_id: Schema.String,
  usage: Usage.UsageRecord,
  trial: Schema.Boolean
})
/** @since 0.1.0 */
export type UsageRecordRow = typeof UsageRecordRow.Type

/** @since 0.1.0 */
export const usageRecord: Store.Entity<UsageRecordRow, typeof UsageRecordRow.Encoded> = {
  name: "usage_record",
  table: "recur_usage_records",
  schema: UsageRecordRow,
  id: (u) => u.usage.id,
  merchantId: (u) => u.merchant_id,
  createdAt: (u) => ms(u.usage.created_at),
  columns: {
    subscription_id: (u) => u.usage.subscription_id,
    event_id: (u) => u.usage.event_id,
    cycle_index: (u) => u.usage.cycle_index
  },
  unique: [{ name: "usage_event", columns: ["subscription_id", "event_id"] }]
}

export {
  /** @since 0.1.0 */
  DeliveryRecord,
  /** @since 0.1.0 */
  EventRecord,
  /** @since 0.1.0 */
  webhookDelivery,
  /** @since 0.1.0 */
  WebhookEndpointRecord,
  /** @since 0.1.0 */
  webhookEndpoint,
  /** @since 0.1.0 */
  webhookEvent
} from "../webhooks/WebhookEntities.js"

/**
 * Every entity, for adapters that set up storage and for the contract suites.
 *
 * @since 0.1.0
 */
export const all: ReadonlyArray<Store.Entity<any, any>> = [
  merchant,
  apiKey,
  customer,
  category,
  product,
  price,
  priceVersion,
  checkoutSession,
  subscription,
  trade,
  invoice,
  refund,
  usageRecord,
  webhookEndpoint,
  webhookEvent,
  webhookDelivery
]

/**
 * A discount, stored as the API shows it; `code` is unique per merchant (a discount without a
 * code never conflicts).
 *
 * @since 0.1.0
 */
export const discount: Store.Entity<Discount.Discount, typeof Discount.Discount.Encoded> = {
  name: "discount",
  table: "recur_discounts",
  schema: Discount.Discount,
  id: (d) => d.discount_id,
  merchantId: (d) => d.merchant_id,
  createdAt: (d) => ms(d.created_at),
  columns: { status: (d) => d.status, code: (d) => d.code },
  unique: [{ name: "discount_code", columns: ["code"] }]
}

/**
 * A discount's redemption (who, on which subscription, when): written in the transaction that
 * counts it, never updated or removed; limits count them by `discount_id` and `customer_id`.
 *
 * @since 0.1.0
 */
export const discountRedemption: Store.Entity<Discount.Redemption, typeof Discount.Redemption.Encoded> = {
  name: "discount_redemption",
  table: "recur_discount_redemptions",
  schema: Discount.Redemption,
  id: (r) => r.redemption_id,
  merchantId: (r) => r.merchant_id,
  createdAt: (r) => ms(r.redeemed_at),
  columns: {
    discount_id: (r) => r.discount_id,
    customer_id: (r) => r.customer_id,
    subscription_id: (r) => r.subscription_id
  },
  unique: []
}

/**
 * A tax rate, stored as the API shows it. `jurisdiction` (`DE`, `US-CA`) is set while the rate is
 * active and unique per merchant: one active rate per country and region.
 *
 * @since 0.1.0
 */
export const taxRate: Store.Entity<Tax.TaxRate, typeof Tax.TaxRate.Encoded> = {
  name: "tax_rate",
  table: "recur_tax_rates",
  schema: Tax.TaxRate,
  id: (t) => t.tax_rate_id,
  merchantId: (t) => t.merchant_id,
  createdAt: (t) => ms(t.created_at),
  columns: {
    status: (t) => t.status,
    country: (t) => t.country,
    jurisdiction: (t) => (t.status === "active" ? Tax.jurisdiction(t) : null)
  },
  unique: [{ name: "tax_rate_jurisdiction", columns: ["jurisdiction"] }]
}

/**
 * A customer portal session (the link a merchant hands its customer).
 *
 * @since 0.1.0
 */
export const portalSession: Store.Entity<PortalSession.PortalSession, typeof PortalSession.PortalSession.Encoded> = {
  name: "portal_session",
  table: "recur_portal_sessions",
  schema: PortalSession.PortalSession,
  id: (s) => s.portal_session_id,
  merchantId: (s) => s.merchant_id,
  createdAt: (s) => ms(s.created_at),
  columns: { customer_id: (s) => s.customer_id },
  unique: []
}

/**
 * A processor webhook event the engine has acted on (`<provider>:<event id>`): a redelivery of it
 * is answered without acting again.
 *
 * @since 0.1.0
 */
export const ProcessorEventRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  provider: Schema.String,
  event_id: Schema.String,
  type: Schema.String,
  received_at: Schema.Number
})

/**
 * @since 0.1.0
 */
export const processorEvent: Store.Entity<typeof ProcessorEventRecord.Type, typeof ProcessorEventRecord.Encoded> = {
  name: "processor_event",
  table: "recur_processor_events",
  schema: ProcessorEventRecord,
  id: (e) => e.id,
  merchantId: (e) => e.merchant_id,
  createdAt: (e) => e.received_at,
  columns: {},
  unique: []
}
