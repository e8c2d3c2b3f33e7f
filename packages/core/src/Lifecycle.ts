/**
 * The state machines of Recur as data: each transition names its trigger, the states it
 * leaves and enters, and the webhook events it emits. {@link transition} is the only way a
 * state moves; `docs/states.md` is generated from these tables.
 *
 * @since 0.1.0
 */
import { Array as Arr, Result, Schema } from "effect"

/**
 * Every webhook event type Recur emits (the original platform's names).
 *
 * @since 0.1.0
 */
export const EventType = Schema.Literals([
  "v2.subscription.first",
  "v2.subscription.trial_period_expiring",
  "v2.subscription.canceled",
  "v2.subscription.price_changed",
  "v2.subscription.paused",
  "v2.subscription.resumed",
  "v2.subscription.past_due",
  "v2.subscription.unpaid",
  "v2.subscription.cancellation_requested",
  "v2.subscription.cancellation_revoked",
  "v2.invoice.paid",
  "v2.invoice.payment_failed",
  "v2.invoice.refunded",
  "v2.trades.created",
  "v2.trades.succeeded",
  "v2.trades.payment_failed",
  "v2.refunds.succeeded",
  "v2.refunds.failed"
])

/**
 * @since 0.1.0
 */
export type EventType = typeof EventType.Type

/**
 * One row of a machine.
 *
 * @since 0.1.0
 */
export interface Transition<S extends string, T extends string> {
  readonly from: ReadonlyArray<S>
  readonly trigger: T
  /** The state entered; `undefined` keeps the current state (a self-transition). */
  readonly to?: S
  readonly events: ReadonlyArray<EventType>
  readonly description: string
}

/**
 * A state machine: its states, the state an object is born in, and its transitions.
 *
 * @since 0.1.0
 */
export interface Machine<S extends string, T extends string> {
  readonly name: string
  readonly field: string
  readonly states: ReadonlyArray<S>
  readonly initial: S
  /** Events emitted when an object is created in its initial state. */
  readonly createEvents: ReadonlyArray<EventType>
  readonly terminal: ReadonlyArray<S>
  readonly transitions: ReadonlyArray<Transition<S, T>>
}

/**
 * A trigger that is not allowed from the object's current state.
 *
 * @since 0.1.0
 */
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  machine: Schema.String,
  from: Schema.String,
  trigger: Schema.String
}) {
  override get message() {
    return `${this.machine}: "${this.trigger}" is not allowed from "${this.from}"`
  }
}

/**
 * The state after `trigger` and the events it emits, or `InvalidTransition`.
 *
 * @example
 * Lifecycle.transition(Lifecycle.subscription, "active", "pause")
 * // Result.succeed({ to: "paused", events: ["v2.subscription.paused"] })
 * @since 0.1.0
 */
export const transition = <S extends string, T extends string>(
  machine: Machine<S, T>,
  from: S,
  trigger: T
): Result.Result<{ readonly to: S; readonly events: ReadonlyArray<EventType> }, InvalidTransition> => {
  const row = machine.transitions.find((t) => t.trigger === trigger && t.from.includes(from))
  return row
    ? Result.succeed({ to: row.to ?? from, events: row.events })
    : Result.fail(new InvalidTransition({ machine: machine.name, from, trigger }))
}

/**
 * The triggers allowed from a state.
 *
 * @since 0.1.0
 */
export const triggersFrom = <S extends string, T extends string>(machine: Machine<S, T>, from: S): ReadonlyArray<T> =>
  Arr.dedupe(machine.transitions.filter((t) => t.from.includes(from)).map((t) => t.trigger))

const live = ["trial", "active", "past_due"] as const

/**
 * Subscription `status`.
 *
 * @since 0.1.0
 */
export const SubscriptionStatus = Schema.Literals(["init", "trial", "active", "canceled", "incomplete", "paused", "past_due", "unpaid"])
/** @since 0.1.0 */
export type SubscriptionStatus = typeof SubscriptionStatus.Type

/** @since 0.1.0 */
export type SubscriptionTrigger =
  | "first_payment_succeeded_with_trial"
  | "first_payment_succeeded"
  | "first_payment_failed"
  | "incomplete_expired"
  | "trial_expiring_notice"
  | "renewal_succeeded"
  | "renewal_failed"
  | "retry_succeeded"
  | "retries_exhausted"
  | "retries_exhausted_cancel"
  | "pause"
  | "resume"
  | "cancel"
  | "request_cancel_at_period_end"
  | "revoke_cancel"
  | "change_price"
  | "term_completed"

/**
 * The subscription machine (the contract's table).
 *
 * @since 0.1.0
 */
export const subscription: Machine<SubscriptionStatus, SubscriptionTrigger> = {
  name: "Subscription",
  field: "status",
  states: SubscriptionStatus.literals,
  initial: "init",
  createEvents: [],
  terminal: ["canceled"],
  transitions: [
    { from: ["init", "incomplete"], trigger: "first_payment_succeeded_with_trial", to: "trial", events: ["v2.subscription.first"], description: "first payment succeeds and the price has a trial" },
    { from: ["init", "incomplete"], trigger: "first_payment_succeeded", to: "active", events: ["v2.subscription.first"], description: "first payment succeeds, no trial" },
    { from: ["init"], trigger: "first_payment_failed", to: "incomplete", events: [], description: "first payment fails or 3-D Secure is not completed" },
    { from: ["incomplete"], trigger: "incomplete_expired", to: "canceled", events: ["v2.subscription.canceled"], description: "23 hours pass without payment (cancel_reason incomplete_expired)" },
    { from: ["trial"], trigger: "trial_expiring_notice", events: ["v2.subscription.trial_period_expiring"], description: "3 days before the trial ends" },
    { from: ["trial", "active"], trigger: "renewal_succeeded", to: "active", events: [], description: "a renewal (or the first paid cycle after a trial) is paid" },
    { from: ["trial", "active"], trigger: "renewal_failed", to: "past_due", events: ["v2.subscription.past_due"], description: "a renewal payment fails; the invoice is retrying" },
    { from: ["past_due", "unpaid"], trigger: "retry_succeeded", to: "active", events: [], description: "a dunning retry (or a later payment) succeeds" },
    { from: ["past_due"], trigger: "retries_exhausted", to: "unpaid", events: ["v2.subscription.unpaid"], description: "retries exhausted, merchant setting unpaid (default)" },
    { from: ["past_due"], trigger: "retries_exhausted_cancel", to: "canceled", events: ["v2.subscription.canceled"], description: "retries exhausted, merchant setting canceled" },
    { from: live, trigger: "pause", to: "paused", events: ["v2.subscription.paused"], description: "paused by the merchant" },
    { from: ["paused"], trigger: "resume", to: "active", events: ["v2.subscription.resumed"], description: "resumed; the period restarts at resume" },
    { from: ["init", "trial", "active", "incomplete", "paused", "past_due", "unpaid"], trigger: "cancel", to: "canceled", events: ["v2.subscription.canceled"], description: "cancel immediately, or an end-of-period cancel reaching cancel_at" },
    { from: ["trial", "active", "past_due", "paused"], trigger: "request_cancel_at_period_end", events: ["v2.subscription.cancellation_requested"], description: "cancel scheduled for the period end" },
    { from: ["trial", "active", "past_due", "paused"], trigger: "revoke_cancel", events: ["v2.subscription.cancellation_revoked"], description: "a scheduled cancel is revoked" },
    { from: live, trigger: "change_price", events: ["v2.subscription.price_changed"], description: "the price changes (immediately or when a scheduled change applies)" },
    { from: ["trial", "active", "past_due"], trigger: "term_completed", to: "canceled", events: ["v2.subscription.canceled"], description: "a fixed term reaches total_cycles" }
  ]
}

/**
 * Invoice `biz_status`.
 *
 * @since 0.1.0
 */
export const InvoiceStatus = Schema.Literals(["open", "pending", "retrying", "success", "failed", "refunded", "partially_refunded"])
/** @since 0.1.0 */
export type InvoiceStatus = typeof InvoiceStatus.Type
/** @since 0.1.0 */
export type InvoiceTrigger = "charge" | "paid" | "charge_failed_will_retry" | "charge_failed_final" | "retries_exhausted" | "partial_refund" | "full_refund" | "settle_without_charge"

/**
 * The invoice machine.
 *
 * @since 0.1.0
 */
export const invoice: Machine<InvoiceStatus, InvoiceTrigger> = {
  name: "Invoice",
  field: "biz_status",
  states: InvoiceStatus.literals,
  initial: "open",
  createEvents: [],
  terminal: ["failed", "refunded"],
  transitions: [
    { from: ["open", "retrying"], trigger: "charge", to: "pending", events: [], description: "a charge is in flight" },
    { from: ["open"], trigger: "settle_without_charge", to: "success", events: ["v2.invoice.paid"], description: "nothing to charge (free trial, fully covered by credit)" },
    { from: ["pending"], trigger: "paid", to: "success", events: ["v2.invoice.paid"], description: "the charge succeeds" },
    { from: ["pending"], trigger: "charge_failed_will_retry", to: "retrying", events: [], description: "the charge fails and a retry is scheduled" },
    { from: ["pending"], trigger: "charge_failed_final", to: "failed", events: ["v2.invoice.payment_failed"], description: "the charge fails and no retry remains" },
    { from: ["retrying"], trigger: "retries_exhausted", to: "failed", events: ["v2.invoice.payment_failed"], description: "the last retry failed" },
    { from: ["success", "partially_refunded"], trigger: "partial_refund", to: "partially_refunded", events: ["v2.invoice.refunded"], description: "part of the paid amount is refunded" },
    { from: ["success", "partially_refunded"], trigger: "full_refund", to: "refunded", events: ["v2.invoice.refunded"], description: "the remainder is refunded" }
  ]
}

/**
 * Trade `trade_status`.
 *
 * @since 0.1.0
 */
export const TradeStatus = Schema.Literals(["requires_payment_method", "processing", "succeeded", "payment_failed", "closed"])
/** @since 0.1.0 */
export type TradeStatus = typeof TradeStatus.Type
/** @since 0.1.0 */
export type TradeTrigger = "submit_payment" | "succeeded" | "failed" | "close"

/**
 * The trade machine. `next_action` is set while `processing` waits for 3-D Secure.
 *
 * @since 0.1.0
 */
export const trade: Machine<TradeStatus, TradeTrigger> = {
  name: "Trade",
  field: "trade_status",
  states: TradeStatus.literals,
  initial: "requires_payment_method",
  createEvents: ["v2.trades.created"],
  terminal: ["succeeded", "closed"],
  transitions: [
    { from: ["requires_payment_method", "payment_failed"], trigger: "submit_payment", to: "processing", events: [], description: "a payment method is charged (also a customer's retry)" },
    { from: ["processing"], trigger: "succeeded", to: "succeeded", events: ["v2.trades.succeeded"], description: "the gateway confirms the charge" },
    { from: ["processing"], trigger: "failed", to: "payment_failed", events: ["v2.trades.payment_failed"], description: "the gateway declines (last_payment_error set)" },
    { from: ["requires_payment_method", "payment_failed"], trigger: "close", to: "closed", events: [], description: "unpaid after 24 hours, or a renewal's retries are exhausted" }
  ]
}

/**
 * Trade `refund_status`.
 *
 * @since 0.1.0
 */
export const TradeRefundStatus = Schema.Literals(["no_refund", "partially_refunded", "refunded"])
/** @since 0.1.0 */
export type TradeRefundStatus = typeof TradeRefundStatus.Type

/**
 * The trade's refund machine: total refunded never exceeds the amount.
 *
 * @since 0.1.0
 */
export const tradeRefund: Machine<TradeRefundStatus, "partial_refund" | "full_refund"> = {
  name: "TradeRefund",
  field: "refund_status",
  states: TradeRefundStatus.literals,
  initial: "no_refund",
  createEvents: [],
  terminal: ["refunded"],
  transitions: [
    { from: ["no_refund", "partially_refunded"], trigger: "partial_refund", to: "partially_refunded", events: [], description: "a refund leaves part of the amount paid" },
    { from: ["no_refund", "partially_refunded"], trigger: "full_refund", to: "refunded", events: [], description: "refunds reach the amount paid" }
  ]
}

/**
 * Refund `refund_status`.
 *
 * @since 0.1.0
 */
export const RefundStatus = Schema.Literals(["pending", "succeeded", "failed"])
/** @since 0.1.0 */
export type RefundStatus = typeof RefundStatus.Type

/**
 * The refund machine.
 *
 * @since 0.1.0
 */
export const refund: Machine<RefundStatus, "succeeded" | "failed"> = {
  name: "Refund",
  field: "refund_status",
  states: RefundStatus.literals,
  initial: "pending",
  createEvents: [],
  terminal: ["succeeded", "failed"],
  transitions: [
    { from: ["pending"], trigger: "succeeded", to: "succeeded", events: ["v2.refunds.succeeded"], description: "the gateway refunds the payment method" },
    { from: ["pending"], trigger: "failed", to: "failed", events: ["v2.refunds.failed"], description: "the gateway refuses the refund" }
  ]
}

/**
 * Price version status.
 *
 * @since 0.1.0
 */
export const PriceVersionStatus = Schema.Literals(["draft", "active", "frozen"])
/** @since 0.1.0 */
export type PriceVersionStatus = typeof PriceVersionStatus.Type

/**
 * The price version machine: only `active` sells; `frozen` keeps renewing.
 *
 * @since 0.1.0
 */
export const priceVersion: Machine<PriceVersionStatus, "activate" | "freeze"> = {
  name: "PriceVersion",
  field: "biz_status",
  states: PriceVersionStatus.literals,
  initial: "draft",
  createEvents: [],
  terminal: [],
  transitions: [
    { from: ["draft", "frozen"], trigger: "activate", to: "active", events: [], description: "sellable; immutable from now on" },
    { from: ["active"], trigger: "freeze", to: "frozen", events: [], description: "no new sales; existing subscriptions renew" }
  ]
}

/**
 * Product status.
 *
 * @since 0.1.0
 */
export const ProductStatus = Schema.Literals(["draft", "active", "disabled"])
/** @since 0.1.0 */
export type ProductStatus = typeof ProductStatus.Type

/**
 * The product machine.
 *
 * @since 0.1.0
 */
export const product: Machine<ProductStatus, "activate" | "disable"> = {
  name: "Product",
  field: "product_status",
  states: ProductStatus.literals,
  initial: "draft",
  createEvents: [],
  terminal: [],
  transitions: [
    { from: ["draft", "disabled"], trigger: "activate", to: "active", events: [], description: "the product can be sold" },
    { from: ["active"], trigger: "disable", to: "disabled", events: [], description: "the product is withdrawn" }
  ]
}

/**
 * Per-endpoint delivery `event_status`.
 *
 * @since 0.1.0
 */
export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "retrying", "failed"])
/** @since 0.1.0 */
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * The webhook delivery machine.
 *
 * @since 0.1.0
 */
export const webhookDelivery: Machine<DeliveryStatus, "delivered" | "attempt_failed" | "retries_exhausted" | "resend"> = {
  name: "WebhookDelivery",
  field: "event_status",
  states: DeliveryStatus.literals,
  initial: "pending",
  createEvents: [],
  terminal: ["succeeded", "failed"],
  transitions: [
    { from: ["pending", "retrying"], trigger: "delivered", to: "succeeded", events: [], description: "the endpoint answered 2xx within 10 s" },
    { from: ["pending", "retrying"], trigger: "attempt_failed", to: "retrying", events: [], description: "non-2xx, timeout or network error; a retry is scheduled" },
    { from: ["retrying"], trigger: "retries_exhausted", to: "failed", events: [], description: "16 retries within 48 h all failed" },
    { from: ["succeeded", "failed"], trigger: "resend", to: "pending", events: [], description: "manual redelivery" }
  ]
}

/**
 * Webhook endpoint `status`.
 *
 * @since 0.1.0
 */
export const EndpointStatus = Schema.Literals(["enabled", "disabled"])
/** @since 0.1.0 */
export type EndpointStatus = typeof EndpointStatus.Type

/**
 * The webhook endpoint machine.
 *
 * @since 0.1.0
 */
export const webhookEndpoint: Machine<EndpointStatus, "disable" | "enable" | "gone"> = {
  name: "WebhookEndpoint",
  field: "status",
  states: EndpointStatus.literals,
  initial: "enabled",
  createEvents: [],
  terminal: [],
  transitions: [
    { from: ["enabled"], trigger: "disable", to: "disabled", events: [], description: "disabled by the merchant" },
    { from: ["enabled"], trigger: "gone", to: "disabled", events: [], description: "the endpoint answered 410 Gone" },
    { from: ["disabled"], trigger: "enable", to: "enabled", events: [], description: "enabled by the merchant" }
  ]
}

/**
 * Every machine, in documentation order.
 *
 * @since 0.1.0
 */
export const machines: ReadonlyArray<Machine<string, string>> = [
  subscription,
  invoice,
  trade,
  tradeRefund,
  refund,
  priceVersion,
  product,
  webhookDelivery,
  webhookEndpoint
]

/**
 * Renders the machines as the Markdown of `docs/states.md`.
 *
 * @since 0.1.0
 */
export const toMarkdown = (all: ReadonlyArray<Machine<string, string>> = machines): string => {
  const out: Array<string> = [
    "# States and transitions",
    "",
    "Generated from `packages/core/src/Lifecycle.ts` by `pnpm docs:states`; a test fails when this file",
    "and the code disagree. Do not edit by hand.",
    ""
  ]
  for (const m of all) {
    out.push(`## ${m.name} \`${m.field}\``, "")
    out.push(`States: ${m.states.map((s) => `\`${s}\``).join(", ")}. Initial: \`${m.initial}\`${m.createEvents.length ? ` (emits ${m.createEvents.map((e) => `\`${e}\``).join(", ")})` : ""}.${m.terminal.length ? ` Terminal: ${m.terminal.map((s) => `\`${s}\``).join(", ")}.` : ""}`, "")
    out.push("| from | trigger | to | events | when |", "|---|---|---|---|---|")
    for (const t of m.transitions) {
      out.push(
        `| ${t.from.map((s) => `\`${s}\``).join(", ")} | \`${t.trigger}\` | ${t.to ? `\`${t.to}\`` : "(unchanged)"} | ${t.events.map((e) => `\`${e}\``).join(", ") || "—"} | ${t.description} |`
      )
    }
    out.push("")
  }
  return out.join("\n")
}
