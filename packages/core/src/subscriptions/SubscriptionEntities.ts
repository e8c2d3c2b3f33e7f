/**
 * The subscription's record: its payment method, discount terms, shares owed back, and the
 * engine's own fields (re-exported by `Entities`).
 */
import { Effect, Schema } from "effect"
import * as Price from "../catalog/Price.js"
import * as Invoice from "../invoices/Invoice.js"
import { CollectionSetting } from "../invoices/Collection.js"
import * as Schedule from "../schedules/Schedule.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "./Subscription.js"
import { ms } from "../kernel/internal/entities.js"

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
  cycles: Schema.NullOr(Schema.Number).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The discount's duration when it was redeemed; absent on terms written before it was kept. */
  duration: Schema.optionalKey(Schema.Literals(["once", "repeating", "forever"]))
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
 * A subscription item after the base one, as the record keeps it: its price (at `price_version_id`),
 * its quantity, when it was added (Unix ms), and `version`, the price version itself (versions
 * never change once written), so that a cycle's invoice and the proration basis are computed
 * from the record alone. The base item (index 0) is the subscription's flat fields; see
 * `SubscriptionItems`.
 *
 * @since 0.1.0
 */
export const ItemTerm = Schema.Struct({
  id: Schema.String,
  price_id: Schema.String,
  price_version_id: Schema.String,
  quantity: Schema.String,
  created_at: Schema.Number,
  version: Price.PriceVersion,
  /**
   * A quantity waiting for the next cycle (the base item's `subscription.pending_change`, per
   * item): the renewal that opens cycle `cycle_index` bills it and makes it the item's quantity.
   * Absent or `null`: none.
   */
  pending_change: Schema.optionalKey(Schema.NullOr(Subscription.PendingChange)),
  /**
   * The price version the item bills from its next cycle (a catalog migration's move, the base
   * item's `scheduled_price_version_id`, per item): the next renewal bills it and makes it the
   * item's version. Absent or `null`: none.
   */
  scheduled_version: Schema.optionalKey(Schema.NullOr(Price.PriceVersion))
})
/** @since 0.1.0 */
export type ItemTerm = typeof ItemTerm.Type

/**
 * One pending proration line of a `create_prorations` change (see `pending_prorations`).
 *
 * @since 0.1.0
 */
export const PendingProration = Schema.Struct({
  /** The cycle the change happened in (the line is billed by the next cycle's invoice). */
  cycle_index: Schema.Number,
  kind: Schema.Literals(["proration_credit", "proration_charge"]),
  description: Schema.String,
  /** Signed, in the settlement currency: a credit is negative. */
  amount: Schema.String,
  /**
   * A credit's part taken from what the cycle's invoices collected (recorded in `credited`); the
   * rest of it cancels pending charges of the same cycle not billed yet. Absent on a charge.
   */
  from_paid: Schema.optional(Schema.String),
  /**
   * The tax given back with `from_paid` from the cycle's payments (each paid invoice's own tax in
   * proportion, keeping whether it was inclusive): the part of the credit the next invoice cannot
   * absorb goes to the credit balance with its share of this tax. Absent on a charge and on
   * credits recorded before it was kept (their rest goes to the balance untaxed).
   */
  from_paid_tax: Schema.optional(Schema.Array(Invoice.InvoiceTaxLine)),
  /** The quote of the change that recorded it. */
  quote_id: Schema.String,
  /** When the change took effect (Unix ms). */
  at: Schema.Number
})
/** @since 0.1.0 */
export type PendingProration = typeof PendingProration.Type

/**
 * The usage of a metered item an item change removed (or moved to another price) mid-cycle,
 * rated at the item's version in force until then: one `usage` line the next renewal bills (in
 * the settlement currency, before discounts and tax), for the part of the period up to the change.
 *
 * @since 0.1.0
 */
export const KeptUsage = Schema.Struct({
  /** The cycle the usage was recorded in. */
  cycle_index: Schema.Number,
  description: Schema.String,
  /** The units recorded. */
  units: Schema.String,
  amount: Schema.String,
  /** The part of the period the usage is for (Unix ms). */
  start: Schema.Number,
  end: Schema.Number
})

/** @since 0.1.0 */
export type KeptUsage = typeof KeptUsage.Type

/**
 * The item set an item change with `proration: next_cycle` makes the next cycle bill.
 *
 * @since 0.1.0
 */
export const PendingItems = Schema.Struct({
  /** The cycle it starts with (the one after the change's). */
  cycle_index: Schema.Number,
  base_price_version_id: Schema.String,
  base_quantity: Schema.String,
  extra_items: Schema.Array(ItemTerm),
  /** The quote of the change that recorded it. */
  quote_id: Schema.String,
  /** When the change was committed (Unix ms). */
  at: Schema.Number
})
/** @since 0.1.0 */
export type PendingItems = typeof PendingItems.Type

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
  /**
   * The items after the base item (indexes 1 to 19), in order; the base item is the flat fields
   * of `subscription`. Records written before items existed have none: they are one item.
   */
  extra_items: Schema.Array(ItemTerm).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /** Discounts applied to every cycle invoice of this subscription (in order). */
  discounts: Schema.Array(DiscountTerm).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * What may be shown of the card `payment_token` charges (brand, last 4, expiry), when it was
   * saved through a payment method update; `null` otherwise.
   */
  payment_method: Schema.NullOr(PaymentMethod).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** How this subscription's invoices are collected (null: as its customer's are). */
  collection: Schema.optional(Schema.NullOr(CollectionSetting)),
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
       * quote's, `GiveBack.giveBack`): the refunds pay these and their credit notes state these
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
  ).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * The subscription's schedule (`Schedule.SubscriptionSchedule`): while it governs (not started
   * or active) each renewal that opens a phase's first cycle bills it at that phase; after it
   * ended it stays here as it ended. Absent (or null) when it never had one.
   */
  schedule: Schema.optionalKey(Schema.NullOr(Schedule.SubscriptionSchedule)),
  /**
   * Proration lines a `create_prorations` change recorded and no invoice has billed yet: the
   * credit for the unused time (negative) and the charge for the new plan, in the settlement
   * currency before tax. The next renewal invoice bills each once, as one line, and removes them
   * (docs/proration.md, "create_prorations").
   */
  pending_prorations: Schema.Array(PendingProration).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * An item change committed with `proration: next_cycle`: the whole item set the renewal that
   * opens cycle `cycle_index` bills (the base item's price version and quantity, the other
   * items), applied by that renewal and removed then; revoked by revoke-price-change. Absent (or
   * null) when none waits.
   */
  pending_items: Schema.optionalKey(Schema.NullOr(PendingItems)),
  /**
   * Usage lines of metered items an item change removed or repriced now, which the next renewal
   * bills once and removes (docs/decisions.md, "Issue 33 — a metered item's usage is never lost").
   */
  kept_usage: Schema.optionalKey(Schema.Array(KeptUsage))
})
/** @since 0.1.0 */
export type SubscriptionRecord = typeof SubscriptionRecord.Type

/** @since 0.1.0 */
export const subscription: Store.Entity<SubscriptionRecord, typeof SubscriptionRecord.Encoded> = Store.entity({
  name: "subscription",
  table: "recur_subscriptions",
  schema: SubscriptionRecord,
  id: (s) => s.subscription.id,
  createdAt: (s) => ms(s.subscription.created_at),
  columns: {
    status: (s) => s.subscription.status,
    customer_id: (s) => s.subscription.customer_id,
    order_id: (s) => s.subscription.order_id,
    source_trade_id: (s) => s.subscription.source_trade_id,
    billing_cycle_unit: (s) => s.subscription.billing_cycle_unit,
    price_id: (s) => s.subscription.price_id,
    // every item's price, the base item's first: what a catalog migration looks subscriptions up by
    item_price_ids: (s) => [s.subscription.price_id, ...s.extra_items.map((x) => x.price_id)]
  }
})
