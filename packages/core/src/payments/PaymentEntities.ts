/**
 * Trades and the processor events acted on, as stored (re-exported by `Entities`).
 */
import { Schema } from "effect"
import * as Store from "../kernel/Store.js"
import * as Trade from "./Trade.js"
import { minor, ms } from "../kernel/internal/entities.js"

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
  charges: Schema.optional(Schema.Array(Schema.Struct({ attempt: Schema.Number, reference: Schema.String }))),
  /**
   * What the payer typed on a hosted checkout's page for a customer that has none (an email, a
   * name): written on the customer as the payment succeeds, so a declined card writes nothing.
   * Absent otherwise.
   */
  payer: Schema.optional(Schema.Struct({ email: Schema.optional(Schema.String), name: Schema.optional(Schema.String) }))
})
/** @since 0.1.0 */
export type TradeRecord = typeof TradeRecord.Type

/** @since 0.1.0 */
export const trade: Store.Entity<TradeRecord, typeof TradeRecord.Encoded> = Store.entity({
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
  }
})

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
export const processorEvent: Store.Entity<typeof ProcessorEventRecord.Type, typeof ProcessorEventRecord.Encoded> =
  Store.entity({
    name: "processor_event",
    table: "recur_processor_events",
    schema: ProcessorEventRecord,
    id: "id",
    createdAt: "received_at",
    columns: {}
  })

/**
 * A processor's own customer for one of ours (Stripe's `cus_…`), on one processor account
 * (Stripe's `acct_…`): kept when the processor made it, read back by id — never found again by a
 * search, which the processor makes consistent only after a while. Keyed by provider, account and
 * our customer (`<provider>:<account>:<customer id>`, {@link processorCustomerId}), so a merchant
 * whose keys move to another account gets a new one there rather than a stranger's.
 *
 * @since 0.1.0
 */
export const ProcessorCustomerRecord = Schema.Struct({
  id: Schema.String,
  merchant_id: Schema.String,
  provider: Schema.String,
  /** The processor account the customer lives in (Stripe's `acct_…`). */
  account_id: Schema.String,
  /** Our customer. */
  customer_id: Schema.String,
  /** The processor's customer (Stripe's `cus_…`). */
  reference: Schema.String,
  created_at: Schema.Number
})
/** @since 0.1.0 */
export type ProcessorCustomerRecord = typeof ProcessorCustomerRecord.Type

/**
 * The id of a {@link ProcessorCustomerRecord}: one per provider, account and customer.
 *
 * @since 0.1.0
 */
export const processorCustomerId = (provider: string, accountId: string, customerId: string): string =>
  `${provider}:${accountId}:${customerId}`

/**
 * @since 0.1.0
 */
export const processorCustomer: Store.Entity<ProcessorCustomerRecord, typeof ProcessorCustomerRecord.Encoded> =
  Store.entity({
    name: "processor_customer",
    table: "recur_processor_customers",
    schema: ProcessorCustomerRecord,
    id: "id",
    createdAt: "created_at",
    columns: { customer_id: "customer_id", account_id: "account_id", reference: "reference" }
  })
