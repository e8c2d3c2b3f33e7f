/**
 * Dunning retries: a past-due subscription's open invoice charged again on the schedule of
 * its merchant's {@link DunningPolicy.Policy}, and an unpaid subscription's way back (its last
 * failed invoice reopened and charged with a new card, see `PaymentMethods` and
 * `InvoicePayments`).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "../invoices/Invoice.js"
import { nowOf } from "../kernel/ServiceSupport.js"
import { newTrade, submitTrade } from "./TradeStore.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { must } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Charges from "./Charges.js"
import * as Declines from "./Declines.js"
import * as DunningPolicy from "./DunningPolicy.js"
import type * as Payments from "./Payments.js"
import * as Store from "../kernel/Store.js"
import * as Trade from "./Trade.js"

/**
 * What a dunning preview is asked for: the class of decline every charge meets, the instant the
 * renewal fails (default: the merchant's clock now), and a proposed policy — the fields given
 * replace the merchant's policy in force (`dunning_retry_days`, `dunning_final_state`, and per
 * class `dunning_on_decline`).
 *
 * @since 0.1.0
 */
export interface PreviewInput {
  readonly decline_class: DunningPolicy.DeclineClass
  readonly failed_at?: number | undefined
  readonly dunning_retry_days?: ReadonlyArray<number> | undefined
  readonly dunning_final_state?: "unpaid" | "canceled" | undefined
  readonly dunning_on_decline?: DunningPolicy.DeclineRulesPatch | undefined
}

/**
 * Runs scheduled dunning retries.
 *
 * @since 0.1.0
 */
export class Dunning extends Context.Service<Dunning>()("@recur/core/Dunning", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const charges = yield* Charges.Charges
    const declines = yield* Declines.Declines
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const { saveSub, schedule } = writes(storage)

    /** One retry of a past-due subscription's open invoice, with its saved card. */
    const retry = Effect.fn("Dunning.retry")(function* (merchantId: string, subscriptionId: string) {
      const merchant = yield* merchants.get(merchantId)
      const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
        must(o, "subscription", subscriptionId)
      )
      if (sv.value.subscription.status !== "past_due" || sv.value.payment_token === null)
        return Option.none<Payments.PaymentResult>()
      const open = (yield* Effect.orDie(
        invoices.list(merchantId, {
          limit: 100,
          filters: [
            { column: "subscription_id", op: "in", values: [subscriptionId] },
            { column: "biz_status", op: "in", values: ["retrying", "pending"] }
          ]
        })
      )).list
      const invoice = open.find((i) => i.trade_id !== null)
      if (!invoice) return Option.none<Payments.PaymentResult>()
      const tradeId = invoice.trade_id!
      const last = Option.getOrUndefined(yield* trades.get(merchantId, tradeId))
      if (
        last?.value.trade.trade_status === "payment_failed" &&
        last.value.trade.last_payment_error?.code === "authentication_required"
      ) {
        // the issuer wants the customer (3-D Secure): an off-session retry would only be declined
        // again; the invoice waits for them, the schedule goes on
        yield* declines.dunningWithoutCharge(merchantId, subscriptionId, tradeId)
        return Option.none<Payments.PaymentResult>()
      }
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const s = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
          yield* saveSub({ ...s.value, dunning_attempts: s.value.dunning_attempts + 1 }, s.version, at)
          const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
          // a declined charge, or one the processor could not take (nothing was charged)
          if (
            tv.value.trade.trade_status === "payment_failed" ||
            tv.value.trade.trade_status === "requires_payment_method"
          ) {
            yield* Effect.orDie(
              trades.update(
                {
                  ...tv.value,
                  attempts: tv.value.attempts + 1,
                  trade: Lifecycle.must(Trade.move(tv.value.trade, "submit_payment"))
                },
                tv.version
              )
            )
          }
          const iv = Option.getOrThrow(yield* invoices.get(merchantId, invoice.invoice_id))
          if (iv.value.biz_status === "retrying")
            yield* Effect.orDie(invoices.update(Lifecycle.must(Invoice.move(iv.value, "charge")), iv.version))
          yield* schedule(merchant, "charge", tradeId, at)
        })
      )
      return Option.some(yield* charges.chargeInvoiceTrade(merchantId, tradeId, sv.value.payment_token))
    })

    /** The failed invoice an unpaid subscription's recovery reopens: its latest cycle's. */
    const lastFailed = (merchantId: string, subscriptionId: string) =>
      Effect.map(
        Effect.orDie(
          invoices.list(merchantId, {
            limit: 100,
            filters: [
              { column: "subscription_id", op: "in", values: [subscriptionId] },
              { column: "biz_status", op: "in", values: ["failed"] }
            ]
          })
        ),
        (page) =>
          page.list.filter((i) => i.invoice_type !== "refund").sort((a, b) => b.cycle_index - a.cycle_index)[0] as
            | Invoice.Invoice
            | undefined
      )

    /**
     * Whether the customer can pay an invoice from its page: an open or retrying one with a trade,
     * the failed invoice an unpaid subscription's recovery reopens, or an issued one written off
     * (`uncollectible`: still owed; `InvoicePayments.payInvoice` charges it with a new trade).
     */
    const payable = Effect.fn("Dunning.payable")(function* (invoice: Invoice.Invoice) {
      if ((invoice.biz_status === "retrying" || invoice.biz_status === "open") && invoice.trade_id !== null) return true
      if (invoice.biz_status === "uncollectible") return Invoice.isIssued(invoice)
      if (invoice.biz_status !== "failed" || invoice.subscription_id === null) return false
      const sv = yield* Effect.orDie(subs.get(invoice.merchant_id, invoice.subscription_id))
      if (Option.isNone(sv) || sv.value.value.subscription.status !== "unpaid") return false
      return (yield* lastFailed(invoice.merchant_id, invoice.subscription_id))?.invoice_id === invoice.invoice_id
    })

    /**
     * An unpaid subscription's way back: its last failed invoice is reopened with a new trade
     * (the closed one stays as history) and charged with `token`; success pays the invoice and
     * returns the subscription to `active` (`retry_succeeded`), as a dunning retry would.
     */
    const recoverUnpaid = Effect.fn("Dunning.recoverUnpaid")(function* (
      merchant: Merchant.Merchant,
      subscriptionId: string,
      token: string
    ) {
      const merchantId = merchant.merchant_id
      const tradeId = yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          if (sv.value.subscription.status !== "unpaid") return Option.none<string>()
          const last = yield* lastFailed(merchantId, subscriptionId)
          if (last === undefined) return Option.none<string>()
          const iv = Option.getOrThrow(yield* invoices.get(merchantId, last.invoice_id))
          const trade = yield* newTrade({
            merchant,
            // what remains owed: credit notes may have reduced it (issue 34)
            amount: Invoice.amountRemaining(last),
            customer_id: sv.value.subscription.customer_id,
            order_id: sv.value.subscription.order_id,
            payment_mode: "subscription",
            order_type: "renewal",
            session: Option.none(),
            line: null,
            tax: Result.getOrThrow(Money.parse(last.tax_amount, last.currency)),
            metadata: {},
            at
          })
          const moved = Invoice.move(iv.value, "reopen", { trade_id: trade.trade_id })
          // reopened by a concurrent payment between the two reads (PostgreSQL reads each
          // statement's own snapshot): a lost race, a `ConcurrentUpdate` rolled back — never a defect
          if (Result.isFailure(moved))
            return yield* Effect.die(new Errors.ConcurrentUpdate({ resource: "invoice", id: iv.value.invoice_id }))
          const reopened = moved.success.value
          yield* Effect.orDie(invoices.update(reopened, iv.version))
          yield* submitTrade(storage, { trade, invoice_id: reopened.invoice_id, subscription_id: subscriptionId, at })
          // a durable intent: if this process dies before the charge, a worker makes it
          yield* schedule(merchant, "charge", trade.trade_id, at)
          return Option.some(trade.trade_id)
        })
      )
      if (Option.isNone(tradeId)) return Option.none<Payments.PaymentResult>()
      return Option.some(yield* charges.chargeInvoiceTrade(merchantId, tradeId.value, token))
    })

    /**
     * The timeline of a failed renewal under the merchant's dunning policy, or a proposed one, on
     * the merchant's clock (a sandbox merchant's frozen clock): each retry's instant and the end
     * (`DunningPolicy.Preview`). Nothing is written. A proposed field out of range is
     * `InvalidParameter` naming it, as the billing settings refuse it.
     *
     * @example
     * yield* dunning.preview(merchantId, { decline_class: "soft", dunning_retry_days: [2, 5] })
     */
    const preview = Effect.fn("Dunning.preview")(function* (merchantId: string, input: PreviewInput) {
      const merchant = yield* merchants.get(merchantId)
      const invalid = Merchants.invalidSetting({
        dunning_retry_days: input.dunning_retry_days,
        dunning_on_decline: input.dunning_on_decline
      })
      if (invalid !== undefined) return yield* invalid
      if (!(DunningPolicy.DeclineClass.literals as ReadonlyArray<string>).includes(input.decline_class))
        return yield* new Errors.InvalidParameter({
          param: "decline_class",
          reason: "must be hard, soft or expired_card"
        })
      const inForce = DunningPolicy.policyOf(merchant, yield* Effect.service(DunningPolicy.DefaultPolicy))
      const onDecline = Object.fromEntries(
        Object.entries(input.dunning_on_decline ?? {}).filter(([, v]) => v !== undefined)
      ) as Partial<DunningPolicy.DeclineRules>
      const policy: DunningPolicy.Policy = {
        retryAfterMs:
          input.dunning_retry_days !== undefined
            ? input.dunning_retry_days.map((d) => d * 86_400_000)
            : inForce.retryAfterMs,
        finalState: input.dunning_final_state ?? inForce.finalState,
        onDecline: { ...(inForce.onDecline ?? DunningPolicy.standardRules), ...onDecline }
      }
      return DunningPolicy.preview(policy, input.decline_class, input.failed_at ?? (yield* nowOf(merchant)))
    })

    return { retry, payable, recoverUnpaid, preview } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
