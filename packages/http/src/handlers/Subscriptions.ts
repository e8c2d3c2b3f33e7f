/**
 * The handlers of the subscriptions group (reads, changes, lifecycle and usage).
 *
 * @since 0.1.0
 */
import {
  Billing,
  BillingPeriod,
  Errors,
  Lifecycle,
  Metering,
  PaymentMethods,
  PriceChanges,
  Renewals,
  SentInvoices,
  type Store,
  Subscriptions
} from "@recur/core"
import { CurrentUsage, Requests } from "@recur/contract"
import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import {
  ok,
  call,
  quoteJson,
  invalid,
  list,
  instant,
  pageQuery,
  inFilter,
  enumFilter,
  foreignMerchant
} from "./Shared.js"

/**
 * The handlers of the subscriptions group.
 *
 * @since 0.1.0
 */
export const subscriptionsLive = HttpApiBuilder.group(BillingApi, "subscriptions", (handlers) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const subs = yield* Subscriptions.Subscriptions
    const sent = yield* SentInvoices.SentInvoices
    const paymentMethods = yield* PaymentMethods.PaymentMethods
    const priceChanges = yield* PriceChanges.PriceChanges
    const renewals = yield* Renewals.Renewals
    const metering = yield* Metering.Metering
    const status = (s: { readonly id: string; readonly status: string }) =>
      ok({ subscription_id: s.id, status: s.status })
    return handlers
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            if (foreignMerchant(q.merchant_id, m)) return ok({ has_more: false, list: [] })
            const filters: Array<Store.Filter> = [
              ...(yield* inFilter("id", list(q.subscription_ids))),
              ...(yield* enumFilter("status", "status", list(q.status), Lifecycle.SubscriptionStatus.literals)),
              ...(yield* inFilter("order_id", list(q.order_ids))),
              ...(yield* inFilter("source_trade_id", list(q.source_trade_id))),
              ...(yield* enumFilter(
                "billing_cycle_unit",
                "billing_cycle_unit",
                q.billing_cycle_unit !== undefined ? [q.billing_cycle_unit] : undefined,
                BillingPeriod.BillingCycleUnit.literals
              ))
            ]
            if (q.search_type !== undefined) {
              const column = (
                { subscription_id: "id", customer_id: "customer_id", trade_id: "source_trade_id" } as Record<
                  string,
                  string
                >
              )[q.search_type]
              if (q.search_type === "invoice_id" || q.search_type === "refund_id") {
                // resolved through the invoice / refund to its subscription (none matches nothing)
                const sub = yield* subs.search(
                  m,
                  q.search_type === "invoice_id"
                    ? { invoiceId: q.search_value ?? "" }
                    : { refundId: q.search_value ?? "" }
                )
                filters.push({ column: "id", op: "in", values: [Option.getOrNull(sub) ?? "__none__"] })
              } else if (column === undefined)
                return yield* invalid(
                  "search_type",
                  "must be subscription_id, trade_id, refund_id, invoice_id or customer_id"
                )
              else filters.push({ column, op: "in", values: [q.search_value ?? ""] })
            }
            return ok(
              yield* billing.listSubscriptions(m, {
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
      .handle("get", ({ params: path }) =>
        call((m) =>
          Effect.map(billing.getSubscription(m, path.subscription_id), (subscription) => ok({ subscription }))
        )
      )
      .handle("change", ({ params: path, payload }) =>
        call((m) =>
          Effect.as(
            Effect.flatMap(Requests.changeCommand(path.subscription_id, payload), (c) =>
              priceChanges.changePrice(m, c)
            ),
            ok({})
          )
        )
      )
      .handle("previewChange", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(
            Effect.flatMap(Requests.changeCommand(path.subscription_id, payload), (c) =>
              priceChanges.previewChange(m, c)
            ),
            (q) => ok(quoteJson(q))
          )
        )
      )
      .handle("upcomingInvoice", ({ params: path }) =>
        call((m) =>
          Effect.map(renewals.upcoming(m, path.subscription_id), (o) => ok({ upcoming_invoice: Option.getOrNull(o) }))
        )
      )
      .handle("currentUsage", ({ params: path }) =>
        call((m) =>
          Effect.map(metering.currentUsage(m, path.subscription_id), (u) =>
            ok({ current_usage: CurrentUsage.currentUsageJson(u) })
          )
        )
      )
      .handle("revokePriceChange", ({ params: path }) =>
        call((m) => Effect.map(priceChanges.revokePriceChange(m, path.subscription_id), ok))
      )
      .handle("cancel", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(
            Effect.flatMap(
              // an empty string is the field left out (form-style clients send one)
              Requests.cancelCommand(path.subscription_id, {
                cancel_type: payload.cancel_type || undefined,
                cancel_reason: payload.cancel_reason || undefined
              }),
              (c) => subs.cancel(m, c)
            ),
            status
          )
        )
      )
      .handle("revokeCancel", ({ params: path }) =>
        call((m) => Effect.map(subs.revokeCancel(m, path.subscription_id), status))
      )
      .handle("pause", ({ params: path }) => call((m) => Effect.map(subs.pause(m, path.subscription_id), status)))
      .handle("setCollection", ({ params: path, payload }) =>
        call((m) => Effect.map(sent.setCollection(m, path.subscription_id, payload), ok))
      )
      .handle("resume", ({ params: path }) => call((m) => Effect.map(subs.resume(m, path.subscription_id), status)))
      .handle("updatePaymentMethod", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            if (payload.payment_method !== undefined)
              return ok(
                yield* paymentMethods.updatePaymentMethod(m, path.subscription_id, {
                  _tag: "PaymentMethod",
                  id: payload.payment_method
                })
              )
            for (const field of ["card_number", "exp_month", "exp_year", "cvc"] as const)
              if (payload[field] === undefined)
                return yield* new Errors.InvalidParameter({ param: field, reason: "is required" })
            return ok(
              yield* paymentMethods.updatePaymentMethod(m, path.subscription_id, {
                number: payload.card_number!.replace(/[\s-]/g, ""),
                exp_month: payload.exp_month!,
                exp_year: payload.exp_year!,
                cvc: payload.cvc!,
                ...(payload.name !== undefined ? { name: payload.name } : {})
              })
            )
          })
        )
      )
      .handle("renewal", ({ params: path }) => call((m) => Effect.map(subs.renewNow(m, path.subscription_id), status)))
      .handle("usage", ({ params: path, query: urlParams }) =>
        call((m) =>
          Effect.gen(function* () {
            if (urlParams.merchant_id === undefined) return yield* invalid("merchant_id", "is required")
            if (foreignMerchant(urlParams.merchant_id, m))
              return yield* new Errors.NotFound({ resource: "subscription", id: path.subscription_id })
            let cycle: number | undefined
            if (urlParams.cycle_index !== undefined) {
              if (!/^\d{1,9}$/.test(urlParams.cycle_index))
                return yield* invalid("cycle_index", "must be a whole number")
              cycle = Number(urlParams.cycle_index)
            }
            return ok(yield* metering.usageSummary(m, path.subscription_id, cycle))
          })
        )
      )
      .handle("recordUsage", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            if (payload.usage_count === undefined) return yield* invalid("usage_count", "is required")
            let timestamp: number | undefined
            if (payload.timestamp !== undefined) {
              timestamp = instant(payload.timestamp)
              if (timestamp === undefined) return yield* invalid("timestamp", "must be an RFC 3339 timestamp")
            }
            const event = yield* Requests.usageEvent(path.subscription_id, {
              usage_count: payload.usage_count,
              event_id: payload.event_id,
              timestamp
            })
            return ok(yield* metering.recordUsage(m, event))
          })
        )
      )
      .handle("recordUsageBatch", ({ payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const records: Array<Requests.UsageRequest> = []
            for (let i = 0; i < payload.records.length; i++) {
              const r = payload.records[i]!
              if (r.subscription_id === undefined) return yield* invalid(`records[${i}].subscription_id`, "is required")
              if (r.usage_count === undefined) return yield* invalid(`records[${i}].usage_count`, "is required")
              let timestamp: number | undefined
              if (r.timestamp !== undefined) {
                timestamp = instant(r.timestamp)
                if (timestamp === undefined)
                  return yield* invalid(`records[${i}].timestamp`, "must be an RFC 3339 timestamp")
              }
              records.push({
                subscription_id: r.subscription_id,
                usage_count: r.usage_count,
                ...(r.event_id !== undefined ? { event_id: r.event_id } : {}),
                ...(timestamp !== undefined ? { timestamp } : {})
              })
            }
            return ok(yield* metering.recordUsageBatch(m, yield* Requests.usageEvents(records)))
          })
        )
      )
  })
)
