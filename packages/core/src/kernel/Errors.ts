/**
 * The typed failures of Recur's services. They carry ids, amounts and states, never a response
 * status or a request path: the API contract (`@recur/contract`'s `ErrorReplies`) gives each its
 * answer.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The object does not exist for this merchant (another merchant's object included), whether it
 * was named in the path or referenced from a body or query (`param` then names that field, as
 * the request spells it).
 *
 * @since 0.1.0
 */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String,
  param: Schema.optional(Schema.String),
  /** The entry of the list `param` that names it and its field (the adapter names it in its own words). */
  entry: Schema.optional(Schema.Struct({ index: Schema.Number, field: Schema.String }))
}) {
  override get message() {
    return `No such ${this.resource}: ${this.id}`
  }
}

/**
 * A field is missing, malformed, out of range or not in its enum.
 *
 * @since 0.1.0
 */
export class InvalidParameter extends Schema.TaggedError<InvalidParameter>()("InvalidParameter", {
  param: Schema.String,
  reason: Schema.String,
  issues: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))),
  /**
   * The entry of the list `param` at fault and its field (`""`: the entry itself); the adapter
   * names it in its own words.
   */
  entry: Schema.optional(Schema.Struct({ index: Schema.Number, field: Schema.String }))
}) {
  override get message() {
    return this.entry === undefined
      ? `${this.param}: ${this.reason}`
      : `${this.param} entry ${this.entry.index}${this.entry.field === "" ? "" : ` (${this.entry.field})`}: ${this.reason}`
  }
}

/**
 * A well-formed but contradictory request (mutually exclusive fields, both cursors, a
 * foreign cursor).
 *
 * @since 0.1.0
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  reason: Schema.String,
  param: Schema.optional(Schema.String)
}) {
  override get message() {
    return this.reason
  }
}

/**
 * The operation is not allowed in the object's current state.
 *
 * @since 0.1.0
 */
export class StateConflict extends Schema.TaggedError<StateConflict>()("StateConflict", {
  resource: Schema.String,
  id: Schema.String,
  state: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.resource} ${this.id} is ${this.state}: ${this.reason}`
  }
}

/**
 * A per-merchant unique value is taken.
 *
 * @since 0.1.0
 */
export class DuplicateResource extends Schema.TaggedError<DuplicateResource>()("DuplicateResource", {
  resource: Schema.String,
  param: Schema.String
}) {
  override get message() {
    return `A ${this.resource} with this ${this.param} already exists`
  }
}

/**
 * Authentication failed (missing, malformed, unknown, expired or revoked key). Never says
 * which, so a caller learns nothing about keys.
 *
 * @since 0.1.0
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {}) {
  override get message() {
    return "ApiKey authentication is required"
  }
}

// ------------------------------------------------------------------ domain errors
// Raised by the engine's rules, in the domain's words: they carry the ids and states that
// explain them and name no request field; each adapter says once how it answers them.

/**
 * No price with this id is sold by this merchant (missing, another merchant's, or archived).
 *
 * @since 0.1.0
 */
export class PriceNotFound extends Schema.TaggedError<PriceNotFound>()("PriceNotFound", {
  priceId: Schema.String
}) {
  override get message() {
    return `No such price: ${this.priceId}`
  }
}

/**
 * A checkout session that cannot take a payment now: already paid, expired, or another payment
 * of it is in progress (`state: "payment_in_progress"`).
 *
 * @since 0.1.0
 */
export class SessionNotPayable extends Schema.TaggedError<SessionNotPayable>()("SessionNotPayable", {
  sessionId: Schema.String,
  state: Schema.String
}) {
  override get message() {
    return this.state === "payment_in_progress"
      ? `checkout session ${this.sessionId}: another payment of this session is in progress or done; fetch the session for its outcome`
      : `checkout session ${this.sessionId} is ${this.state}: it cannot be paid`
  }
}

/**
 * The card a payer typed is not a card number (fails the Luhn check): nothing was sent.
 *
 * @since 0.1.0
 */
export class CardInvalid extends Schema.TaggedError<CardInvalid>()("CardInvalid", {
  sessionId: Schema.String
}) {
  override get message() {
    return "the card number is invalid"
  }
}

/**
 * The subscription is not live (trial, active or past due), so `action` cannot run.
 *
 * @since 0.1.0
 */
export class SubscriptionNotLive extends Schema.TaggedError<SubscriptionNotLive>()("SubscriptionNotLive", {
  subscriptionId: Schema.String,
  state: Schema.String,
  action: Schema.String
}) {
  override get message() {
    return `subscription ${this.subscriptionId} is ${this.state}: cannot ${this.action}`
  }
}

/**
 * The subscription's state does not allow `action` (cancelling a canceled subscription,
 * revoking a cancellation none is scheduled for, renewing one whose invoice is open …).
 *
 * @since 0.1.0
 */
export class SubscriptionActionRefused extends Schema.TaggedError<SubscriptionActionRefused>()(
  "SubscriptionActionRefused",
  {
    subscriptionId: Schema.String,
    state: Schema.String,
    action: Schema.String,
    reason: Schema.String
  }
) {
  override get message() {
    return `subscription ${this.subscriptionId} is ${this.state}: cannot ${this.action} (${this.reason})`
  }
}

/**
 * A subscription cannot move to this price: it is not sold, not recurring, in another currency
 * or billing dimension, an interval switch it cannot make (at the period's end, a fixed term,
 * usage), an invoiced change over pending proration lines (`proration`), would bill more per
 * cycle than an invoice may carry, or is already one of the subscription's other items.
 *
 * @since 0.1.0
 */
export class PriceChangeRefused extends Schema.TaggedError<PriceChangeRefused>()("PriceChangeRefused", {
  subscriptionId: Schema.String,
  priceId: Schema.String,
  reason: Schema.Literals([
    "not_found",
    "not_recurring",
    "currency_or_dimension",
    "interval",
    "above_bound",
    "already_an_item",
    "proration"
  ]),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * An item change the subscription cannot take: the entry at `index` of the change (absent: the
 * change as a whole) is refused for its `part` — the item named by `id` is not one of the
 * subscription's, the base item cannot be deleted, a price is not found for this customer
 * (`missing`), the items after the change could not form one subscription, the proration mode
 * does not apply now.
 *
 * @since 0.1.0
 */
export class ItemChangeRefused extends Schema.TaggedError<ItemChangeRefused>()("ItemChangeRefused", {
  subscriptionId: Schema.String,
  part: Schema.Literals(["id", "price_id", "quantity", "deleted", "items", "proration"]),
  index: Schema.optional(Schema.Int),
  detail: Schema.String,
  missing: Schema.optional(Schema.Boolean)
}) {
  override get message() {
    return this.detail
  }
}

/**
 * A quantity the subscription cannot take: its price is not billed by quantity, the value is not
 * a positive whole number, or a cycle would bill more than an invoice may carry.
 *
 * @since 0.1.0
 */
export class QuantityRefused extends Schema.TaggedError<QuantityRefused>()("QuantityRefused", {
  subscriptionId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * The quote is older than its time to live (or from the future): preview again.
 *
 * @since 0.1.0
 */
export class QuoteExpired extends Schema.TaggedError<QuoteExpired>()("QuoteExpired", {
  quoteId: Schema.String
}) {
  override get message() {
    return `quote ${this.quoteId} has expired; preview again`
  }
}

/**
 * The quote does not hold for this commit: it was made for another change (another body), or
 * the subscription changed since it was made. Either way its numbers are not the ones to settle.
 *
 * @since 0.1.0
 */
export class QuoteStale extends Schema.TaggedError<QuoteStale>()("QuoteStale", {
  quoteId: Schema.String,
  subscriptionId: Schema.String
}) {
  override get message() {
    return `quote ${this.quoteId} does not match this change of subscription ${this.subscriptionId}, or the subscription changed since it was made; preview again`
  }
}

/**
 * No trade with this id for this merchant.
 *
 * @since 0.1.0
 */
export class TradeNotFound extends Schema.TaggedError<TradeNotFound>()("TradeNotFound", {
  tradeId: Schema.String
}) {
  override get message() {
    return `No such trade: ${this.tradeId}`
  }
}

/**
 * Only a succeeded trade can be refunded; this one is in `state`.
 *
 * @since 0.1.0
 */
export class TradeNotRefundable extends Schema.TaggedError<TradeNotRefundable>()("TradeNotRefundable", {
  tradeId: Schema.String,
  state: Schema.String
}) {
  override get message() {
    return `trade ${this.tradeId} is ${this.state}: only a succeeded trade can be refunded`
  }
}

/**
 * A refund amount the trade cannot take: not above zero, finer than its currency's minor unit,
 * or more than is left to refund (`refundable`).
 *
 * @since 0.1.0
 */
export class RefundRefused extends Schema.TaggedError<RefundRefused>()("RefundRefused", {
  tradeId: Schema.String,
  reason: Schema.Literals(["not_positive", "precision", "above_refundable"]),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * A usage event the engine cannot take: its count is not a whole number from 1 to 10^12, its
 * event id is empty or over 255 characters, its instant is not one, the subscription is not
 * billed by usage, or the cycle would rate above what one invoice may carry. `index` is the
 * event's position when it came in a batch (the whole batch is refused).
 *
 * @since 0.1.0
 */
export class UsageRefused extends Schema.TaggedError<UsageRefused>()("UsageRefused", {
  subscriptionId: Schema.String,
  index: Schema.optional(Schema.Number),
  reason: Schema.Literals(["count", "event_id", "instant", "not_metered", "above_bound"]),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * Meter events refused (issue 35): one event's `field` broke its rule (`property` names the
 * property at fault), `index` its position when it came in a batch (the whole batch is
 * refused); `events` is a batch of the wrong size.
 *
 * @since 0.1.0
 */
export class MeterEventRefused extends Schema.TaggedError<MeterEventRefused>()("MeterEventRefused", {
  index: Schema.optional(Schema.Number),
  field: Schema.Literals([
    "events",
    "transaction_id",
    "code",
    "customer_id",
    "subscription_id",
    "timestamp",
    "properties"
  ]),
  property: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * A subscription schedule refused at one of its parts: the schedule's `start`, or phase
 * `phase`'s `items` (their count, or the set as a whole), `price`, `quantity` (of its item
 * `item`, 0 when absent), `cycles`, `end_date` or `discount`; `missing` when the price or
 * discount it names does not exist.
 *
 * @since 0.1.0
 */
export class ScheduleRefused extends Schema.TaggedError<ScheduleRefused>()("ScheduleRefused", {
  subscriptionId: Schema.String,
  phase: Schema.optional(Schema.Number),
  part: Schema.Literals(["start", "items", "price", "quantity", "cycles", "end_date", "discount"]),
  item: Schema.optional(Schema.Number),
  missing: Schema.optional(Schema.Boolean),
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * A usage batch must hold 1 to `max` events; this one held `size`.
 *
 * @since 0.1.0
 */
export class UsageBatchRefused extends Schema.TaggedError<UsageBatchRefused>()("UsageBatchRefused", {
  size: Schema.Number,
  max: Schema.Number
}) {
  override get message() {
    return `a usage batch must hold 1 to ${this.max.toLocaleString("en-US")} records; this one holds ${this.size}`
  }
}

/**
 * A checkout session the engine cannot open: the customer or the price does not exist (or the
 * price is not sold), a recurring price sold as a one-time payment, a cycle above what one
 * invoice may carry, no exchange rate, or a rate out of bounds or rounding the price to 0.
 * `rateGiven` says whether the rate was the merchant's own (`merchant_rate`) or the FX port's.
 *
 * @since 0.1.0
 */
export class SessionRefused extends Schema.TaggedError<SessionRefused>()("SessionRefused", {
  reason: Schema.Literals([
    "customer",
    "price",
    "payment_mode",
    "quantity",
    "amount",
    "no_rate",
    "rate",
    "return_url",
    "cancel_url",
    "discount",
    "billing_cycle_anchor"
  ]),
  rateGiven: Schema.Boolean,
  detail: Schema.String,
  /** The object the refused part references (the customer, the price, the discount code) does not exist. */
  missing: Schema.optional(Schema.Boolean),
  /** Which of the session's line items the refused price or quantity is (0 when absent: the first). */
  item: Schema.optional(Schema.Int)
}) {
  override get message() {
    return this.detail
  }
}

/**
 * Another writer changed the object between this call's read and its write; the call changed
 * nothing and may be retried.
 *
 * @since 0.1.0
 */
export class ConcurrentUpdate extends Schema.TaggedError<ConcurrentUpdate>()("ConcurrentUpdate", {
  resource: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `${this.resource}${this.id === "" ? "" : ` ${this.id}`} was modified concurrently; retry`
  }
}

/**
 * The merchant cannot take payments: it is live and has no working processor account (the
 * sandbox never takes a live merchant's payments). Nothing was created; the merchant sets its
 * processor's keys (its payment settings) first.
 *
 * @since 0.1.0
 */
export class PaymentsUnavailable extends Schema.TaggedError<PaymentsUnavailable>()("PaymentsUnavailable", {
  merchantId: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

/**
 * The payment processor did not answer a question that must be answered first (whether a
 * merchant's keys work): nothing was changed; try again.
 *
 * @since 0.1.0
 */
export class ProcessorUnreachable extends Schema.TaggedError<ProcessorUnreachable>()("ProcessorUnreachable", {
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * A part of a command refused by a rule that needs the merchant's data — a discount's product
 * that is not in its catalog, an amount that is not exact in its currency, an end before the
 * discount starts; the discount a subscription is to take; a price the portal may not offer for
 * switching, a portal flow the merchant turned off. `index` is the entry's position in the command's list (its products, its switch
 * prices), `id` the id it names. Not one of {@link RecurError}: the front doors that decoded the
 * command (the contract's `Requests.refusal`) answer it as the parameter of their own request it
 * is about.
 *
 * @since 0.1.0
 */
export class CommandRefused extends Schema.TaggedError<CommandRefused>()("CommandRefused", {
  part: Schema.Literals([
    "discountProduct",
    "discountAmountOff",
    "discountMinAmount",
    "discountExpiry",
    "discountId",
    "discountCode",
    "switchPrices",
    "switchPrice",
    "portalFlow"
  ]),
  index: Schema.optional(Schema.Number),
  id: Schema.optional(Schema.String),
  detail: Schema.String,
  /** The object the part references (a product, a discount, a price) does not exist for this merchant. */
  missing: Schema.optional(Schema.Boolean)
}) {
  override get message() {
    return `${this.part}${this.index !== undefined ? ` #${this.index}` : ""}${this.id !== undefined ? ` (${this.id})` : ""}: ${this.detail}`
  }
}

/**
 * Every failure a Recur service can answer: the request-level families and the domain errors.
 *
 * @since 0.1.0
 */
export type RecurError =
  | NotFound
  | InvalidParameter
  | InvalidRequest
  | StateConflict
  | DuplicateResource
  | Unauthorized
  | PriceNotFound
  | SessionRefused
  | SessionNotPayable
  | CardInvalid
  | SubscriptionNotLive
  | SubscriptionActionRefused
  | PriceChangeRefused
  | ItemChangeRefused
  | QuantityRefused
  | QuoteExpired
  | QuoteStale
  | TradeNotFound
  | TradeNotRefundable
  | RefundRefused
  | UsageRefused
  | ScheduleRefused
  | UsageBatchRefused
  | MeterEventRefused
  | ConcurrentUpdate
  | PaymentsUnavailable
  | ProcessorUnreachable

// ------------------------------------------------------------------ building errors

/** An `InvalidParameter` for `param`, with the rule it broke. */
export const invalid = (param: string, reason: string) => new InvalidParameter({ param, reason })
