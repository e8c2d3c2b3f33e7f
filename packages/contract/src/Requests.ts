/**
 * The merchant API's request bodies — the wire form the REST adapter and the Promise facade
 * both take — and their decoding into the engine's commands, which take domain types (branded
 * ids, `Money`, `Decimal`, literal unions). This is the one module that names request fields:
 * what fails here is an `InvalidParameter` naming the field, and what fails past it is a domain
 * error naming ids and states (`ErrorReplies` names the field each of those is about).
 *
 * @since 0.1.0
 */
import {
  Checkout,
  CheckoutSession,
  Common,
  Decimal,
  Discount,
  Discounts,
  Errors,
  Ids,
  type Metering,
  Money,
  Portal,
  PortalSession,
  PriceRules,
  type Refunds,
  type Subscriptions
} from "@recur/core"
import { Effect, Option, Result } from "effect"
import { type PortalQuantityRules, quantityRules } from "./PortalRequests.js"
import * as SessionLines from "./SessionLines.js"

/** A request field that does not decode: its path as the API spells it, and why. */
const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * An id a body or query references that names no object of this merchant — one of another
 * shape included: 404 `resource_not_found` naming the field, as an unknown id in the path is
 * 404 (the rule in docs/decisions.md, "Issue 32 (3)").
 */
const missing = (resource: string, id: string, param: string) => new Errors.NotFound({ resource, id, param })

/**
 * An engine call whose only possible "not found" is the object the request field `param`
 * references (a refund's `trade_id`, a portal link's `customer_id`): that `NotFound`,
 * `TradeNotFound` or `PriceNotFound` answered as a `NotFound` naming the field.
 *
 * @since 0.1.0
 */
export const referencedBy =
  (param: string) =>
  <A, E, R>(
    self: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, Errors.TradeNotFound | Errors.PriceNotFound> | Errors.NotFound, R> =>
    Effect.mapError(self, (e) =>
      e instanceof Errors.NotFound && e.param === undefined
        ? new Errors.NotFound({ resource: e.resource, id: e.id, param })
        : e instanceof Errors.TradeNotFound
          ? missing("trade", e.tradeId, param)
          : e instanceof Errors.PriceNotFound
            ? missing("price", e.priceId, param)
            : e
    ) as Effect.Effect<A, Exclude<E, Errors.TradeNotFound | Errors.PriceNotFound> | Errors.NotFound, R>

export {
  /** @since 0.1.0 */
  type ChangeRequest,
  /** @since 0.1.0 */
  changeCommand
} from "./ChangeRequests.js"

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
): Effect.Effect<Refunds.RefundCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    if (body.trade_id === undefined) return yield* invalid("trade_id", "is required")
    const tradeId = Ids.TradeId.makeOption(body.trade_id)
    if (Option.isNone(tradeId)) return yield* missing("trade", body.trade_id, "trade_id")
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
    // a batch's record names its field; the single event's id is the path's
    const field = path("subscription_id")
    if (Option.isNone(sub))
      return yield* new Errors.NotFound({
        resource: "subscription",
        id: r.subscription_id,
        ...(field !== "subscription_id" ? { param: field } : {})
      })
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
 * The body of `POST /api/v1/session`, as the API and the facade take it (decoded into core's
 * `Checkout.SessionCommand` by {@link sessionCommand}; its Schema is `RequestBodies.CreateSession`).
 *
 * @since 0.1.0
 */
export interface SessionRequest {
  readonly order_id?: string | undefined
  readonly line_items?:
    | ReadonlyArray<{
        readonly price_id?: string | undefined
        readonly quantity?: string | undefined
        readonly quantity_editable?: boolean | undefined
        readonly quantity_min?: string | undefined
        readonly quantity_max?: string | undefined
      }>
    | undefined
  readonly customer_id?: string | undefined
  readonly payer_id?: string | undefined
  readonly email?: string | undefined
  readonly mode?: "checkout" | "payment" | undefined
  readonly return_url?: string | undefined
  readonly cancel_url?: string | undefined
  readonly target_currency?: string | undefined
  readonly merchant_rate?: string | number | undefined
  readonly metadata?: Common.Metadata | undefined
  readonly integration_method?: "hosted" | "embedded" | undefined
  readonly redirect_on_completion?: "always" | "if_required" | undefined
  readonly locale?: typeof CheckoutSession.Locale.Type | undefined
  readonly payment_mode?: "onetime_payment" | "subscription" | undefined
  readonly trial_policy?: 1 | 2 | 3 | undefined
  readonly total_cycles?: number | undefined
  readonly convert_to_continuous?: boolean | undefined
  readonly product_type?: typeof CheckoutSession.ProductType.Type | undefined
  readonly terms_of_service_url?: string | undefined
  readonly privacy_policy_url?: string | undefined
  readonly first_source_channel?: string | undefined
  readonly billing_address?: Common.BillingAddress | undefined
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly discount_code?: string | undefined
  readonly allow_discount_codes?: boolean | undefined
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
  input: SessionRequest
): Effect.Effect<Checkout.SessionCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const mode = input.mode ?? "checkout"
    if (input.payer_id === undefined && input.customer_id === undefined && input.email === undefined)
      return yield* invalid("customer_id", "one of payer_id, customer_id and email is required")
    if (input.merchant_rate !== undefined && input.target_currency === undefined)
      return yield* invalid("merchant_rate", "requires target_currency")
    let rate = Option.none<Decimal.Decimal>()
    if (input.merchant_rate !== undefined) {
      const r = Decimal.parse(input.merchant_rate)
      if (Result.isFailure(r) || !Checkout.rateInBounds(r.success))
        return yield* invalid("merchant_rate", Checkout.RATE_RULE)
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
      if (url !== undefined && !CheckoutSession.isPolicyUrl(url))
        return yield* invalid(param, "must be empty or an absolute https URL of at most 512 characters")
    }
    for (const [param, url] of [
      ["return_url", input.return_url],
      ["cancel_url", input.cancel_url]
    ] as const) {
      if (url !== undefined && !CheckoutSession.isRedirectUrl(url))
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
    // mode payment sells an amount: a line item there is not read, more than one is refused
    if (mode !== "checkout" && items.length > 1)
      return yield* invalid("line_items", "mode payment takes amount and currency, not line items")
    let customerId = Option.none<Ids.CustomerId>()
    if (input.customer_id !== undefined) {
      customerId = Ids.CustomerId.makeOption(input.customer_id)
      if (Option.isNone(customerId)) return yield* missing("customer", input.customer_id, "customer_id")
    }
    let item: Checkout.SessionCommand["item"] = Option.none()
    let extraItems: Checkout.SessionCommand["extraItems"] = []
    let amount = Option.none<Money.Money>()
    if (mode === "checkout") {
      const lines = yield* SessionLines.sessionLines(items)
      item = Option.some(lines.first)
      extraItems = lines.others
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
      ...(extraItems !== undefined && extraItems.length > 0 ? { extraItems } : {}),
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

/**
 * The body of `POST /api/v1/customer-portal/auth` (its Schema is `RequestBodies.PortalSession`).
 *
 * @since 0.1.0
 */
export interface PortalSessionRequest {
  readonly customer_id?: string | undefined
  readonly return_url?: string | undefined
  readonly flow?: string | undefined
  readonly locale?: typeof CheckoutSession.Locale.Type | undefined
}

/**
 * Decodes a portal link's request into `Portal.SessionCommand`: the customer (an id of another
 * shape is simply not found), the return URL, the flow.
 *
 * @since 0.1.0
 */
export const portalSessionCommand = (
  body: PortalSessionRequest
): Effect.Effect<Portal.SessionCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    if (body.customer_id === undefined) return yield* invalid("customer_id", "is required")
    const customerId = Ids.CustomerId.makeOption(body.customer_id)
    if (Option.isNone(customerId)) return yield* missing("customer", body.customer_id, "customer_id")
    if (body.return_url !== undefined && !CheckoutSession.isRedirectUrl(body.return_url))
      return yield* invalid("return_url", "must be an absolute http(s) URL of at most 2048 characters")
    const flows: ReadonlyArray<string> = PortalSession.Flow.literals
    if (body.flow !== undefined && !flows.includes(body.flow))
      return yield* invalid("flow", `must be ${PortalSession.Flow.literals.join(" or ")}`)
    return {
      customerId: customerId.value,
      returnUrl: Option.fromUndefinedOr(body.return_url),
      flow: Option.fromUndefinedOr(body.flow as typeof PortalSession.Flow.Type | undefined),
      locale: Option.fromUndefinedOr(body.locale)
    }
  })

/**
 * The body of `POST /api/v1/portal_settings` (its Schema is `RequestBodies.PortalSettings`).
 *
 * @since 0.1.0
 */
export interface PortalSettingsRequest {
  readonly payment_method_update?: boolean | undefined
  readonly cancel?: boolean | undefined
  readonly invoice_history?: boolean | undefined
  readonly switch_prices?: ReadonlyArray<string> | undefined
  readonly adjust_quantities?: typeof PortalQuantityRules.Type | undefined
  readonly reset?: boolean | undefined
}

/**
 * Decodes a change of the portal settings into `Portal.SettingsCommand`: `reset: true` drops
 * the rest; the switch prices are at most `Portal.MAX_SWITCH_PRICES` price ids, each listed once
 * (whether each is an active recurring price of the merchant the engine checks, refusing the
 * entry by its index: {@link refusal} names it `switch_prices[i]`).
 *
 * @since 0.1.0
 */
export const portalSettingsCommand = (
  body: PortalSettingsRequest
): Effect.Effect<Portal.SettingsCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    if (body.reset === true) return { reset: true } as const
    let switchPrices = Option.none<ReadonlyArray<Ids.PriceId>>()
    if (body.switch_prices !== undefined) {
      const given = body.switch_prices
      if (given.length > Portal.MAX_SWITCH_PRICES)
        return yield* invalid("switch_prices", `may list at most ${Portal.MAX_SWITCH_PRICES} prices`)
      const ids: Array<Ids.PriceId> = []
      for (const [i, id] of given.entries()) {
        if (given.indexOf(id) !== i) return yield* invalid(`switch_prices[${i}]`, "is listed twice")
        const priceId = Ids.PriceId.makeOption(id)
        if (Option.isNone(priceId)) return yield* missing("price", id, `switch_prices[${i}]`)
        ids.push(priceId.value)
      }
      switchPrices = Option.some(ids)
    }
    return {
      reset: false,
      paymentMethodUpdate: Option.fromUndefinedOr(body.payment_method_update),
      cancel: Option.fromUndefinedOr(body.cancel),
      invoiceHistory: Option.fromUndefinedOr(body.invoice_history),
      switchPrices,
      adjustQuantities: body.adjust_quantities === undefined ? undefined : quantityRules(body.adjust_quantities)
    } as const
  })

/**
 * The body of `POST /api/v1/discounts` (its Schema is `RequestBodies.CreateDiscount`).
 *
 * @since 0.1.0
 */
export interface DiscountRequest {
  readonly name?: string | undefined
  readonly code?: string | undefined
  readonly discount_type?: string | undefined
  readonly percent_off?: number | undefined
  readonly amount_off?: string | undefined
  readonly duration?: string | undefined
  readonly duration_cycles?: number | undefined
  readonly product_ids?: ReadonlyArray<string> | undefined
  readonly max_redemptions?: number | undefined
  readonly max_redemptions_per_customer?: number | undefined
  readonly min_amount?: string | undefined
  readonly starts_at?: string | undefined
  readonly expires_at?: string | undefined
  readonly metadata?: Common.Metadata | undefined
}

const wholeIn = (param: string, value: number | undefined, min: number, max: number) =>
  value === undefined || (Number.isInteger(value) && value >= min && value <= max)
    ? Effect.succeed(Option.fromUndefinedOr(value))
    : Effect.fail(invalid(param, `must be a whole number from ${min} to ${max}`))

const instantOf = (param: string, text: string | undefined) => {
  if (text === undefined) return Effect.succeed(Option.none<number>())
  const ms = Common.parseInstant(text)
  return ms !== undefined
    ? Effect.succeed(Option.some(ms))
    : Effect.fail(invalid(param, "must be an RFC 3339 timestamp"))
}

/**
 * Decodes `POST /api/v1/discounts` into `Discounts.DiscountCommand`: a name, a code of the
 * code pattern, a percentage (whole, 1 to 100) or an amount off, the duration and its cycles,
 * the products (each once, at most `Discounts.MAX_PRODUCTS`), the redemption limits and the
 * RFC 3339 start and end. What needs the merchant's data — the amounts in its currency, its
 * products, its clock — the engine checks ({@link refusal} names the field).
 *
 * @since 0.1.0
 */
export const discountCommand = (
  body: DiscountRequest
): Effect.Effect<Discounts.DiscountCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    const name = body.name?.trim() ?? ""
    if (name === "" || name.length > 255) return yield* invalid("name", "is required (1 to 255 characters)")
    if (body.code !== undefined && !Discount.CODE_PATTERN.test(body.code))
      return yield* invalid("code", "must be 2 to 20 uppercase letters and digits")
    if (body.discount_type !== "percentage" && body.discount_type !== "fixed_amount")
      return yield* invalid("discount_type", "must be percentage or fixed_amount")
    let off: Discounts.DiscountCommand["off"]
    if (body.discount_type === "percentage") {
      if (body.percent_off === undefined) return yield* invalid("percent_off", "is required for a percentage")
      if (body.amount_off !== undefined) return yield* invalid("amount_off", "is only for a fixed_amount")
      yield* wholeIn("percent_off", body.percent_off, 1, 100)
      off = { type: "percentage", percent: body.percent_off }
    } else {
      if (body.amount_off === undefined) return yield* invalid("amount_off", "is required for a fixed_amount")
      if (body.percent_off !== undefined) return yield* invalid("percent_off", "is only for a percentage")
      off = { type: "fixed_amount", amount: body.amount_off }
    }
    const duration = body.duration ?? "once"
    if (duration !== "once" && duration !== "repeating" && duration !== "forever")
      return yield* invalid("duration", "must be once, repeating or forever")
    if (duration === "repeating" && body.duration_cycles === undefined)
      return yield* invalid("duration_cycles", "is required when duration is repeating")
    if (duration !== "repeating" && body.duration_cycles !== undefined)
      return yield* invalid("duration_cycles", "is only for a repeating duration")
    const cycles = yield* wholeIn("duration_cycles", body.duration_cycles, 1, Discounts.MAX_CYCLES)
    if (body.product_ids !== undefined && body.product_ids.length > Discounts.MAX_PRODUCTS)
      return yield* invalid("product_ids", `at most ${Discounts.MAX_PRODUCTS} values`)
    const productIds: Array<Ids.ProductId> = []
    for (const [i, id] of [...new Set(body.product_ids ?? [])].entries()) {
      const productId = Ids.ProductId.makeOption(id)
      if (Option.isNone(productId)) return yield* missing("product", id, `product_ids[${i}]`)
      productIds.push(productId.value)
    }
    const maxRedemptions = yield* wholeIn("max_redemptions", body.max_redemptions, 1, Discounts.MAX_REDEMPTIONS)
    const maxRedemptionsPerCustomer = yield* wholeIn(
      "max_redemptions_per_customer",
      body.max_redemptions_per_customer,
      1,
      Discounts.MAX_REDEMPTIONS
    )
    const startsAt = yield* instantOf("starts_at", body.starts_at)
    const expiresAt = yield* instantOf("expires_at", body.expires_at)
    if (Option.isSome(startsAt) && Option.isSome(expiresAt) && expiresAt.value <= startsAt.value)
      return yield* invalid("expires_at", "must be after starts_at")
    return {
      name,
      code: Option.fromUndefinedOr(body.code),
      off,
      duration:
        duration === "repeating" && Option.isSome(cycles)
          ? { type: "repeating", cycles: cycles.value }
          : { type: duration === "forever" ? "forever" : "once" },
      productIds,
      maxRedemptions,
      maxRedemptionsPerCustomer,
      minAmount: Option.fromUndefinedOr(body.min_amount),
      startsAt,
      expiresAt,
      metadata: body.metadata ?? {}
    }
  })

/**
 * Decodes the body of `POST /api/v1/subscription/{id}/discount`: one of `discount_id` and
 * `discount_code`.
 *
 * @since 0.1.0
 */
export const discountRef = (body: {
  readonly discount_id?: string | undefined
  readonly discount_code?: string | undefined
}): Effect.Effect<Discounts.DiscountRef, Errors.InvalidParameter> =>
  body.discount_id !== undefined && body.discount_code === undefined
    ? Effect.succeed({ discountId: body.discount_id })
    : body.discount_code !== undefined && body.discount_id === undefined
      ? Effect.succeed({ code: body.discount_code })
      : Effect.fail(invalid("discount_id", "one of discount_id and discount_code is required"))

/** The request field each refused part of a command is about, and the rule's words if the API's differ. */
const refusedFields: {
  readonly [K in Errors.CommandRefused["part"]]: (e: Errors.CommandRefused) => string
} = {
  discountProduct: (e) => `product_ids[${e.index}]`,
  discountAmountOff: () => "amount_off",
  discountMinAmount: () => "min_amount",
  discountExpiry: () => "expires_at",
  discountId: () => "discount_id",
  discountCode: () => "discount_code",
  switchPrices: () => "switch_prices",
  switchPrice: (e) => `switch_prices[${e.index}]`,
  portalFlow: () => "flow"
}

/** The kind of object each part references, when the engine found none. */
const refusedResources: { readonly [K in Errors.CommandRefused["part"]]?: string } = {
  discountProduct: "product",
  discountId: "discount",
  discountCode: "discount",
  switchPrice: "price"
}

/** A price rule's issue as the request field it is about (`price_plan.price_plan_tiers[2].due_price`). */
const priceField = (i: PriceRules.Issue): string =>
  i.tier === undefined
    ? i.field
    : `${i.tier.list === "price_plan_tiers" ? "price_plan.price_plan_tiers" : i.tier.list}[${i.tier.index}].${i.field}`

/**
 * A part of a decoded command the engine refused (`Errors.CommandRefused`), as the
 * `InvalidParameter` naming the request field it came from (`product_ids[1]`,
 * `switch_prices[0]`, `expires_at`); a price that breaks the catalog's rules
 * (`PriceRules.PriceRuleViolation`) as the `InvalidParameter` naming its first field at fault,
 * with every issue by its request field (`usage_tiers[1].min`).
 *
 * @since 0.1.0
 */
export const refusal = (
  e: Errors.CommandRefused | PriceRules.PriceRuleViolation
): Errors.InvalidParameter | Errors.NotFound =>
  e._tag === "PriceRuleViolation"
    ? new Errors.InvalidParameter({
        param: priceField(e.issues[0]),
        reason: e.issues[0].message,
        issues: e.issues.map((i) => ({ field: priceField(i), message: i.message }))
      })
    : e.missing === true
      ? missing(refusedResources[e.part] ?? "object", e.id ?? "", refusedFields[e.part](e))
      : invalid(refusedFields[e.part](e), e.part === "discountExpiry" ? "must be after starts_at" : e.detail)

type Refused = Errors.CommandRefused | PriceRules.PriceRuleViolation

/**
 * An engine call on a decoded command or a price, its `CommandRefused` or `PriceRuleViolation`
 * answered as the request field's `InvalidParameter` ({@link refusal}).
 *
 * @since 0.1.0
 */
export const refusedAsParameter = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, Refused> | Errors.InvalidParameter | Errors.NotFound, R> =>
  Effect.mapError(self, (e) =>
    e instanceof Errors.CommandRefused || e instanceof PriceRules.PriceRuleViolation ? refusal(e) : e
  ) as Effect.Effect<A, Exclude<E, Refused> | Errors.InvalidParameter | Errors.NotFound, R>
