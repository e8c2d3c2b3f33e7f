/**
 * The handlers of {@link BillingApi}: each decodes, calls one engine service, and answers in
 * the envelope; core errors become the contract's error bodies.
 *
 * @since 0.1.0
 */
import {
  Billing,
  BillingPeriod,
  Catalog,
  Checkout,
  Common,
  Customers,
  Discounts,
  Dunning,
  Errors,
  Invoice,
  Lifecycle,
  Merchants,
  Metering,
  PaymentSettings,
  Portal,
  PriceChanges,
  Refunds,
  Renewals,
  Requests,
  SandboxClock,
  Settings,
  type Store,
  Subscriptions,
  TaxRates,
  Webhooks
} from "@recur/core"
import { DateTime, Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Authentication, BillingApi, CurrentMerchant } from "./Api.js"
import * as ErrorBindings from "./ErrorBindings.js"
import * as ApiErrors from "./Errors.js"
import * as AuthMemo from "./internal/authMemo.js"

type CoreError = Errors.RecurError

/**
 * A core error as the contract's error body (see {@link ErrorBindings.bindings}).
 *
 * @since 0.1.0
 */
export const toApiError = ErrorBindings.toApiError

const ok = <A>(data: A) => ({ code: "success" as const, message: "success" as const, data })

/** Runs a service call for the current merchant, mapping its errors. */
const call = <A, E extends CoreError, R>(
  f: (
    merchantId: string,
    merchant: { readonly merchant_id: string; readonly mode: string; readonly frozen_time: unknown }
  ) => Effect.Effect<A, E, R>
) =>
  // the merchant authenticated a moment ago: the services take its clock instead of reading it again
  Effect.flatMap(CurrentMerchant, ({ merchant, requestId }) =>
    Effect.mapError(Merchants.asCaller(merchant)(f(merchant.merchant_id, merchant)), toApiError(requestId))
  )

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

const list = (v: string | ReadonlyArray<string> | undefined): ReadonlyArray<string> | undefined =>
  v === undefined
    ? undefined
    : (typeof v === "string" ? [v] : v)
        .flatMap((s) => s.split(","))
        .map((s) => s.trim())
        .filter((s) => s !== "")

const instant = Common.parseInstant

/** Parses the common list query: limit (1..100, default 10), cursors and created_at ranges. */
const pageQuery = (q: {
  readonly limit?: string | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
  readonly "created_at.gt"?: string | undefined
  readonly "created_at.gte"?: string | undefined
  readonly "created_at.lt"?: string | undefined
  readonly "created_at.lte"?: string | undefined
}) =>
  Effect.gen(function* () {
    let limit = 10
    if (q.limit !== undefined) {
      if (!/^\d{1,3}$/.test(q.limit) || Number(q.limit) < 1 || Number(q.limit) > 100)
        return yield* invalid("limit", "must be an integer from 1 to 100")
      limit = Number(q.limit)
    }
    if (q.starting_after !== undefined && q.ending_before !== undefined)
      return yield* new Errors.InvalidRequest({ reason: "starting_after and ending_before cannot be used together" })
    const created: Record<string, number> = {}
    for (const k of ["gt", "gte", "lt", "lte"] as const) {
      const v = q[`created_at.${k}`]
      if (v === undefined) continue
      const ms = instant(v)
      if (ms === undefined) return yield* invalid(`created_at.${k}`, "must be an RFC 3339 UTC timestamp")
      created[k] = ms
    }
    return {
      limit,
      starting_after: q.starting_after,
      ending_before: q.ending_before,
      created
    } satisfies Store.ListQuery & { created: Store.CreatedRange }
  })

const inFilter = (
  column: string,
  values: ReadonlyArray<string> | undefined,
  max?: number
): Effect.Effect<ReadonlyArray<Store.Filter>, Errors.InvalidParameter> =>
  values === undefined || values.length === 0
    ? Effect.succeed([])
    : max !== undefined && values.length > max
      ? Effect.fail(invalid(column, `at most ${max} values`))
      : Effect.succeed([{ column, op: "in", values }])

/**
 * The values of an enumerated filter (a status, a type), each checked against the values the
 * field can take: an unknown one is a 400 naming it (the contract), not an empty list.
 */
const enumValues = (
  param: string,
  values: ReadonlyArray<string> | undefined,
  allowed: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string> | undefined, Errors.InvalidParameter> => {
  const unknown = values?.find((v) => !allowed.includes(v))
  return unknown === undefined
    ? Effect.succeed(values)
    : Effect.fail(invalid(param, `unknown value "${unknown.slice(0, 40)}"; expected one of ${allowed.join(", ")}`))
}

/** An `in` filter on an enumerated column, its values checked first ({@link enumValues}). */
const enumFilter = (
  column: string,
  param: string,
  values: ReadonlyArray<string> | undefined,
  allowed: ReadonlyArray<string>
) => Effect.flatMap(enumValues(param, values, allowed), (checked) => inFilter(column, checked))

/** `merchant_id`, where the seed lists it, must be the caller's; anything else matches nothing. */
const foreignMerchant = (given: string | undefined, merchantId: string) => given !== undefined && given !== merchantId

const customersLive = HttpApiBuilder.group(BillingApi, "customers", (handlers) =>
  Effect.gen(function* () {
    const customers = yield* Customers.Customers
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(customers.create(m, payload), (c) => ok({ customer_id: c.id })))
      )
      .handle("update", ({ payload }) =>
        call((m) => Effect.map(customers.update(m, payload), (c) => ok({ customer_id: c.id })))
      )
      .handle("delete", ({ payload }) => call((m) => Effect.as(customers.delete(m, payload), ok({}))))
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(customers.get(m, path.customer_id), (c) => ok({ customer: Customers.toCustomer(c) })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            if (q.type !== undefined && q.type !== "customer" && q.type !== "guest")
              return yield* invalid("type", "must be customer or guest")
            const result = yield* customers.list(m, {
              ...(list(q.customer_ids) ? { customer_ids: list(q.customer_ids)! } : {}),
              ...(list(q.emails) ? { emails: list(q.emails)! } : {}),
              ...(list(q.payer_ids) ? { payer_ids: list(q.payer_ids)! } : {}),
              ...(q.type ? { type: q.type as "customer" | "guest" } : {}),
              created: page.created,
              limit: page.limit,
              ...(page.starting_after ? { starting_after: page.starting_after } : {}),
              ...(page.ending_before ? { ending_before: page.ending_before } : {})
            })
            return ok({ has_more: result.has_more, list: result.list.map(Customers.toCustomer) })
          })
        )
      )
  })
)

const catalogLive = HttpApiBuilder.group(BillingApi, "catalog", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog.Catalog
    return handlers
      .handle("categories", () => call((m) => Effect.map(catalog.listCategories(m), ok)))
      .handle("createProduct", ({ payload }) =>
        call((m) => Effect.map(catalog.createProduct(m, payload), (p) => ok({ product_id: p.product_id })))
      )
      .handle("productStatus", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const status = payload.product_status ?? payload.status
            if (status !== "active" && status !== "disabled" && status !== "draft")
              return yield* invalid("status", "must be active or disabled")
            const p = yield* catalog.setProductStatus(m, path.product_id, status)
            return ok({ product_id: p.id, product_status: p.status })
          })
        )
      )
      .handle("products", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            if (q.status !== undefined && !["draft", "active", "disabled"].includes(q.status))
              return yield* invalid("status", "must be draft, active or disabled")
            return ok(
              yield* catalog.listProducts(m, {
                ...(list(q.price_ids) ? { price_ids: list(q.price_ids)! } : {}),
                ...(q.status ? { status: q.status as "draft" | "active" | "disabled" } : {}),
                created: page.created,
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("createPrice", ({ payload }) =>
        call((m) =>
          Effect.map(catalog.createPrice(m, payload), (v) =>
            ok({ price_id: v.id, price_version_id: v.price_version_id, merchant_price_id: v.merchant_price_id })
          )
        )
      )
      .handle("priceStatus", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(catalog.setVersionStatus(m, path.price_version_id, payload.status ?? ""), (v) =>
            ok({ price_version_id: v.price_version_id })
          )
        )
      )
      .handle("priceVersion", ({ params: path }) =>
        call((m) => Effect.map(catalog.getVersion(m, path.price_version_id), ok))
      )
      .handle("prices", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            yield* enumValues("status", q.status ? [q.status] : undefined, Lifecycle.PriceVersionStatus.literals)
            return ok(
              yield* catalog.listPrices(m, {
                ...(q.product_id ? { product_id: q.product_id } : {}),
                ...(q.status ? { status: q.status } : {}),
                created: page.created,
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("priceVersions", ({ params: path, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            return ok(
              yield* catalog.listVersions(m, path.price_id, {
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
  })
)

const checkoutLive = HttpApiBuilder.group(BillingApi, "checkout", (handlers) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const checkout = yield* Checkout.Checkout
    return handlers
      .handle("create", ({ payload }) =>
        call((m) =>
          Effect.map(billing.createSession(m, payload), (s) =>
            ok({ session_id: s.session_id, session_url: s.session_url })
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(checkout.getSession(m, path.session_id), (session) => ok({ session })))
      )
  })
)

const subscriptionsLive = HttpApiBuilder.group(BillingApi, "subscriptions", (handlers) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const dunning = yield* Dunning.Dunning
    const subs = yield* Subscriptions.Subscriptions
    const refunds = yield* Refunds.Refunds
    const priceChanges = yield* PriceChanges.PriceChanges
    const renewals = yield* Renewals.Renewals
    const metering = yield* Metering.Metering
    const status = (s: { readonly id: string; readonly status: string }) =>
      ok({ subscription_id: s.id, status: s.status })
    const quoteJson = (q: Subscriptions.Quote) => ({
      ...q,
      effective_at: DateTime.formatIso(DateTime.makeUnsafe(Math.floor(q.effective_at / 1000) * 1000)).replace(
        ".000Z",
        "Z"
      )
    })
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
                // resolved through the invoice / refund to its subscription
                const sub = yield* Effect.option(
                  q.search_type === "invoice_id"
                    ? Effect.map(billing.getInvoice(m, q.search_value ?? ""), (i) => i.subscription_id)
                    : Effect.flatMap(refunds.getRefund(m, q.search_value ?? ""), (r) =>
                        Effect.flatMap(
                          billing.listInvoices(m, {
                            filters: [{ column: "trade_id", op: "in", values: [r.trade_id] }],
                            limit: 1
                          }),
                          (page) =>
                            page.list[0]?.subscription_id
                              ? Effect.succeed(page.list[0].subscription_id)
                              : Effect.fail(new Errors.NotFound({ resource: "subscription", id: r.trade_id }))
                        )
                      )
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
      .handle("resume", ({ params: path }) => call((m) => Effect.map(subs.resume(m, path.subscription_id), status)))
      .handle("updatePaymentMethod", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            if (payload.payment_method !== undefined)
              return ok(
                yield* dunning.updatePaymentMethod(m, path.subscription_id, {
                  _tag: "PaymentMethod",
                  id: payload.payment_method
                })
              )
            for (const field of ["card_number", "exp_month", "exp_year", "cvc"] as const)
              if (payload[field] === undefined)
                return yield* new Errors.InvalidParameter({ param: field, reason: "is required" })
            return ok(
              yield* dunning.updatePaymentMethod(m, path.subscription_id, {
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

const paymentsLive = HttpApiBuilder.group(BillingApi, "payments", (handlers) =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const refunds = yield* Refunds.Refunds
    const merchants = yield* Merchants.Merchants
    const paymentSettings = yield* PaymentSettings.PaymentSettings
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
              ))
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
              const r = yield* refunds.refund(m, yield* Requests.refundCommand(payload, requestId))
              return ok({ refund_id: r.refund_id, refund_status: r.refund_status })
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

const sandboxLive = HttpApiBuilder.group(BillingApi, "sandbox", (handlers) =>
  Effect.gen(function* () {
    const sandboxClock = yield* SandboxClock.SandboxClock
    const sandboxOnly = (m: string, merchant: { readonly mode: string }) =>
      merchant.mode === "sandbox"
        ? Effect.void
        : Effect.fail(
            new Errors.StateConflict({
              resource: "merchant",
              id: m,
              state: "live",
              reason: "test helpers need a sandbox key"
            })
          )
    const wire = (d: DateTime.Utc) => Common.formatInstant(DateTime.toEpochMillis(d))
    return handlers
      .handle("clock", () =>
        call((m, merchant) =>
          Effect.gen(function* () {
            yield* sandboxOnly(m, merchant)
            const c = yield* sandboxClock.clockOf(m)
            return ok({
              frozen_time: c.merchant.frozen_time === null ? null : wire(c.merchant.frozen_time),
              target_time: Option.match(c.target, { onNone: () => null, onSome: Common.formatInstant }),
              advancing: Option.isSome(c.target)
            })
          })
        )
      )
      .handle("advanceClock", ({ payload }) =>
        call((m, merchant) =>
          Effect.gen(function* () {
            yield* sandboxOnly(m, merchant)
            const to = payload.frozen_time === undefined ? undefined : instant(payload.frozen_time)
            if (to === undefined) return yield* invalid("frozen_time", "must be an RFC 3339 timestamp")
            const settings = yield* Settings.Settings
            const r = yield* sandboxClock.advanceTo(m, to, { maxItems: settings.advanceClockMaxItems })
            // past the request's bound, the rest runs in the background, a chunk at a time
            if (!r.complete && r.ran > 0) yield* sandboxClock.continueInBackground(m, to)
            return ok({
              frozen_time: wire(r.merchant.frozen_time!),
              target_time: Common.formatInstant(to),
              complete: r.complete
            })
          })
        )
      )
  })
)

const webhooksLive = HttpApiBuilder.group(BillingApi, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks.Webhooks
    return handlers
      .handle("events", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            return ok(
              yield* webhooks.listEvents(m, {
                ...(list(q.business_ids) ? { business_ids: list(q.business_ids)! } : {}),
                ...(list(q.event_types) ? { event_types: list(q.event_types)! } : {}),
                ...(list(q.event_statuses)
                  ? {
                      event_statuses: (yield* enumValues(
                        "event_statuses",
                        list(q.event_statuses),
                        Lifecycle.DeliveryStatus.literals
                      ))!
                    }
                  : {}),
                created: page.created,
                limit: page.limit,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              })
            )
          })
        )
      )
      .handle("endpoints", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.EndpointStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                webhooks.list(m, {
                  ...(statuses ? { status: statuses } : {}),
                  created: page.created,
                  limit: page.limit,
                  starting_after: page.starting_after,
                  ending_before: page.ending_before
                }),
                ok
              )
          )
        )
      )
      .handle("createEndpoint", ({ payload }) => call((m) => Effect.map(webhooks.create(m, payload), ok)))
      .handle("updateEndpoint", ({ params: path, payload }) =>
        call((m) => Effect.map(webhooks.update(m, path.endpoint_id, payload), ok))
      )
      .handle("deleteEndpoint", ({ params: path }) =>
        call((m) => Effect.as(webhooks.delete(m, path.endpoint_id), ok({})))
      )
      .handle("resendEvent", ({ params: path }) => call((m) => Effect.map(webhooks.resend(m, path.event_id), ok)))
  })
)

const taxRatesLive = HttpApiBuilder.group(BillingApi, "taxRates", (handlers) =>
  Effect.gen(function* () {
    const rates = yield* TaxRates.TaxRates
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(rates.create(m, payload), (tax_rate) => ok({ tax_rate })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.TaxRateStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                rates.list(m, {
                  ...(statuses ? { status: statuses as ReadonlyArray<Lifecycle.TaxRateStatus> } : {}),
                  ...(list(q.country) ? { countries: list(q.country)! } : {}),
                  created: page.created,
                  limit: page.limit,
                  starting_after: page.starting_after,
                  ending_before: page.ending_before
                }),
                ok
              )
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(rates.get(m, path.tax_rate_id), (tax_rate) => ok({ tax_rate })))
      )
      .handle("archive", ({ params: path }) =>
        call((m) => Effect.map(rates.archive(m, path.tax_rate_id), (tax_rate) => ok({ tax_rate })))
      )
  })
)

const portalLive = HttpApiBuilder.group(BillingApi, "portal", (handlers) =>
  Effect.gen(function* () {
    const portal = yield* Portal.Portal
    return handlers
      .handle("createSession", ({ payload }) =>
        call((m) => Effect.map(portal.createSession(m, payload), (portal_session) => ok({ portal_session })))
      )
      .handle("revokeSession", ({ params }) =>
        call((m) =>
          Effect.map(portal.revokeSession(m, params.portal_session_id), (portal_session) => ok({ portal_session }))
        )
      )
      .handle("settings", () => call((m) => Effect.map(portal.settingsOf(m), ok)))
      .handle("updateSettings", ({ payload }) => call((m) => Effect.map(portal.setSettings(m, payload), ok)))
  })
)

const discountsLive = HttpApiBuilder.group(BillingApi, "discounts", (handlers) =>
  Effect.gen(function* () {
    const discounts = yield* Discounts.Discounts
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(discounts.create(m, payload), (discount) => ok({ discount })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.flatMap(
            Effect.zip(pageQuery(q), enumValues("status", list(q.status), Lifecycle.DiscountStatus.literals)),
            ([page, statuses]) =>
              Effect.map(
                discounts.list(m, {
                  ...(statuses ? { status: statuses as ReadonlyArray<Lifecycle.DiscountStatus> } : {}),
                  ...(list(q.code) ? { codes: list(q.code)! } : {}),
                  created: page.created,
                  limit: page.limit,
                  starting_after: page.starting_after,
                  ending_before: page.ending_before
                }),
                ok
              )
          )
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(discounts.get(m, path.discount_id), (discount) => ok({ discount })))
      )
      .handle("end", ({ params: path }) =>
        call((m) => Effect.map(discounts.end(m, path.discount_id), (discount) => ok({ discount })))
      )
      .handle("applyToSubscription", ({ params: path, payload }) =>
        call((m) => Effect.map(discounts.applyToSubscription(m, path.subscription_id, payload), ok))
      )
      .handle("removeFromSubscription", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            if (payload.discount_id === undefined)
              return yield* new Errors.InvalidParameter({ param: "discount_id", reason: "is required" })
            return ok(yield* discounts.removeFromSubscription(m, path.subscription_id, payload.discount_id))
          })
        )
      )
  })
)

const BEARER = /^Bearer (\S+)$/

/**
 * Authentication: the key from `Authorization: Bearer <key>` (exactly one space), then the
 * required `Request-Id`.
 *
 * @since 0.1.0
 */
export const authenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const merchants = yield* Merchants.Merchants
    return Authentication.of({
      bearer: (httpEffect) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const requestId = request.headers["request-id"] ?? ""
          const header = request.headers.authorization
          const m = header === undefined ? null : BEARER.exec(header)
          const unauthorized = new ApiErrors.Unauthorized({
            code: "unauthorizedError",
            message: ApiErrors.unauthorizedMessage,
            data: { request_id: requestId }
          })
          if (!m) return yield* Effect.fail(unauthorized)
          const auth =
            AuthMemo.recall(request, m[1]!) ??
            (yield* Effect.mapError(merchants.authenticate(m[1]!), () => unauthorized))
          if (requestId === "" || requestId.length > 255 || !/^[\x21-\x7e][\x20-\x7e]*$/.test(requestId)) {
            return yield* Effect.fail(
              new ApiErrors.InvalidParameter({
                code: "InvalidParameter",
                message: "The Request-Id header is required (1 to 255 printable characters).",
                data: { request_id: requestId, param: "Request-Id" }
              })
            )
          }
          return yield* Effect.provideService(httpEffect, CurrentMerchant, { merchant: auth.merchant, requestId })
        })
    })
  })
)

/**
 * Every handler of the API (requires the engine services).
 *
 * @since 0.1.0
 */
export const handlers = Layer.mergeAll(
  customersLive,
  catalogLive,
  checkoutLive,
  subscriptionsLive,
  paymentsLive,
  sandboxLive,
  webhooksLive,
  discountsLive,
  taxRatesLive,
  portalLive
)
