/**
 * The state machines of Recur as data: each transition names its trigger, the states it
 * leaves and enters, and the webhook events it emits. {@link transition} is the only way a
 * state moves; `docs/states.md` is generated from these tables.
 *
 * @since 0.1.0
 */
import { Array as Arr, Result, Schema } from "effect"
import type { EventType, Machine } from "./Machine.js"
import { subscription } from "../subscriptions/SubscriptionMachine.js"
import { invoice } from "../invoices/InvoiceMachine.js"
import { trade, tradeDispute, tradeRefund } from "../payments/TradeMachines.js"
import { refund } from "../refunds/RefundMachine.js"
import { checkoutSession } from "../checkout/SessionMachine.js"
import { priceVersion, product } from "../catalog/CatalogMachines.js"
import { webhookDelivery, webhookEndpoint } from "../webhooks/WebhookMachines.js"
import { apiKey } from "../tenants/ApiKeyMachine.js"
import { discount } from "../discounts/DiscountMachine.js"
import { taxRate } from "../taxes/TaxRateMachine.js"
import { schedule } from "../schedules/ScheduleMachine.js"
export {
  /** @since 0.1.0 */
  billableMetric,
  /** @since 0.1.0 */
  BillableMetricStatus
} from "../usage/BillableMetricMachine.js"
import { priceMigration } from "../subscriptions/MigrationMachine.js"
import { notification } from "../notifications/NotificationMachine.js"
import { invoiceItem } from "../invoices/InvoiceItemMachine.js"
import { billableMetric } from "../usage/BillableMetricMachine.js"
import { creditGrant } from "../credits/CreditGrantMachine.js"
export {
  /** @since 0.1.0 */
  creditGrant,
  /** @since 0.1.0 */
  CreditGrantStatus
} from "../credits/CreditGrantMachine.js"
import { usageAdjustment } from "../usage/UsageAdjustmentMachine.js"
export {
  /** @since 0.1.0 */
  usageAdjustment,
  /** @since 0.1.0 */
  UsageAdjustmentStatus
} from "../usage/UsageAdjustmentMachine.js"

export {
  /** @since 0.1.0 */
  EventType,
  /** @since 0.1.0 */
  type Machine,
  /** @since 0.1.0 */
  type Transition
} from "./Machine.js"

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
 * An object after a transition, and the events the transition emits.
 *
 * @since 0.1.0
 */
export interface Moved<A> {
  readonly value: A
  readonly events: ReadonlyArray<EventType>
}

/**
 * Moves an object: the machine decides the new state (or refuses), `build` makes the object in
 * it. The entity modules' transition functions (`Trade.move`, `Invoice.move`, …) are built on
 * this and are the only code that writes a status (a test checks it).
 *
 * @since 0.1.0
 */
export const moveBy = <S extends string, T extends string, A>(
  machine: Machine<S, T>,
  from: S,
  trigger: T,
  build: (to: S) => A
): Result.Result<Moved<A>, InvalidTransition> =>
  Result.map(transition(machine, from, trigger), (t) => ({ value: build(t.to), events: t.events }))

/**
 * The object of a transition the engine's own logic guarantees; a refused one is a defect.
 *
 * @since 0.1.0
 */
export const must = <A>(moved: Result.Result<Moved<A>, InvalidTransition>): A => Result.getOrThrow(moved).value

/**
 * The state an object is created in when its creator asks for `target`: the machine's initial
 * state, or one transition away from it (a price created `active` is born `draft` and
 * activated). Anything else is refused.
 *
 * @since 0.1.0
 */
export const bornAs = <S extends string, T extends string>(
  machine: Machine<S, T>,
  target: S
): Result.Result<S, InvalidTransition> => {
  if (target === machine.initial) return Result.succeed(target)
  const row = machine.transitions.find((t) => t.from.includes(machine.initial) && t.to === target)
  return row
    ? Result.succeed(target)
    : Result.fail(
        new InvalidTransition({ machine: machine.name, from: machine.initial, trigger: `create as ${target}` })
      )
}

/**
 * The triggers allowed from a state.
 *
 * @since 0.1.0
 */
export const triggersFrom = <S extends string, T extends string>(machine: Machine<S, T>, from: S): ReadonlyArray<T> =>
  Arr.dedupe(machine.transitions.filter((t) => t.from.includes(from)).map((t) => t.trigger))

export {
  /** @since 0.1.0 */
  subscription,
  /** @since 0.1.0 */
  SubscriptionStatus,
  /** @since 0.1.0 */
  type SubscriptionTrigger
} from "../subscriptions/SubscriptionMachine.js"
export {
  /** @since 0.1.0 */
  invoice,
  /** @since 0.1.0 */
  InvoiceStatus,
  /** @since 0.1.0 */
  InvoiceStatusView,
  /** @since 0.1.0 */
  statusOf as invoiceStatusOf,
  /** @since 0.1.0 */
  documentStatusOf as invoiceDocumentStatusOf,
  /** @since 0.1.0 */
  type InvoiceTrigger
} from "../invoices/InvoiceMachine.js"
export {
  /** @since 0.1.0 */
  trade,
  /** @since 0.1.0 */
  tradeDispute,
  /** @since 0.1.0 */
  TradeDisputeStatus,
  /** @since 0.1.0 */
  type TradeDisputeTrigger,
  /** @since 0.1.0 */
  tradeRefund,
  /** @since 0.1.0 */
  TradeRefundStatus,
  /** @since 0.1.0 */
  TradeStatus,
  /** @since 0.1.0 */
  type TradeTrigger
} from "../payments/TradeMachines.js"
export {
  /** @since 0.1.0 */
  refund,
  /** @since 0.1.0 */
  RefundStatus
} from "../refunds/RefundMachine.js"
export {
  /** @since 0.1.0 */
  checkoutSession,
  /** @since 0.1.0 */
  SessionStatus
} from "../checkout/SessionMachine.js"
export {
  /** @since 0.1.0 */
  priceVersion,
  /** @since 0.1.0 */
  PriceVersionStatus,
  /** @since 0.1.0 */
  product,
  /** @since 0.1.0 */
  ProductStatus
} from "../catalog/CatalogMachines.js"
export {
  /** @since 0.1.0 */
  DeliveryStatus,
  /** @since 0.1.0 */
  EndpointStatus,
  /** @since 0.1.0 */
  webhookDelivery,
  /** @since 0.1.0 */
  webhookEndpoint
} from "../webhooks/WebhookMachines.js"
export {
  /** @since 0.1.0 */
  apiKey,
  /** @since 0.1.0 */
  ApiKeyStatus
} from "../tenants/ApiKeyMachine.js"
export {
  /** @since 0.1.0 */
  discount,
  /** @since 0.1.0 */
  DiscountStatus
} from "../discounts/DiscountMachine.js"
export {
  /** @since 0.1.0 */
  priceMigration,
  /** @since 0.1.0 */
  PriceMigrationStatus
} from "../subscriptions/MigrationMachine.js"
export {
  /** @since 0.1.0 */
  taxRate,
  /** @since 0.1.0 */
  TaxRateStatus
} from "../taxes/TaxRateMachine.js"
export {
  /** @since 0.1.0 */
  notification,
  /** @since 0.1.0 */
  NotificationStatus
} from "../notifications/NotificationMachine.js"
export {
  /** @since 0.1.0 */
  invoiceItem,
  /** @since 0.1.0 */
  InvoiceItemStatus,
  /** @since 0.1.0 */
  type InvoiceItemTrigger
} from "../invoices/InvoiceItemMachine.js"
export {
  /** @since 0.1.0 */
  schedule,
  /** @since 0.1.0 */
  ScheduleStatus,
  /** @since 0.1.0 */
  type ScheduleTrigger
} from "../schedules/ScheduleMachine.js"

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
  tradeDispute,
  refund,
  priceVersion,
  product,
  checkoutSession,
  webhookDelivery,
  webhookEndpoint,
  apiKey,
  discount,
  taxRate,
  schedule,
  priceMigration,
  notification,
  invoiceItem,
  billableMetric,
  creditGrant,
  usageAdjustment
]

/**
 * Event types no transition writes: derived from what transitions did. `v2.entitlements.updated`
 * is written when a subscription's move changed its customer's entitlements; `v2.invoice.sent`
 * when an invoice is issued open to be paid by its customer (collection method `send_invoice`)
 * and `v2.invoice.overdue` when such an invoice is still unpaid at its due date — neither moves
 * the invoice's status.
 *
 * @since 0.1.0
 */
export const derivedEvents: ReadonlyArray<EventType> = [
  "v2.entitlements.updated",
  "v2.invoice.sent",
  "v2.invoice.overdue",
  // a customer balance ledger entry, and a credit note to the balance: records, not state moves
  "v2.customer.balance_updated",
  "v2.credit_note.created",
  // a declined automatic top-up: a setting's attempt, not a state move
  "v2.customer.auto_top_up_failed",
  // a usage alert's crossing and the end of the cycle it fired in: records on the alert (issue 35)
  "v2.usage_alert.triggered",
  "v2.usage_alert.resolved"
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
    "Generated from `packages/core/src/kernel/Lifecycle.ts` by `pnpm docs:states`; a test fails when this file",
    "and the code disagree. Do not edit by hand.",
    "",
    "These tables are the code: each entity's transition function (`Trade.move`, `Trade.moveRefund`,",
    "`Invoice.move`, `Subscription.move`, `CheckoutSession.move`, `Refund.move`, `Webhook.moveEndpoint`,",
    "`Webhook.moveDelivery`, `Merchant.moveKey`, all on `Lifecycle.moveBy`) asks its machine for the next",
    "state and is the only code that writes a status; objects are created in the machine's initial state",
    "(or one transition from it, `Lifecycle.bornAs`). `packages/core/test/StatusWrites.test.ts` fails on",
    "a status assigned anywhere else.",
    ""
  ]
  for (const m of all) {
    out.push(`## ${m.name} \`${m.field}\``, "")
    out.push(
      `States: ${m.states.map((s) => `\`${s}\``).join(", ")}. Initial: \`${m.initial}\`${m.createEvents.length ? ` (emits ${m.createEvents.map((e) => `\`${e}\``).join(", ")})` : ""}.${m.terminal.length ? ` Terminal: ${m.terminal.map((s) => `\`${s}\``).join(", ")}.` : ""}`,
      ""
    )
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
