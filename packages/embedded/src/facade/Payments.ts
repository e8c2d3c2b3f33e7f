/**
 * The facade's invoices, trades, refunds, discounts, tax rates, portal and webhooks groups: the
 * same services and the same request decoding as the REST handlers of the same operations.
 *
 * @since 0.1.0
 */
import { InvoiceRequests, RequestBodies, Requests } from "@recur/contract"
import {
  Billing,
  Discount,
  Discounts,
  DraftEdits,
  Errors,
  Invoice,
  InvoiceActions,
  Lifecycle,
  Portal,
  PortalSession,
  Refund,
  Refunds,
  Tax,
  TaxRates,
  Trade,
  Webhook,
  WebhookDispatch,
  Webhooks
} from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, inFilter, json, type Kit, named, page, pageJson } from "./Kit.js"

/** `invoices`. @since 0.1.0 */
export const invoices = ({ run }: Kit<Services>): BillingClient["invoices"] => ({
  list: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const p = yield* page(filter, 100)
        const statuses =
          filter.status === undefined ? undefined : yield* named("status", InvoiceStatuses, filter.status)
        const byStatus = statuses === undefined || statuses.length === 0 ? undefined : Invoice.statusFilter(statuses)
        if (statuses !== undefined && statuses.length > 0 && byStatus === undefined)
          return yield* new Errors.InvalidParameter({
            param: "status",
            reason: `${statuses.join(", ")} cannot be listed together: ask for them one at a time`
          })
        return yield* Billing.Billing.use((b) =>
          b.listInvoices(merchantId, {
            ...p,
            filters: [
              ...inFilter("subscription_id", filter.subscription_id ? [filter.subscription_id] : undefined),
              ...inFilter("customer_id", filter.customer_id ? [filter.customer_id] : undefined),
              ...inFilter("biz_status", byStatus?.biz_status),
              ...inFilter("invoice_type", byStatus?.invoice_type)
            ]
          })
        )
      }).pipe(Effect.map(pageJson(Invoice.InvoiceView)))
    ),
  get: (merchantId, invoiceId) =>
    run(
      id("invoice_id", invoiceId).pipe(
        Effect.flatMap((i) => Billing.Billing.use((b) => b.getInvoice(merchantId, i))),
        Effect.map(json(Invoice.InvoiceView))
      )
    ),
  finalize: (merchantId, invoiceId) =>
    run(
      id("invoice_id", invoiceId).pipe(
        Effect.flatMap((i) => InvoiceActions.InvoiceActions.use((a) => a.finalize(merchantId, i))),
        Effect.map(json(Invoice.InvoiceView))
      )
    ),
  edit: (merchantId, invoiceId, input) =>
    run(
      Effect.all([id("invoice_id", invoiceId), decode(InvoiceRequests.EditDraft, input)]).pipe(
        Effect.flatMap(([i, edit]) => DraftEdits.DraftEdits.use((d) => d.edit(merchantId, i, edit))),
        Effect.map(json(Invoice.InvoiceView))
      )
    ),
  void: (merchantId, invoiceId) =>
    run(
      id("invoice_id", invoiceId).pipe(
        Effect.flatMap((i) => InvoiceActions.InvoiceActions.use((a) => a.voidInvoice(merchantId, i))),
        Effect.map(json(Invoice.InvoiceView))
      )
    ),
  markUncollectible: (merchantId, invoiceId) =>
    run(
      id("invoice_id", invoiceId).pipe(
        Effect.flatMap((i) => InvoiceActions.InvoiceActions.use((a) => a.markUncollectible(merchantId, i))),
        Effect.map(json(Invoice.InvoiceView))
      )
    )
})

const InvoiceStatuses = Schema.Array(Lifecycle.InvoiceStatusView).annotate({ identifier: "status" })

const TradeStatuses = Schema.Array(Lifecycle.TradeStatus).annotate({ identifier: "trade_status" })

/** `trades`. @since 0.1.0 */
export const trades = ({ run }: Kit<Services>): BillingClient["trades"] => ({
  list: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const p = yield* page(filter)
        const statuses =
          filter.trade_status === undefined
            ? undefined
            : yield* named("trade_status", TradeStatuses, filter.trade_status)
        const billing = yield* Billing.Billing
        return yield* billing.listTrades(merchantId, {
          ...p,
          filters: [
            ...inFilter("id", filter.trade_ids),
            ...inFilter("trade_status", statuses),
            ...inFilter("customer_id", filter.customer_id !== undefined ? [filter.customer_id] : undefined)
          ]
        })
      }).pipe(Effect.map(pageJson(Trade.Trade)))
    ),
  get: (merchantId, tradeId) =>
    run(
      id("trade_id", tradeId).pipe(
        Effect.flatMap((t) => Billing.Billing.use((b) => b.getTrade(merchantId, t))),
        Effect.map(json(Trade.Trade))
      )
    )
})

/** `refunds`. @since 0.1.0 */
export const refunds = ({ run }: Kit<Services>): BillingClient["refunds"] => ({
  create: (merchantId, input) =>
    run(
      Refunds.Refunds.use((refunds) =>
        decode(RequestBodies.Refund, input).pipe(
          Effect.flatMap((i) => Requests.refundCommand(i)),
          Effect.flatMap((c) => Requests.referencedBy("trade_id")(refunds.refund(merchantId, c))),
          Effect.map(json(Refund.Refund))
        )
      )
    ),
  get: (merchantId, refundId) =>
    run(
      id("refund_id", refundId).pipe(
        Effect.flatMap((r) => Refunds.Refunds.use((s) => s.getRefund(merchantId, r))),
        Effect.map(json(Refund.Refund))
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      page(filter).pipe(
        Effect.flatMap((p) => Refunds.Refunds.use((s) => s.listRefunds(merchantId, p))),
        Effect.map(pageJson(Refund.Refund))
      )
    ),
  ofTrade: (merchantId, tradeId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const t = yield* id("trade_id", tradeId)
        const p = yield* page(filter)
        // an unknown trade is not found, as over REST (not an empty list)
        yield* Billing.Billing.use((b) => b.getTrade(merchantId, t))
        return yield* Refunds.Refunds.use((s) =>
          s.listRefunds(merchantId, { ...p, filters: [{ column: "trade_id", op: "in", values: [t] }] })
        )
      }).pipe(Effect.map(pageJson(Refund.Refund)))
    )
})

/** `discounts`. @since 0.1.0 */
export const discounts = ({ run }: Kit<Services>): BillingClient["discounts"] => ({
  create: (merchantId, input) =>
    run(
      decode(RequestBodies.CreateDiscount, input).pipe(
        Effect.flatMap(Requests.discountCommand),
        Effect.flatMap((c) => Requests.refusedAsParameter(Discounts.Discounts.use((d) => d.create(merchantId, c)))),
        Effect.map(json(Discount.Discount))
      )
    ),
  get: (merchantId, discountId) =>
    run(
      id("discount_id", discountId).pipe(
        Effect.flatMap((i) => Discounts.Discounts.use((d) => d.get(merchantId, i))),
        Effect.map(json(Discount.Discount))
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      Effect.map(
        Discounts.Discounts.use((d) => d.list(merchantId, filter)),
        pageJson(Discount.Discount)
      )
    ),
  end: (merchantId, discountId) =>
    run(
      id("discount_id", discountId).pipe(
        Effect.flatMap((i) => Discounts.Discounts.use((d) => d.end(merchantId, i))),
        Effect.map(json(Discount.Discount))
      )
    ),
  applyToSubscription: (merchantId, subscriptionId, input) =>
    run(
      Effect.all([
        id("subscription_id", subscriptionId),
        Effect.flatMap(decode(RequestBodies.ApplyDiscount, input), Requests.discountRef)
      ]).pipe(
        Effect.flatMap(([s, ref]) =>
          Requests.refusedAsParameter(Discounts.Discounts.use((d) => d.applyToSubscription(merchantId, s, ref)))
        )
      )
    ),
  removeFromSubscription: (merchantId, subscriptionId, discountId) =>
    run(
      Effect.all([id("subscription_id", subscriptionId), id("discount_id", discountId)]).pipe(
        Effect.flatMap(([s, i]) => Discounts.Discounts.use((d) => d.removeFromSubscription(merchantId, s, i)))
      )
    )
})

/** `taxRates`. @since 0.1.0 */
export const taxRates = ({ run }: Kit<Services>): BillingClient["taxRates"] => ({
  create: (merchantId, input) =>
    run(
      decode(RequestBodies.CreateTaxRate, input).pipe(
        Effect.flatMap((i) => TaxRates.TaxRates.use((t) => t.create(merchantId, i))),
        Effect.map(json(Tax.TaxRate))
      )
    ),
  get: (merchantId, taxRateId) =>
    run(
      id("tax_rate_id", taxRateId).pipe(
        Effect.flatMap((i) => TaxRates.TaxRates.use((t) => t.get(merchantId, i))),
        Effect.map(json(Tax.TaxRate))
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      Effect.map(
        TaxRates.TaxRates.use((t) => t.list(merchantId, filter)),
        pageJson(Tax.TaxRate)
      )
    ),
  archive: (merchantId, taxRateId) =>
    run(
      id("tax_rate_id", taxRateId).pipe(
        Effect.flatMap((i) => TaxRates.TaxRates.use((t) => t.archive(merchantId, i))),
        Effect.map(json(Tax.TaxRate))
      )
    )
})

/** `portal`. @since 0.1.0 */
export const portal = ({ run }: Kit<Services>): BillingClient["portal"] => ({
  createSession: (merchantId, input) =>
    run(
      decode(RequestBodies.PortalSession, input).pipe(
        Effect.flatMap(Requests.portalSessionCommand),
        Effect.flatMap((c) =>
          Requests.referencedBy("customer_id")(
            Requests.refusedAsParameter(Portal.Portal.use((p) => p.createSession(merchantId, c)))
          )
        ),
        Effect.map(json(PortalSession.PortalSession))
      )
    ),
  revokeSession: (merchantId, sessionId) =>
    run(
      id("portal_session_id", sessionId).pipe(
        Effect.flatMap((s) => Portal.Portal.use((p) => p.revokeSession(merchantId, s))),
        Effect.map(json(PortalSession.PortalSession))
      )
    ),
  settings: (merchantId) =>
    run(Portal.Portal.use((p) => p.settingsOf(merchantId)).pipe(Effect.map(json(PortalSession.PortalSettings)))),
  updateSettings: (merchantId, input) =>
    run(
      decode(RequestBodies.PortalSettings, input).pipe(
        Effect.flatMap(Requests.portalSettingsCommand),
        Effect.flatMap((c) => Requests.refusedAsParameter(Portal.Portal.use((p) => p.setSettings(merchantId, c)))),
        Effect.map(json(PortalSession.PortalSettings))
      )
    )
})

const EndpointStatuses = Schema.Array(Lifecycle.EndpointStatus).annotate({ identifier: "status" })
const DeliveryStatuses = Schema.Array(Lifecycle.DeliveryStatus).annotate({ identifier: "event_statuses" })

/** `webhooks`. @since 0.1.0 */
export const webhooks = ({ run }: Kit<Services>): BillingClient["webhooks"] => ({
  createEndpoint: (merchantId, input) =>
    run(
      decode(RequestBodies.WebhookEndpoint, input).pipe(
        Effect.flatMap((i) => Webhooks.Webhooks.use((w) => w.create(merchantId, i)))
      )
    ),
  listEndpoints: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const p = yield* page(filter)
        const status = filter.status === undefined ? undefined : yield* named("status", EndpointStatuses, filter.status)
        return yield* Webhooks.Webhooks.use((w) => w.list(merchantId, { ...p, ...(status ? { status } : {}) }))
      }).pipe(Effect.map(pageJson(Webhook.WebhookEndpoint)))
    ),
  updateEndpoint: (merchantId, endpointId, input) =>
    run(
      Effect.all([id("endpoint_id", endpointId), decode(RequestBodies.WebhookEndpoint, input)]).pipe(
        Effect.flatMap(([e, i]) => Webhooks.Webhooks.use((w) => w.update(merchantId, e, i))),
        Effect.map(json(Webhook.WebhookEndpoint))
      )
    ),
  deleteEndpoint: (merchantId, endpointId) =>
    run(
      id("endpoint_id", endpointId).pipe(Effect.flatMap((e) => Webhooks.Webhooks.use((w) => w.delete(merchantId, e))))
    ),
  listEvents: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const p = yield* page(filter)
        const statuses =
          filter.event_statuses === undefined
            ? undefined
            : yield* named("event_statuses", DeliveryStatuses, filter.event_statuses)
        return yield* Webhooks.Webhooks.use((w) =>
          w.listEvents(merchantId, {
            ...p,
            ...(filter.business_ids !== undefined ? { business_ids: filter.business_ids } : {}),
            ...(filter.event_types !== undefined ? { event_types: filter.event_types } : {}),
            ...(statuses !== undefined ? { event_statuses: statuses } : {})
          })
        )
      }).pipe(Effect.map(pageJson(Webhook.WebhookEvent)))
    ),
  resendEvent: (merchantId, eventId) =>
    run(
      id("event_id", eventId).pipe(
        Effect.flatMap((e) => Webhooks.Webhooks.use((w) => w.resend(merchantId, e))),
        Effect.map(json(Webhook.WebhookEvent))
      )
    ),
  dispatch: (owner = "embedded") => run(WebhookDispatch.WebhookDispatch.use((w) => w.dispatchOnce({ owner })))
})
