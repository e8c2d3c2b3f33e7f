/**
 * The handlers of the trades, invoices and refunds group (with the invoice, billing, dispute and payment settings).
 *
 * @since 0.1.0
 */
import {
  Billing,
  DraftEdits,
  Dunning,
  Errors,
  Invoice,
  InvoiceActions,
  Lifecycle,
  Merchant,
  Merchants,
  PaymentSettings,
  Refunds
} from "@recur/core"
import { DunningRequests, Requests } from "@recur/contract"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { CurrentMerchant } from "../api/Shared.js"
import { ok, call, list, pageQuery, inFilter, enumFilter, enumValues, invalid } from "./Shared.js"

/**
 * The filters of `status` (the derived Stripe-style status, a list): the `biz_status` and
 * `invoice_type` values it stands for ({@link Invoice.statusFilter}); an unknown value, or
 * statuses that cannot be listed together, refused naming `status`.
 */
const statusFilters = (values: ReadonlyArray<string> | undefined) =>
  Effect.gen(function* () {
    const checked = yield* enumValues("status", values, Lifecycle.InvoiceStatusView.literals)
    if (checked === undefined || checked.length === 0) return []
    const filter = Invoice.statusFilter(checked as ReadonlyArray<Lifecycle.InvoiceStatusView>)
    if (filter === undefined)
      return yield* invalid("status", `${checked.join(", ")} cannot be listed together: ask for them one at a time`)
    return [
      ...(yield* inFilter("biz_status", filter.biz_status)),
      ...(yield* inFilter("invoice_type", filter.invoice_type))
    ]
  })

/**
 * The handlers of the trades, invoices and refunds group.
 *
 * @since 0.1.0
 */
export const paymentsLive = HttpApiBuilder.group(BillingApi, "payments", (handlers) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const refunds = yield* Refunds.Refunds
    const merchants = yield* Merchants.Merchants
    const paymentSettings = yield* PaymentSettings.PaymentSettings
    const dunning = yield* Dunning.Dunning
    const invoiceActions = yield* InvoiceActions.InvoiceActions
    const draftEdits = yield* DraftEdits.DraftEdits
    return handlers
      .handle("trades", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            const filters = [
              ...(yield* inFilter("id", list(q.trade_ids))),
              ...(yield* enumFilter(
                "trade_status",
                "trade_status",
                list(q.trade_status),
                Lifecycle.TradeStatus.literals
              )),
              ...(yield* inFilter("order_id", list(q.order_ids))),
              ...(yield* inFilter("customer_id", q.customer_id !== undefined ? [q.customer_id] : undefined))
            ]
            return ok(
              yield* billing.listTrades(m, {
                filters,
                limit: page.limit,
                created: page.created,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              })
            )
          })
        )
      )
      .handle("trade", ({ params: path }) =>
        call((m) => Effect.map(billing.getTrade(m, path.trade_id), (trade) => ok({ trade })))
      )
      .handle("invoices", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            const filters = [
              ...(yield* inFilter("id", list(q.invoice_ids))),
              ...(yield* inFilter("trade_id", list(q.trade_ids))),
              ...(yield* inFilter("order_id", list(q.order_ids))),
              ...(yield* inFilter(
                "subscription_id",
                q.subscription_id !== undefined ? [q.subscription_id] : undefined
              )),
              ...(yield* inFilter("customer_id", q.customer_id !== undefined ? [q.customer_id] : undefined)),
              ...(yield* enumFilter("biz_status", "biz_status", list(q.biz_status), Lifecycle.InvoiceStatus.literals)),
              ...(yield* enumFilter(
                "invoice_type",
                "invoice_types",
                list(q.invoice_types),
                Invoice.InvoiceType.literals
              )),
              ...(yield* statusFilters(list(q.status)))
            ]
            return ok(
              yield* billing.listInvoices(m, {
                filters,
                limit: page.limit,
                created: page.created,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              })
            )
          })
        )
      )
      .handle("invoice", ({ params: path }) =>
        call((m) => Effect.map(billing.getInvoice(m, path.invoice_id), (invoice) => ok({ invoice })))
      )
      .handle("finalizeInvoice", ({ params: path }) =>
        call((m) => Effect.map(invoiceActions.finalize(m, path.invoice_id), (invoice) => ok({ invoice })))
      )
      .handle("editInvoice", ({ params: path, payload }) =>
        call((m) => Effect.map(draftEdits.edit(m, path.invoice_id, payload), (invoice) => ok({ invoice })))
      )
      .handle("voidInvoice", ({ params: path }) =>
        call((m) => Effect.map(invoiceActions.voidInvoice(m, path.invoice_id), (invoice) => ok({ invoice })))
      )
      .handle("markInvoiceUncollectible", ({ params: path }) =>
        call((m) => Effect.map(invoiceActions.markUncollectible(m, path.invoice_id), (invoice) => ok({ invoice })))
      )
      .handle("paymentSettings", () => call((m) => Effect.map(paymentSettings.get(m), ok)))
      .handle("updatePaymentSettings", ({ payload }) => call((m) => Effect.map(paymentSettings.set(m, payload), ok)))
      .handle("invoiceSettings", () =>
        call((m) => Effect.map(merchants.get(m), (merchant) => ok({ invoice_prefix: merchant.invoice_prefix })))
      )
      .handle("updateInvoiceSettings", ({ payload }) =>
        call((m) =>
          payload.invoice_prefix === undefined
            ? Effect.fail(new Errors.InvalidParameter({ param: "invoice_prefix", reason: "is required" }))
            : Effect.map(merchants.setInvoicePrefix(m, payload.invoice_prefix), (merchant) =>
                ok({ invoice_prefix: merchant.invoice_prefix })
              )
        )
      )
      .handle("billingSettings", () =>
        call((m) => Effect.map(merchants.get(m), (merchant) => ok(Merchant.billingSettingsOf(merchant))))
      )
      .handle("updateBillingSettings", ({ payload }) =>
        call((m) =>
          Effect.map(merchants.setBillingSettings(m, payload), (merchant) => ok(Merchant.billingSettingsOf(merchant)))
        )
      )
      .handle("dunningPreview", ({ payload }) =>
        call((m) =>
          DunningRequests.previewInput(payload).pipe(
            Effect.flatMap((input) => dunning.preview(m, input)),
            Effect.map(ok)
          )
        )
      )
      .handle("disputeSettings", () =>
        call((m) =>
          Effect.map(merchants.get(m), (merchant) => ok({ fraud_dispute_renewals: merchant.fraud_dispute_renewals }))
        )
      )
      .handle("updateDisputeSettings", ({ payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const policy = payload.fraud_dispute_renewals
            if (policy === undefined)
              return yield* new Errors.InvalidParameter({ param: "fraud_dispute_renewals", reason: "is required" })
            const merchant = yield* merchants.setDisputeSettings(m, { fraud_dispute_renewals: policy })
            return ok({ fraud_dispute_renewals: merchant.fraud_dispute_renewals })
          })
        )
      )
      .handle("refund", ({ payload }) =>
        Effect.flatMap(CurrentMerchant, ({ requestId }) =>
          call((m) =>
            Effect.gen(function* () {
              // the Request-Id keys the refund: a retry after a crash finds the refund, never makes a second
              const r = yield* Requests.referencedBy("trade_id")(
                refunds.refund(m, yield* Requests.refundCommand(payload, requestId))
              )
              return ok({
                refund_id: r.refund_id,
                refund_status: r.refund_status,
                credit_note_id: r.credit_note_id,
                credit_note_number: r.credit_note_number
              })
            })
          )
        )
      )
      .handle("getRefund", ({ params: path }) =>
        call((m) => Effect.map(refunds.getRefund(m, path.refund_id), (refund) => ok({ refund })))
      )
      .handle("refunds", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(pageQuery(q), (page) =>
            Effect.map(
              refunds.listRefunds(m, {
                limit: page.limit,
                created: page.created,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              }),
              ok
            )
          )
        )
      )
      .handle("tradeRefunds", ({ params: path, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            yield* billing.getTrade(m, path.trade_id)
            return ok(
              yield* refunds.listRefunds(m, {
                filters: [{ column: "trade_id", op: "in", values: [path.trade_id] }],
                limit: page.limit,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              })
            )
          })
        )
      )
  })
)
