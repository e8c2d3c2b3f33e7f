/**
 * The merchant API's request bodies — the wire form the REST adapter and the Promise facade
 * both take — and their decoding into the engine's commands. This is the one module of core
 * that names request fields: what fails here is an `InvalidParameter` naming the field, and
 * what fails past it is a domain error naming ids and states.
 *
 * @since 0.1.0
 */
import { Effect, Option, Result } from "effect"
import type * as Checkout from "./checkout/Checkout.js"
import * as Decimal from "./money/Decimal.js"
import * as Discount from "./discounts/Discount.js"
import * as Errors from "./kernel/Errors.js"
import * as Ids from "./kernel/Ids.js"
import { invalid } from "./kernel/Errors.js"
import { RATE_RULE, rateInBounds } from "./money/Money.js"
import type * as Metering from "./usage/Metering.js"
import * as Money from "./money/Money.js"
import * as PriceChanges from "./subscriptions/PriceChanges.js"
import * as PriceRules from "./catalog/PriceRules.js"
import type * as Refunds from "./refunds/Refunds.js"
import type * as Subscriptions from "./subscriptions/Subscriptions.js"

/**
 * The body of `POST /api/v1/subscription/{id}` and of its preview: strings as they arrive.
 *
 * @since 0.1.0
 */
export interface ChangeRequest {
  readonly price_id?: string | undefined
  readonly quantity?: string | undefined
  readonly effective_type?: string | undefined
  readonly proration?: string | undefined
  readonly quote_id?: string | undefined
}

/**
 * Decodes a change request for the subscription `subscriptionId` (a path id: one of another
 * shape is simply not found).
 *
 * @since 0.1.0
 */
export const changeCommand = (
  subscriptionId: string,
  body: ChangeRequest
): Effect.Effect<PriceChanges.ChangeCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const sub = Ids.SubscriptionId.makeOption(subscriptionId)
    if (Option.isNone(sub)) return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
    const effective = body.effective_type ?? "immediate"
    if (effective !== "immediate" && effective !== "end_of_period")
      return yield* invalid("effective_type", "must be immediate or end_of_period")
    const proration = body.proration ?? "immediate"
    if (proration !== "immediate" && proration !== "none")
      return yield* invalid("proration", "must be immediate or none")
    if (body.price_id === undefined && body.quantity === undefined)
      return yield* invalid("price_id", "price_id or quantity is required")
    let priceId = Option.none<Ids.PriceId>()
    if (body.price_id !== undefined) {
      priceId = Ids.PriceId.makeOption(body.price_id)
      if (Option.isNone(priceId)) return yield* invalid("price_id", "no such price")
    }
    let quantity = Option.none<bigint>()
    if (body.quantity !== undefined) {
      const q = PriceRules.validateQuantity("quantity", body.quantity)
      if (Result.isFailure(q)) return yield* invalid("quantity", q.failure.message)
      quantity = Option.some(q.success)
    }
    if (body.quote_id !== undefined && PriceChanges.quoteInstant(body.quote_id) === undefined)
      return yield* invalid("quote_id", "malformed quote id")
    return {
      subscriptionId: sub.value,
      priceId,
      quantity,
      effective,
      proration,
      quoteId: Option.fromUndefinedOr(body.quote_id)
    }
  })

/**
 * The body of `POST /api/v1/refund`.
 *
 * @since 0.1.0
 */
export interface RefundRequest {
  readonly trade_id?: string | undefined
  readonly amount?: string | undefined
  readonly reason?: string | undefined
}

const AMOUNT = /^\d{1,13}(\.\d{1,12})?$/

/**
 * Decodes a refund request; `requestKey` (the REST adapter's Request-Id) makes it idempotent.
 *
 * @since 0.1.0
 */
export const refundCommand = (
  body: RefundRequest,
  requestKey?: string
): Effect.Effect<Refunds.RefundCommand, Errors.InvalidParameter | Errors.TradeNotFound> =>
  Effect.gen(function* () {
    if (body.trade_id === undefined) return yield* invalid("trade_id", "is required")
    const tradeId = Ids.TradeId.makeOption(body.trade_id)
    if (Option.isNone(tradeId)) return yield* new Errors.TradeNotFound({ tradeId: body.trade_id })
    let amount = Option.none<Decimal.Decimal>()
    if (body.amount !== undefined) {
      const parsed = AMOUNT.test(body.amount) ? Decimal.parse(body.amount) : undefined
      if (parsed === undefined || Result.isFailure(parsed))
        return yield* invalid("amount", "must be a positive decimal amount such as 12.50")
      amount = Option.some(parsed.success)
    }
    return {
      tradeId: tradeId.value,
      amount,
      reason: Option.fromUndefinedOr(body.reason),
      requestKey: Option.fromUndefinedOr(requestKey)
    }
  })

/**
 * The body of `POST /api/v1/subscription/{id}/cancel`.
 *
 * @since 0.1.0
 */
export interface CancelRequest {
  readonly cancel_type?: string | undefined
  readonly cancel_reason?: string | undefined
}

/**
 * Decodes a cancel request for the subscription `subscriptionId`.
 *
 * @since 0.1.0
 */
export const cancelCommand = (
  subscriptionId: string,
  body: CancelRequest = {}
): Effect.Effect<Subscriptions.CancelCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const sub = Ids.SubscriptionId.makeOption(subscriptionId)
    if (Option.isNone(sub)) return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
    const when = body.cancel_type ?? "immediate"
    if (when !== "immediate" && when !== "end_of_period")
      return yield* invalid("cancel_type", "must be immediate or end_of_period")
    return { subscriptionId: sub.value, when, reason: Option.fromUndefinedOr(body.cancel_reason) }
  })

/**
 * One usage record as the API and the facade take it (`timestamp` already in Unix ms: the
 * REST adapter reads RFC 3339).
 *
 * @since 0.1.0
 */
export interface UsageRequest {
  readonly subscription_id?: string | undefined
  readonly usage_count?: number | undefined
  readonly event_id?: string | undefined
  readonly timestamp?: number | undefined
}

const usageEventOf = (
  r: UsageRequest,
  path: (field: string) => string
): Effect.Effect<Metering.UsageEvent, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    if (r.subscription_id === undefined || r.subscription_id === "")
      return yield* invalid(path("subscription_id"), "is required")
    if (r.usage_count === undefined) return yield* invalid(path("usage_count"), "is required")
    const sub = Ids.SubscriptionId.makeOption(r.subscription_id)
    if (Option.isNone(sub)) return yield* new Errors.NotFound({ resource: "subscription", id: r.subscription_id })
    return {
      subscriptionId: sub.value,
      count: r.usage_count,
      ...(r.event_id !== undefined ? { eventId: r.event_id } : {}),
      ...(r.timestamp !== undefined ? { at: r.timestamp } : {})
    }
  })

/**
 * Decodes one usage record of `POST /api/v1/subscription/{id}/usage`.
 *
 * @since 0.1.0
 */
export const usageEvent = (subscriptionId: string, body: Omit<UsageRequest, "subscription_id">) =>
  usageEventOf({ ...body, subscription_id: subscriptionId }, (field) => field)

/**
 * Decodes the records of `POST /api/v1/usage` (what a record must hold is checked here; its
 * values — counts, ids, instants — by the engine, which names the record's index).
 *
 * @since 0.1.0
 */
export const usageEvents = (records: ReadonlyArray<UsageRequest>) =>
  Effect.forEach(records, (r, i) => usageEventOf(r, (field) => `records[${i}].${field}`))

/**
 * An absolute web URL with a host, of one of `protocols`, at most `max` characters, parsed (or
 * undefined). The terms and privacy links are `https:` only (≤ 512, or empty). The redirect
 * URLs, where the hosted page sends the payer (the 303 `Location`), may also be `http:`
 * (≤ 2,048; for sandbox merchants only, which the checkout service decides, knowing the
 * merchant) and carry no credentials; `javascript:`, `data:`, scheme-relative
 * (`//evil.example`) and relative URLs never pass.
 */
const webUrl = (s: string, protocols: ReadonlyArray<string>, max: number): URL | undefined => {
  if (s.length > max || !/^https?:\/\//i.test(s)) return undefined
  try {
    const u = new URL(s)
    return protocols.includes(u.protocol) && u.hostname !== "" ? u : undefined
  } catch {
    return undefined
  }
}

const isHttpsUrl = (s: string) => s === "" || webUrl(s, ["https:"], 512) !== undefined

/**
 * An absolute http(s) URL without credentials, of at most 2048 characters: where a hosted page may send its visitor back.
 *
 * @since 0.1.0
 */
export const isRedirectUrl = (s: string) => {
  const u = webUrl(s, ["https:", "http:"], 2048)
  return u !== undefined && u.username === "" && u.password === ""
}

/**
 * Decodes `POST /api/v1/session`: who pays (one of `payer_id`, `customer_id`, `email`), one
 * line item in mode checkout or `amount` and `currency` in mode payment, the settlement
 * currency and rate, the page's URLs and texts. What the engine then refuses (a missing price,
 * a cycle above the bound, a rate that rounds to 0 …) is a `SessionRefused`.
 *
 * @since 0.1.0
 */
export const sessionCommand = (
  input: Checkout.SessionInput
): Effect.Effect<Checkout.SessionCommand, Errors.InvalidParameter> =>
  Effect.gen(function* () {
    const mode = input.mode ?? "checkout"
    if (input.payer_id === undefined && input.customer_id === undefined && input.email === undefined)
      return yield* invalid("customer_id", "one of payer_id, customer_id and email is required")
    if (input.merchant_rate !== undefined && input.target_currency === undefined)
      return yield* invalid("merchant_rate", "requires target_currency")
    let rate = Option.none<Decimal.Decimal>()
    if (input.merchant_rate !== undefined) {
      const r = Decimal.parse(input.merchant_rate)
      if (Result.isFailure(r) || !rateInBounds(r.success)) return yield* invalid("merchant_rate", RATE_RULE)
      rate = Option.some(r.success)
    }
    if (input.target_currency !== undefined && Result.isFailure(Money.currency(input.target_currency)))
      return yield* invalid("target_currency", "unknown currency")
    if (input.discount_code !== undefined) {
      if (!Discount.CODE_PATTERN.test(input.discount_code))
        return yield* invalid("discount_code", "must be 2 to 20 uppercase letters and digits")
      if (mode !== "checkout") return yield* invalid("discount_code", "applies to mode checkout only")
    }
    for (const [param, url] of [
      ["terms_of_service_url", input.terms_of_service_url],
      ["privacy_policy_url", input.privacy_policy_url]
    ] as const) {
      if (url !== undefined && !isHttpsUrl(url))
        return yield* invalid(param, "must be empty or an absolute https URL of at most 512 characters")
    }
    for (const [param, url] of [
      ["return_url", input.return_url],
      ["cancel_url", input.cancel_url]
    ] as const) {
      if (url !== undefined && !isRedirectUrl(url))
        return yield* invalid(
          param,
          "must be an absolute https URL (http for sandbox merchants) of at most 2048 characters"
        )
    }
    if (input.first_source_channel !== undefined && input.first_source_channel.length > 50)
      return yield* invalid("first_source_channel", "at most 50 characters")
    if (input.total_cycles !== undefined && (!Number.isInteger(input.total_cycles) || input.total_cycles < 1))
      return yield* invalid("total_cycles", "must be a whole number ≥ 1")
    if (input.trial_policy !== undefined && ![1, 2, 3].includes(input.trial_policy))
      return yield* invalid("trial_policy", "must be 1, 2 or 3")
    const items = input.line_items ?? []
    if (items.length > 1 || (mode === "checkout" && items.length !== 1))
      return yield* invalid("line_items", "exactly one line item is supported")
    let customerId = Option.none<Ids.CustomerId>()
    if (input.customer_id !== undefined) {
      customerId = Ids.CustomerId.makeOption(input.customer_id)
      if (Option.isNone(customerId)) return yield* invalid("customer_id", "no such customer")
    }
    let item: Option.Option<Checkout.SessionCommand["item"] extends Option.Option<infer I> ? I : never> = Option.none()
    let amount = Option.none<Money.Money>()
    if (mode === "checkout") {
      const line = items[0]!
      if (!line.price_id) return yield* invalid("line_items[0].price_id", "is required")
      const priceId = Ids.PriceId.makeOption(line.price_id)
      if (Option.isNone(priceId)) return yield* invalid("line_items[0].price_id", "no such price")
      let quantity = 1n
      if (line.quantity !== undefined) {
        const q = PriceRules.validateQuantity("line_items[0].quantity", line.quantity)
        if (Result.isFailure(q)) return yield* invalid(q.failure.field, q.failure.message)
        quantity = q.success
      }
      // the payer's bounds: each a quantity, min ≤ max, and the quantity asked for inside them
      const bound = (field: "quantity_min" | "quantity_max") => {
        const text = line[field]
        if (text === undefined || text === "") return Result.succeed(null)
        return PriceRules.validateQuantity(`line_items[0].${field}`, text)
      }
      const min = bound("quantity_min")
      if (Result.isFailure(min)) return yield* invalid(min.failure.field, min.failure.message)
      const max = bound("quantity_max")
      if (Result.isFailure(max)) return yield* invalid(max.failure.field, max.failure.message)
      if (min.success !== null && max.success !== null && min.success > max.success)
        return yield* invalid("line_items[0].quantity_min", "must not be above quantity_max")
      if (min.success !== null && quantity < min.success)
        return yield* invalid("line_items[0].quantity", `must be at least quantity_min (${min.success})`)
      if (max.success !== null && quantity > max.success)
        return yield* invalid("line_items[0].quantity", `must be at most quantity_max (${max.success})`)
      item = Option.some({
        priceId: priceId.value,
        quantity,
        editable: line.quantity_editable ?? false,
        min: min.success === null ? null : min.success.toString(),
        max: max.success === null ? null : max.success.toString()
      })
    } else {
      if (input.amount === undefined || input.currency === undefined)
        return yield* invalid(
          input.amount === undefined ? "amount" : "currency",
          "amount and currency are required in mode payment"
        )
      const parsed = Money.parse(input.amount, input.currency)
      if (Result.isFailure(parsed))
        return yield* invalid(parsed.failure._tag === "UnknownCurrency" ? "currency" : "amount", parsed.failure.message)
      amount = Option.some(parsed.success)
    }
    return {
      mode,
      customerId,
      payerId: Option.fromUndefinedOr(input.payer_id),
      email: Option.fromUndefinedOr(input.email),
      item,
      amount,
      paymentMode: Option.fromUndefinedOr(input.payment_mode),
      settlement: Option.map(Option.fromUndefinedOr(input.target_currency), (currency) => ({ currency, rate })),
      trialPolicy: input.trial_policy ?? 1,
      totalCycles: input.total_cycles ?? null,
      convertToContinuous: input.convert_to_continuous ?? false,
      orderId: input.order_id ?? null,
      metadata: input.metadata ?? {},
      discountCode: Option.fromUndefinedOr(input.discount_code),
      page: {
        return_url: input.return_url ?? null,
        cancel_url: input.cancel_url ?? null,
        integration_method: input.integration_method ?? "hosted",
        redirect_on_completion: input.redirect_on_completion ?? "always",
        locale: input.locale ?? null,
        product_type: input.product_type ?? null,
        terms_of_service_url: input.terms_of_service_url ?? null,
        privacy_policy_url: input.privacy_policy_url ?? null,
        first_source_channel: input.first_source_channel ?? null,
        billing_address: input.billing_address ?? null,
        allow_discount_codes: input.allow_discount_codes ?? false
      }
    }
  })
