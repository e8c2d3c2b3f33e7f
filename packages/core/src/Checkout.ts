/**
 * Checkout sessions: what is sold, to whom, in which currency — every cycle it can bill bounded
 * at input — and their expiry. Paying them is {@link SessionPayments}.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Catalog from "./Catalog.js"
import * as CheckoutSession from "./CheckoutSession.js"
import type { BillingAddress, Metadata } from "./Common.js"
import * as Customers from "./Customers.js"
import * as Decimal from "./Decimal.js"
import * as Entities from "./Entities.js"
import * as Ids from "./Ids.js"
import { dt, msOf, nowOf } from "./internal/engine.js"
import { cycleAmounts, fmtMinor, invalid, must, RATE_RULE, rateInBounds } from "./internal/records.js"
import * as Lifecycle from "./Lifecycle.js"
import * as Merchants from "./Merchants.js"
import * as Money from "./Money.js"
import * as Ports from "./Ports.js"
import * as Price from "./Price.js"
import * as PriceRules from "./PriceRules.js"
import * as Pricing from "./Pricing.js"
import * as Settings from "./Settings.js"
import * as Store from "./Store.js"

/**
 * The body of `POST /api/v1/session`.
 *
 * @since 0.1.0
 */
export interface SessionInput {
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
  readonly metadata?: Metadata | undefined
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
  readonly billing_address?: BillingAddress | undefined
  readonly amount?: string | undefined
  readonly currency?: string | undefined
}

const isHttpsUrl = (s: string) => {
  if (s === "") return true
  if (s.length > 512) return false
  try {
    const u = new URL(s)
    return u.protocol === "https:" && u.hostname !== ""
  } catch {
    return false
  }
}

/**
 * The checkout service.
 *
 * @since 0.1.0
 */
export class Checkout extends Context.Service<Checkout>()("@recur/core/Checkout", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const fx = yield* Ports.FxRates
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const customers = yield* Customers.Customers
    const catalog = yield* Catalog.Catalog
    const sessions = storage.repository(Entities.checkoutSession)
    const subs = storage.repository(Entities.subscription)

    const getSessionRecord = (merchantId: string, sessionId: string) =>
      Effect.flatMap(sessions.get(merchantId, sessionId), (o) => must(o, "session", sessionId))

    const createSession = (merchantId: string, input: SessionInput) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const at = yield* nowOf(merchant)
        const mode = input.mode ?? "checkout"
        const identities = [input.payer_id, input.customer_id, input.email].filter((x) => x !== undefined)
        if (identities.length === 0)
          return yield* invalid("customer_id", "one of payer_id, customer_id and email is required")
        if (input.merchant_rate !== undefined && input.target_currency === undefined)
          return yield* invalid("merchant_rate", "requires target_currency")
        let rate: Option.Option<Decimal.Decimal> = Option.none()
        if (input.merchant_rate !== undefined) {
          const r = Decimal.parse(input.merchant_rate)
          if (Result.isFailure(r) || !rateInBounds(r.success)) return yield* invalid("merchant_rate", RATE_RULE)
          rate = Option.some(r.success)
        }
        if (input.target_currency !== undefined && Result.isFailure(Money.currency(input.target_currency)))
          return yield* invalid("target_currency", "unknown currency")
        for (const [param, url] of [
          ["terms_of_service_url", input.terms_of_service_url],
          ["privacy_policy_url", input.privacy_policy_url]
        ] as const) {
          if (url !== undefined && !isHttpsUrl(url))
            return yield* invalid(param, "must be empty or an absolute https URL of at most 512 characters")
        }
        if (input.first_source_channel !== undefined && input.first_source_channel.length > 50)
          return yield* invalid("first_source_channel", "at most 50 characters")
        if (input.total_cycles !== undefined && (!Number.isInteger(input.total_cycles) || input.total_cycles < 1))
          return yield* invalid("total_cycles", "must be a whole number ≥ 1")
        if (input.trial_policy !== undefined && ![1, 2, 3].includes(input.trial_policy))
          return yield* invalid("trial_policy", "must be 1, 2 or 3")
        const items = input.line_items ?? []
        if (mode === "checkout" && items.length !== 1)
          return yield* invalid("line_items", "exactly one line item is supported")
        if (items.length > 1) return yield* invalid("line_items", "exactly one line item is supported")
        const item = items[0]
        let quantity = 1n
        if (item?.quantity !== undefined) {
          const q = PriceRules.validateQuantity("line_items[0].quantity", item.quantity)
          if (Result.isFailure(q)) return yield* invalid(q.failure.field, q.failure.message)
          quantity = q.success
        }
        // who pays
        let customerId: string | null = null
        if (input.customer_id !== undefined) {
          const c = yield* Effect.catchTag(customers.get(merchantId, input.customer_id), "NotFound", () =>
            invalid("customer_id", "no such customer")
          )
          customerId = c.id
        } else if (input.payer_id !== undefined) {
          const found = yield* Effect.option(customers.resolve(merchantId, { payer_id: input.payer_id }))
          customerId = Option.isSome(found)
            ? found.value.value.id
            : (yield* customers
                .create(merchantId, {
                  payer_id: input.payer_id,
                  ...(input.email !== undefined ? { email: input.email } : {})
                })
                .pipe(
                  Effect.catchTag("InvalidRequest", () => customers.create(merchantId, { payer_id: input.payer_id }))
                )).id
        }
        // what is sold, and what is due now
        let currency: string
        let due: Money.Money
        let priceId: string | null = null
        let paymentMode = input.payment_mode
        if (mode === "checkout") {
          if (!item?.price_id) return yield* invalid("line_items[0].price_id", "is required")
          const pv = yield* Effect.catchTag(catalog.sellableVersion(merchantId, item.price_id), "PriceNotFound", () =>
            invalid("line_items[0].price_id", "no such price")
          )
          priceId = pv.id
          paymentMode ??= pv.billing_type === "recurring" ? "subscription" : "onetime_payment"
          if (pv.billing_type === "recurring" && paymentMode === "onetime_payment")
            return yield* invalid("payment_mode", "a recurring price needs payment_mode subscription")
          const trial = Price.trialOf(pv)
          const skipTrial =
            input.trial_policy === 3 ||
            (input.trial_policy === 2 && customerId !== null && (yield* hadTrial(merchantId, customerId)))
          due =
            Option.isSome(trial) && !skipTrial
              ? Money.times(Pricing.trialCharge(trial.value.trial, pv.currency), 1n)
              : pv.billing_dimension === "usage"
                ? Money.zero(pv.currency)
                : Pricing.rate(Price.modelOf(pv, 0), quantity, pv.currency).amount
          currency = pv.currency
        } else {
          if (input.amount === undefined || input.currency === undefined)
            return yield* invalid(
              input.amount === undefined ? "amount" : "currency",
              "amount and currency are required in mode payment"
            )
          const parsed = Money.parse(input.amount, input.currency)
          if (Result.isFailure(parsed))
            return yield* invalid(
              parsed.failure._tag === "UnknownCurrency" ? "currency" : "amount",
              parsed.failure.message
            )
          due = parsed.success
          if (!Money.isWithinBounds(due))
            return yield* invalid("amount", `must be at most ${fmtMinor(Money.MAX_AMOUNT_MINOR, input.currency)}`)
          currency = input.currency
          paymentMode ??= "onetime_payment"
        }
        // settlement currency
        let rateText: string | null = null
        let settleRate: Decimal.Decimal | null = null
        const target =
          input.target_currency !== undefined && input.target_currency !== currency ? input.target_currency : null
        if (target !== null) {
          const r = Option.isSome(rate) ? rate : yield* fx.rate(currency, target)
          if (Option.isNone(r))
            return yield* invalid("target_currency", `no exchange rate from ${currency} to ${target}`)
          if (!rateInBounds(r.value))
            return yield* invalid(
              Option.isSome(rate) ? "merchant_rate" : "target_currency",
              `the rate from ${currency} to ${target} is out of bounds: ${RATE_RULE}`
            )
          settleRate = r.value
          rateText = Decimal.format(r.value)
        }
        // every cycle this sells (each intro phase, the base price, a paid trial), as it will be
        // billed: never above the most an invoice may carry, never rounded to nothing by the rate
        const sold =
          mode === "checkout" && priceId !== null
            ? cycleAmounts(yield* catalog.sellableVersion(merchantId, priceId), quantity)
            : [due]
        for (const amount of sold) {
          const settled = settleRate !== null ? Result.getOrThrow(Money.convert(amount, settleRate, target!)) : amount
          if (!Money.isWithinBounds(settled)) {
            return yield* invalid(
              mode === "checkout" ? "line_items[0].quantity" : "amount",
              `${Money.format(amount)} ${amount.currency} a cycle${settleRate !== null ? ` (${Money.format(settled)} ${settled.currency})` : ""} is above the most one invoice may carry, ${fmtMinor(Money.MAX_AMOUNT_MINOR, settled.currency)} ${settled.currency}`
            )
          }
          if (amount.amount > 0n && settled.amount === 0n) {
            return yield* invalid(
              Option.isSome(rate) ? "merchant_rate" : "target_currency",
              `the rate turns ${Money.format(amount)} ${amount.currency} into 0 ${settled.currency}`
            )
          }
        }
        if (settleRate !== null) {
          due = Result.getOrThrow(Money.convert(due, settleRate, target!))
          currency = target!
        }
        const session_id = yield* Ids.make(Ids.prefixes.checkoutSession)
        const session = new CheckoutSession.CheckoutSession({
          session_id,
          session_url: `${settings.publicUrl}/checkout/${session_id}`,
          merchant_id: merchantId,
          status: Lifecycle.checkoutSession.initial,
          mode,
          line_items: item
            ? [
                new CheckoutSession.SessionLineItem({
                  price_id: item.price_id ?? "",
                  quantity: quantity.toString(),
                  quantity_editable: item.quantity_editable ?? false,
                  quantity_min: item.quantity_min ?? null,
                  quantity_max: item.quantity_max ?? null
                })
              ]
            : [],
          customer_id: customerId,
          payer_id: input.payer_id ?? null,
          email: input.email ?? null,
          order_id: input.order_id ?? null,
          return_url: input.return_url ?? null,
          cancel_url: input.cancel_url ?? null,
          integration_method: input.integration_method ?? "hosted",
          redirect_on_completion: input.redirect_on_completion ?? "always",
          locale: input.locale ?? null,
          payment_mode: paymentMode,
          trial_policy: input.trial_policy ?? 1,
          total_cycles: input.total_cycles ?? null,
          convert_to_continuous: input.convert_to_continuous ?? false,
          product_type: input.product_type ?? null,
          terms_of_service_url: input.terms_of_service_url ?? null,
          privacy_policy_url: input.privacy_policy_url ?? null,
          first_source_channel: input.first_source_channel ?? null,
          billing_address: input.billing_address ?? null,
          amount: Money.format(due),
          currency,
          target_currency: input.target_currency ?? null,
          merchant_rate: rateText,
          metadata: input.metadata ?? {},
          trade_id: null,
          subscription_id: null,
          expires_at: dt(at + settings.sessionTtlMs),
          created_at: dt(at),
          completed_at: null
        })
        yield* Effect.orDie(sessions.insert(session))
        return session
      }).pipe(Effect.withSpan("Checkout.createSession"))

    const getSession = (merchantId: string, sessionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const s = yield* getSessionRecord(merchantId, sessionId)
        const at = yield* nowOf(merchant)
        if (s.value.status === "open" && at >= msOf(s.value.expires_at)) {
          const expired = Lifecycle.must(CheckoutSession.move(s.value, "expire"))
          yield* Effect.orDie(Effect.ignore(sessions.update(expired, s.version)))
          return expired
        }
        return s.value
      }).pipe(Effect.withSpan("Checkout.getSession"))

    /** Whether this customer already had a trial (`trial_policy` 2). */
    const hadTrial = (merchantId: string, customerId: string) =>
      Effect.map(
        Effect.orDie(
          subs.list(merchantId, { limit: 100, filters: [{ column: "customer_id", op: "in", values: [customerId] }] })
        ),
        (p) => p.list.some((s) => s.trial_end !== null)
      )

    return { createSession, getSession, hadTrial } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
