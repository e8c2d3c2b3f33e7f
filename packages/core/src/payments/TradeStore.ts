/**
 * A trade's record in storage: a new trade built and submitted (its charge on its way), a paid
 * one, one whose charge the processor answered, and what the engine knows of its charges at the
 * gateway — the writes every service that charges makes (checkout, renewals, price changes,
 * dunning) and that `Payments.applyOutcome` applies an answer with.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import type * as CheckoutSession from "../checkout/CheckoutSession.js"
import { Discounts, type Metadata } from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Ports from "../kernel/Ports.js"
import { dt, emit, type StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { fmtMinor } from "../money/Money.js"
import type * as Subscription from "../subscriptions/Subscription.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Trade from "./Trade.js"

/** A trade's record once the processor answered its charge: no longer waiting on an unavailable processor. */
export const settledRecord = (tr: Entities.TradeRecord): Entities.TradeRecord => {
  const { unavailable_since: _, ...rest } = tr
  return rest
}

/**
 * A trade its charge paid: moved `succeeded` (or `succeeded_late`, after it had failed) at `at`
 * with the processor's transaction, the token it charged and the card it showed. The one update
 * `Payments.applyOutcome` and `RenewalBatches.renewMany` share.
 *
 * @since 0.1.0
 */
export const tradeSucceeded = (
  trade: Trade.Trade,
  event: "succeeded" | "succeeded_late",
  outcome: Extract<Ports.ChargeOutcome, { readonly _tag: "Succeeded" }>,
  at: number
): Trade.Trade =>
  Lifecycle.must(
    Trade.move(trade, event, {
      paid_at: dt(at),
      txn_time: dt(at),
      last_trans_id: outcome.transaction_id,
      payment_token: Option.getOrNull(outcome.token),
      payment_method: `${outcome.brand} •••• ${outcome.last4}`,
      next_action: null,
      last_payment_error: null
    })
  )

/** What the engine knows of a trade's charges at the gateway (its attempt and their references). */
export const referencesOf = (tr: Entities.TradeRecord): Ports.ChargeReferences => ({
  attempt: tr.attempts,
  references: tr.charges ?? []
})

/** A new trade (status `requires_payment_method`; the caller moves it). */
export const newTrade = (input: {
  readonly merchant: Merchant.Merchant
  readonly amount: Money.Money
  readonly customer_id: string
  readonly order_id: string | null
  readonly payment_mode: "onetime_payment" | "subscription"
  readonly order_type: "initial" | "renewal" | "upgrade" | "one_time"
  readonly session: Option.Option<CheckoutSession.CheckoutSession>
  readonly line: Trade.LineItem | null
  /** The lines after `line` (a checkout of several line items). */
  readonly moreLines?: ReadonlyArray<Trade.LineItem> | undefined
  readonly tax: Money.Money
  readonly metadata: Metadata
  readonly at: number
}) =>
  Effect.map(
    Ids.make(Ids.prefixes.trade),
    (trade_id) =>
      new Trade.Trade(
        {
          trade_id,
          access_no: null,
          merchant_id: input.merchant.merchant_id,
          amount: Money.format(input.amount),
          currency: input.amount.currency,
          customer_id: input.customer_id,
          callback_url: null,
          order_id: input.order_id,
          last_trans_id: null,
          paid_at: null,
          payment_mode: input.payment_mode,
          payment_token: null,
          payment_method: null,
          payment_channel: "card",
          return_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.return_url }),
          trade_status: Lifecycle.trade.initial,
          txn_time: null,
          created_at: dt(input.at),
          refund_status: Lifecycle.tradeRefund.initial,
          total_refunded_amount: fmtMinor(0n, input.amount.currency),
          session_id: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_id }),
          session_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_url }),
          order_type: input.order_type,
          closed_at: null,
          closed_reason: null,
          first_source_channel: Option.match(input.session, {
            onNone: () => null,
            onSome: (s) => s.first_source_channel
          }),
          last_source_channel: null,
          tax_amount: Money.format(input.tax),
          metadata: input.metadata,
          last_payment_error: null,
          next_action: null,
          refer_info: null,
          line_items: input.line ? [input.line, ...(input.moreLines ?? [])] : [],
          discounts: new Discounts({ current_period: [] }, { disableChecks: true }),
          billing_address: Option.match(input.session, { onNone: () => null, onSome: (s) => s.billing_address }),
          payment_info: null,
          dispute_status: Lifecycle.tradeDispute.initial,
          dispute: null
        },
        { disableChecks: true }
      )
  )

/**
 * Records a new trade as submitted (its charge is on its way), linked to its invoice and
 * subscription, and emits `v2.trades.created` with the trade as it was created; answers the
 * submitted trade.
 */
export const submitTrade = (
  storage: StorageService,
  input: {
    readonly trade: Trade.Trade
    readonly invoice_id: string | null
    readonly subscription_id: string | null
    readonly at: number
    /** What a checkout's payer typed for the customer, written as the payment succeeds. */
    readonly payer?: Entities.TradeRecord["payer"]
  }
) =>
  Effect.gen(function* () {
    const submitted = Lifecycle.must(Trade.move(input.trade, "submit_payment"))
    yield* Effect.orDie(
      storage.repository(Entities.trade).insert({
        trade: submitted,
        attempts: 1,
        invoice_id: input.invoice_id,
        subscription_id: input.subscription_id,
        ...(input.payer !== undefined ? { payer: input.payer } : {})
      })
    )
    yield* emit(storage, {
      merchant_id: input.trade.merchant_id,
      type: "v2.trades.created",
      business_id: input.trade.trade_id,
      schema: Trade.Trade,
      data: input.trade,
      at: input.at
    })
    return submitted
  })

/** A renewal's trade: the cycle's taxed total, off-session, no session and no line. */
export const renewalTrade = (
  merchant: Merchant.Merchant,
  sub: Subscription.Subscription,
  taxed: { readonly total: Money.Money; readonly tax: Money.Money },
  at: number
) =>
  newTrade({
    merchant,
    amount: taxed.total,
    customer_id: sub.customer_id,
    order_id: sub.order_id,
    payment_mode: "subscription",
    order_type: "renewal",
    session: Option.none(),
    line: null,
    tax: taxed.tax,
    metadata: {},
    at
  })
