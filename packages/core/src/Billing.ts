/**
 * The money path, in-process and exactly once: checkout sessions and their payment, the first
 * invoice and the subscription it starts, renewals, trials, dunning, reconciliation of unknown
 * outcomes, the worker and sandbox clocks.
 *
 * Every change is one transaction that also writes its events to the outbox. A charge is made
 * between two transactions: the first records the trade as `processing` (and the invoice as
 * `pending`), the gateway is called with the trade id (+ attempt) as idempotency key, and the
 * second applies the outcome. A crash in between leaves a `processing` trade that
 * reconciliation or a retried work item resumes with the same key, so nothing is charged twice
 * and no cycle is billed twice (the invoice table's unique cycle key).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as BillingPeriod from "./BillingPeriod.js"
import * as CheckoutSession from "./CheckoutSession.js"
import { BillingAddress, Discounts, type Metadata } from "./Common.js"
import * as Customers from "./Customers.js"
import * as Catalog from "./Catalog.js"
import * as Decimal from "./Decimal.js"
import * as Entities from "./Entities.js"
import * as Errors from "./Errors.js"
import * as Ids from "./Ids.js"
import { dt, emit, emitAll, emitMany, knownMerchant, laneOf, msOf, nowOf, pending as pendingEvent } from "./internal/engine.js"
import { pageErrors } from "./internal/paging.js"
import * as Invoice from "./Invoice.js"
import * as Invoicing from "./Invoicing.js"
import * as Lifecycle from "./Lifecycle.js"
import * as Merchant from "./Merchant.js"
import * as Merchants from "./Merchants.js"
import * as Webhooks from "./Webhooks.js"
import * as Money from "./Money.js"
import * as Ports from "./Ports.js"
import * as Price from "./Price.js"
import * as PriceRules from "./PriceRules.js"
import * as Pricing from "./Pricing.js"
import * as Store from "./Store.js"
import * as Subscription from "./Subscription.js"
import * as Trade from "./Trade.js"

const DAY = 86_400_000

/**
 * Engine settings (defaults in {@link defaultSettings}).
 *
 * @since 0.1.0
 */
export class Settings extends Context.Service<
  Settings,
  {
    /** Public base URL of the REST adapter: session pages live at `<publicUrl>/checkout/<id>`. */
    readonly publicUrl: string
    /** Dunning retries, as offsets from the first failed renewal (default 1, 3, 5 and 7 days). */
    readonly retryScheduleMs: ReadonlyArray<number>
    readonly sessionTtlMs: number
    readonly incompleteExpiryMs: number
    readonly trialNoticeMs: number
    readonly reconcileAfterMs: number
  }
>()("@recur/core/Billing/Settings") {}

/**
 * The defaults: 4 retries over 7 days, sessions live 24 h, incomplete subscriptions 23 h,
 * the trial notice 3 days before the end.
 *
 * @since 0.1.0
 */
export const defaultSettings: Settings["Service"] = {
  publicUrl: "http://localhost:4000",
  retryScheduleMs: [1 * DAY, 3 * DAY, 5 * DAY, 7 * DAY],
  sessionTtlMs: DAY,
  incompleteExpiryMs: 23 * 3_600_000,
  trialNoticeMs: 3 * DAY,
  reconcileAfterMs: 60_000
}

/**
 * Settings as a layer.
 *
 * @since 0.1.0
 */
export const layerSettings = (overrides: Partial<Settings["Service"]> = {}) => Layer.succeed(Settings, { ...defaultSettings, ...overrides })

/**
 * The body of `POST /api/v1/session`.
 *
 * @since 0.1.0
 */
export interface SessionInput {
  readonly order_id?: string | undefined
  readonly line_items?: ReadonlyArray<{
    readonly price_id?: string | undefined
    readonly quantity?: string | undefined
    readonly quantity_editable?: boolean | undefined
    readonly quantity_min?: string | undefined
    readonly quantity_max?: string | undefined
  }> | undefined
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

/**
 * The result of paying a session (or of any charge the engine makes).
 *
 * @since 0.1.0
 */
export interface PaymentResult {
  readonly status: "succeeded" | "requires_action" | "failed" | "processing"
  readonly trade: Trade.Trade
  readonly subscription: Option.Option<Subscription.Subscription>
  readonly redirect_url: Option.Option<string>
  readonly error: Option.Option<{ readonly code: string; readonly message: string }>
}

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

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

const fmtMinor = (amount: bigint, currency: string) => Money.format(Money.make(amount, currency))

/**
 * The billing engine.
 *
 * @since 0.1.0
 */
export class Billing extends Context.Service<Billing>()("@recur/core/Billing", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const gateway = yield* Ports.PaymentGateway
    const fx = yield* Ports.FxRates
    const taxes = yield* Ports.TaxCalculator
    const settings = yield* Settings
    const merchants = yield* Merchants.Merchants
    const webhooks = yield* Webhooks.Webhooks
    const customers = yield* Customers.Customers
    const catalog = yield* Catalog.Catalog
    const sessions = storage.repository(Entities.checkoutSession)
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const versions = storage.repository(Entities.priceVersion)
    const merchantsRepo = storage.repository(Entities.merchant)

    const must = <A>(o: Option.Option<Store.Versioned<A>>, resource: string, id: string) =>
      Option.match(o, { onNone: () => Effect.fail(new Errors.NotFound({ resource, id })), onSome: Effect.succeed })

    const moveOrConflict = <S extends string, T extends string>(machine: Lifecycle.Machine<S, T>, resource: string, id: string, from: S, trigger: T) =>
      Result.match(Lifecycle.transition(machine, from, trigger), {
        onFailure: (e) => Effect.fail(new Errors.StateConflict({ resource, id, state: e.from, reason: `cannot ${e.trigger}` })),
        onSuccess: Effect.succeed
      })

    const version = (merchantId: string, id: string) => Effect.flatMap(versions.get(merchantId, id), (o) => Effect.orDie(must(o, "price_version", id))).pipe(Effect.map((v) => v.value))

    // ---------------------------------------------------------------- documents

    const newTrade = (input: {
      readonly merchant: Merchant.Merchant
      readonly amount: Money.Money
      readonly customer_id: string
      readonly order_id: string | null
      readonly payment_mode: "onetime_payment" | "subscription"
      readonly order_type: "initial" | "renewal" | "upgrade" | "one_time"
      readonly session: Option.Option<CheckoutSession.CheckoutSession>
      readonly line: Trade.LineItem | null
      readonly tax: Money.Money
      readonly metadata: Metadata
      readonly at: number
    }) =>
      Effect.map(Ids.make(Ids.prefixes.trade), (trade_id) =>
        new Trade.Trade({
          trade_id,
          access_no: null,
          merchant_id: input.merchant.merchant_id,
          amount: Money.format(input.amount),
          currency: input.amount.currency,
          customer_id: input.customer_id,
          callback_url: null,
          order_id: input.order_id,
          last_trans_id: null,
          paid_at: null,
          payment_mode: input.payment_mode,
          payment_token: null,
          payment_method: null,
          payment_channel: "card",
          return_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.return_url }),
          trade_status: "requires_payment_method",
          txn_time: null,
          created_at: dt(input.at),
          refund_status: "no_refund",
          total_refunded_amount: fmtMinor(0n, input.amount.currency),
          session_id: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_id }),
          session_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_url }),
          order_type: input.order_type,
          closed_at: null,
          closed_reason: null,
          first_source_channel: Option.match(input.session, { onNone: () => null, onSome: (s) => s.first_source_channel }),
          last_source_channel: null,
          tax_amount: Money.format(input.tax),
          metadata: input.metadata,
          last_payment_error: null,
          next_action: null,
          refer_info: null,
          line_items: input.line ? [input.line] : [],
          discounts: new Discounts({ current_period: [] }, { disableChecks: true }),
          billing_address: Option.match(input.session, { onNone: () => null, onSome: (s) => s.billing_address }),
          payment_info: null
        }, { disableChecks: true })
      )

    const newInvoice = (input: {
      readonly merchant_id: string
      readonly draft: Invoicing.Draft
      readonly trade_id: string | null
      readonly subscription_id: string | null
      readonly price_id: string | null
      readonly price_version_id: string | null
      readonly customer_id: string
      readonly order_id: string | null
      readonly status: Lifecycle.InvoiceStatus
      readonly at: number
    }) =>
      Effect.map(Ids.make(Ids.prefixes.invoice), (invoice_id) =>
        new Invoice.Invoice({
          invoice_id,
          merchant_id: input.merchant_id,
          trade_id: input.trade_id,
          subscription_id: input.subscription_id,
          price_id: input.price_id,
          customer_id: input.customer_id,
          order_id: input.order_id,
          original_invoice_id: Option.getOrNull(input.draft.original_invoice_id),
          refund_order_id: null,
          amount: Money.format(input.draft.total),
          currency: input.draft.currency,
          biz_status: input.status,
          invoice_type: input.draft.invoice_type,
          paid_at: input.status === "success" ? dt(input.at) : null,
          cycle_index: input.draft.cycle_index,
          created_at: dt(input.at),
          metadata: {},
          Discounts: new Discounts({
            current_period: input.draft.discounts.map((d) => ({ discount_id: d.discount_id, discount_code: d.discount_code, discount_amount: Money.format(d.amount) }))
          }),
          price_version_id: input.price_version_id,
          tax_amount: Money.format(input.draft.tax)
        }, { disableChecks: true })
      )

    const taxFor = (merchantId: string, customerId: string) => (taxable: Money.Money) => taxes.tax({ merchant_id: merchantId, customer_id: customerId, taxable })

    /** A pure draft plus tax from the injected calculator (tax is an effect, so it is applied here). */
    const withTax = (draft: Invoicing.Draft, merchantId: string, customerId: string, creditBalance?: Money.Money) =>
      Effect.gen(function* () {
        const discounted = draft.subtotal.amount - draft.discounts.reduce((a, d) => a + d.amount.amount, 0n)
        const tax = yield* taxFor(merchantId, customerId)(Money.make(discounted > 0n ? discounted : 0n, draft.currency))
        return Invoicing.total({
          invoice_type: draft.invoice_type,
          cycle_index: draft.cycle_index,
          currency: draft.currency,
          lines: draft.lines,
          discounts: [],
          tax: () => tax,
          ...(creditBalance ? { creditBalance } : {}),
          ...(Option.isSome(draft.original_invoice_id) ? { original_invoice_id: draft.original_invoice_id.value } : {})
        })
      })

    /** Converts a draft's amounts with a captured rate (1 primary = rate target). */
    const convertDraft = (draft: Invoicing.Draft, rate: string | null, target: string): Invoicing.Draft => {
      if (rate === null || draft.currency === target) return draft
      const r = Result.getOrThrow(Decimal.parse(rate))
      const conv = (m: Money.Money) => Result.getOrThrow(Money.convert(m, r, target))
      return {
        ...draft,
        currency: target,
        lines: draft.lines.map((l) => ({ ...l, amount: conv(l.amount) })),
        subtotal: conv(draft.subtotal),
        discounts: draft.discounts.map((d) => ({ ...d, amount: conv(d.amount) })),
        tax: conv(draft.tax),
        creditApplied: conv(draft.creditApplied),
        total: Money.make(draft.lines.reduce((a, l) => a + conv(l.amount).amount, 0n), target)
      }
    }

    // ---------------------------------------------------------------- subscriptions helpers

    const scheduleOf = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion): BillingPeriod.Schedule => ({
      anchor: rec.anchor ?? 0,
      unit: pv.price_plan?.billing_cycle_unit ?? "customer-initiated",
      count: pv.price_plan?.billing_cycle_count ?? 1,
      totalCycles: rec.subscription.total_cycles ?? undefined
    })

    /** Paid cycles before `cycleIndex` (selects intro phases and counts fixed terms). */
    const paidIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) => cycleIndex - (rec.trial_end !== null ? 1 : 0)
    /** The period index of a cycle relative to the anchor. */
    const periodIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) => cycleIndex - rec.anchor_cycle

    const saveSub = (rec: Entities.SubscriptionRecord, expected: number, at: number) =>
      Effect.orDie(subs.update({ ...rec, subscription: new Subscription.Subscription({ ...rec.subscription, updated_at: dt(at) }, { disableChecks: true }) }, expected))

    const subEvents = (merchant_id: string, rec: Entities.SubscriptionRecord, types: ReadonlyArray<Lifecycle.EventType>, at: number) =>
      emitAll(storage, types, { merchant_id, business_id: rec.subscription.id, schema: Subscription.Subscription, data: rec.subscription, at })

    const schedule = (merchant: Merchant.Merchant, kind: string, subject_id: string, due_at: number) =>
      storage.workQueue.schedule({ lane: laneOf(merchant), merchant_id: merchant.merchant_id, kind, subject_id, due_at })

    // ---------------------------------------------------------------- checkout

    const getSessionRecord = (merchantId: string, sessionId: string) => Effect.flatMap(sessions.get(merchantId, sessionId), (o) => must(o, "session", sessionId))

    const createSession = (merchantId: string, input: SessionInput) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const at = yield* nowOf(merchant)
        const mode = input.mode ?? "checkout"
        const identities = [input.payer_id, input.customer_id, input.email].filter((x) => x !== undefined)
        if (identities.length === 0) return yield* invalid("customer_id", "one of payer_id, customer_id and email is required")
        if (input.merchant_rate !== undefined && input.target_currency === undefined) return yield* invalid("merchant_rate", "requires target_currency")
        let rate: Option.Option<Decimal.Decimal> = Option.none()
        if (input.merchant_rate !== undefined) {
          const r = Decimal.parse(input.merchant_rate)
          if (Result.isFailure(r) || !Decimal.isPositive(r.success)) return yield* invalid("merchant_rate", "must be a number greater than 0")
          rate = Option.some(r.success)
        }
        if (input.target_currency !== undefined && Result.isFailure(Money.currency(input.target_currency))) return yield* invalid("target_currency", "unknown currency")
        for (const [param, url] of [["terms_of_service_url", input.terms_of_service_url], ["privacy_policy_url", input.privacy_policy_url]] as const) {
          if (url !== undefined && !isHttpsUrl(url)) return yield* invalid(param, "must be empty or an absolute https URL of at most 512 characters")
        }
        if (input.first_source_channel !== undefined && input.first_source_channel.length > 50) return yield* invalid("first_source_channel", "at most 50 characters")
        if (input.total_cycles !== undefined && (!Number.isInteger(input.total_cycles) || input.total_cycles < 1)) return yield* invalid("total_cycles", "must be a whole number ≥ 1")
        if (input.trial_policy !== undefined && ![1, 2, 3].includes(input.trial_policy)) return yield* invalid("trial_policy", "must be 1, 2 or 3")
        const items = input.line_items ?? []
        if (mode === "checkout" && items.length !== 1) return yield* invalid("line_items", "exactly one line item is supported")
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
          const c = yield* Effect.catchTag(customers.get(merchantId, input.customer_id), "NotFound", () => invalid("customer_id", "no such customer"))
          customerId = c.id
        } else if (input.payer_id !== undefined) {
          const found = yield* Effect.option(customers.resolve(merchantId, { payer_id: input.payer_id }))
          customerId = Option.isSome(found)
            ? found.value.value.id
            : (yield* customers.create(merchantId, { payer_id: input.payer_id, ...(input.email !== undefined ? { email: input.email } : {}) }).pipe(
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
          const pv = yield* Effect.catchTag(catalog.sellableVersion(merchantId, item.price_id), "NotFound", () => invalid("line_items[0].price_id", "no such price"))
          priceId = pv.id
          paymentMode ??= pv.billing_type === "recurring" ? "subscription" : "onetime_payment"
          if (pv.billing_type === "recurring" && paymentMode === "onetime_payment") return yield* invalid("payment_mode", "a recurring price needs payment_mode subscription")
          const trial = Price.trialOf(pv)
          const skipTrial = input.trial_policy === 3 || (input.trial_policy === 2 && customerId !== null && (yield* hadTrial(merchantId, customerId)))
          due =
            Option.isSome(trial) && !skipTrial
              ? Money.times(Pricing.trialCharge(trial.value.trial, pv.currency), 1n)
              : pv.billing_dimension === "usage"
                ? Money.zero(pv.currency)
                : Pricing.rate(Price.modelOf(pv, 0), quantity, pv.currency).amount
          currency = pv.currency
        } else {
          if (input.amount === undefined || input.currency === undefined) return yield* invalid(input.amount === undefined ? "amount" : "currency", "amount and currency are required in mode payment")
          const parsed = Money.parse(input.amount, input.currency)
          if (Result.isFailure(parsed)) return yield* invalid(parsed.failure._tag === "UnknownCurrency" ? "currency" : "amount", parsed.failure.message)
          due = parsed.success
          currency = input.currency
          paymentMode ??= "onetime_payment"
        }
        // settlement currency
        let rateText: string | null = null
        if (input.target_currency !== undefined && input.target_currency !== currency) {
          const r = Option.isSome(rate) ? rate : yield* fx.rate(currency, input.target_currency)
          if (Option.isNone(r)) return yield* invalid("target_currency", `no exchange rate from ${currency} to ${input.target_currency}`)
          due = Result.getOrThrow(Money.convert(due, r.value, input.target_currency))
          rateText = Decimal.format(r.value)
          currency = input.target_currency
        }
        const session_id = yield* Ids.make(Ids.prefixes.checkoutSession)
        const session = new CheckoutSession.CheckoutSession({
          session_id,
          session_url: `${settings.publicUrl}/checkout/${session_id}`,
          merchant_id: merchantId,
          status: "open",
          mode,
          line_items: item
            ? [new CheckoutSession.SessionLineItem({ price_id: item.price_id ?? "", quantity: quantity.toString(), quantity_editable: item.quantity_editable ?? false, quantity_min: item.quantity_min ?? null, quantity_max: item.quantity_max ?? null })]
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
      }).pipe(Effect.withSpan("Billing.createSession"))

    const getSession = (merchantId: string, sessionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const s = yield* getSessionRecord(merchantId, sessionId)
        const at = yield* nowOf(merchant)
        if (s.value.status === "open" && at >= msOf(s.value.expires_at)) {
          const expired = new CheckoutSession.CheckoutSession({ ...s.value, status: "expired" })
          yield* Effect.orDie(Effect.ignore(sessions.update(expired, s.version)))
          return expired
        }
        return s.value
      }).pipe(Effect.withSpan("Billing.getSession"))

    /** Whether this customer already had a trial (trial_policy 2). */
    const hadTrial = (merchantId: string, customerId: string) =>
      Effect.map(Effect.orDie(subs.list(merchantId, { limit: 100, filters: [{ column: "customer_id", op: "in", values: [customerId] }] })), (p) =>
        p.list.some((s) => s.trial_end !== null)
      )

    const paySession = (merchantId: string, sessionId: string, card: Ports.CardInput): Effect.Effect<PaymentResult, Errors.NotFound | Errors.InvalidParameter | Errors.InvalidRequest | Errors.StateConflict | Errors.DuplicateResource> =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const session = yield* getSession(merchantId, sessionId)
        if (session.status !== "open") return yield* new Errors.StateConflict({ resource: "session", id: sessionId, state: session.status, reason: "the session cannot be paid" })
        if (!Ports.luhnValid(card.number)) return yield* invalid("card_number", "the card number is invalid")
        const at = yield* nowOf(merchant)
        // a retry of a failed payment reuses the session's trade with a new attempt
        if (session.trade_id !== null) {
          const existing = yield* Effect.flatMap(trades.get(merchantId, session.trade_id), (o) => Effect.orDie(must(o, "trade", session.trade_id!)))
          const status = existing.value.trade.trade_status
          if (status === "succeeded") return yield* new Errors.StateConflict({ resource: "session", id: sessionId, state: "complete", reason: "already paid" })
          if (status === "processing" && existing.value.trade.next_action === null) {
            // an earlier attempt's outcome is unknown (a crash, a timeout): ask the gateway first
            const known = yield* reconcileTrade(merchantId, session.trade_id)
            // the gateway never saw that charge: the card just submitted is a fresh attempt
            if (known.status === "failed" && Option.exists(known.error, (e) => e.code === "no_such_charge")) return yield* paySession(merchantId, sessionId, card)
            return known
          }
          const attempt = existing.value.attempts + 1
          const retried = yield* storage.withTransaction(
            Effect.gen(function* () {
              const moved = yield* moveOrConflict(Lifecycle.trade, "trade", existing.value.trade.trade_id, status === "processing" ? "payment_failed" : status, "submit_payment")
              const trade = new Trade.Trade({ ...existing.value.trade, trade_status: moved.to, last_payment_error: null, next_action: null }, { disableChecks: true })
              yield* Effect.orDie(trades.update({ ...existing.value, trade, attempts: attempt }, existing.version))
              yield* schedule(merchant, "reconcile", trade.trade_id, at + settings.reconcileAfterMs)
              return trade
            })
          )
          const outcome = yield* gateway.charge({ trade_id: retried.trade_id, attempt, merchant_id: merchantId, amount: Result.getOrThrow(Money.parse(retried.amount, retried.currency)), source: { _tag: "Card", card }, off_session: false })
          return yield* applyOutcome(merchantId, retried.trade_id, outcome)
        }
        const first = yield* storage.withTransaction(
          Effect.gen(function* () {
            let customerId = session.customer_id
            if (customerId === null) {
              const email = session.email ?? card.name ?? undefined
              customerId = (yield* customers.create(merchantId, { email: email ?? `${sessionId}@checkout.invalid` })).id
            }
            const item = session.line_items[0]
            const pv = session.mode === "checkout" && item ? yield* catalog.sellableVersion(merchantId, item.price_id) : null
            const quantity = item ? BigInt(item.quantity) : 1n
            let amount = Result.getOrThrow(Money.parse(session.amount ?? "0", session.currency))
            const trialPossible = pv !== null && pv.billing_type === "recurring" && Option.isSome(Price.trialOf(pv)) && session.trial_policy !== 3 && !(session.trial_policy === 2 && (yield* hadTrial(merchantId, customerId)))
            const firstDraft = pv && pv.billing_type === "recurring"
              ? yield* withTax(convertDraft(
                  trialPossible
                    ? Result.getOrThrow(Invoicing.cycle({ invoice_type: "trial", price: pv, cycle_index: 0, quantity, existing: [] }))
                    : Result.getOrThrow(Invoicing.cycle({ invoice_type: "initial", price: pv, cycle_index: 0, paidCycles: 0, quantity, usage: 0n, existing: [] })),
                  session.merchant_rate,
                  session.currency
                ), merchantId, customerId)
              : undefined
            if (firstDraft) amount = firstDraft.total
            const trade = yield* newTrade({
              merchant,
              amount,
              customer_id: customerId,
              order_id: session.order_id,
              payment_mode: session.payment_mode,
              order_type: pv?.billing_type === "recurring" ? "initial" : "one_time",
              session: Option.some(session),
              line: pv
                ? new Trade.LineItem({ id: pv.price_version_id, title: pv.price_name, price: Money.format(amount), price_id: pv.id, quantity: quantity.toString(), sku: pv.merchant_price_id ?? "", vendor: merchant.name, cycle_unit: pv.price_plan?.billing_cycle_unit ?? "" })
                : null,
              tax: firstDraft ? firstDraft.tax : Money.zero(session.currency),
              metadata: session.metadata,
              at
            })
            let subscriptionId: string | null = null
            let invoiceId: string | null = null
            if (pv && pv.billing_type === "recurring" && firstDraft) {
              const sub_id = yield* Ids.make(Ids.prefixes.subscription)
              subscriptionId = sub_id
              const rec: Entities.SubscriptionRecord = {
                merchant_id: merchantId,
                anchor: null,
                trial_end: trialPossible ? BillingPeriod.trialEnd(at, Option.getOrThrow(Price.trialOf(pv)).period) : null,
                payment_token: null,
                scheduled_price_version_id: null,
                dunning_attempts: 0,
                accrued_usage: "0",
                fx_rate: session.merchant_rate,
                currency: session.currency,
                convert_to_continuous: session.convert_to_continuous,
                paused_at: null,
                anchor_cycle: 0,
                subscription: new Subscription.Subscription({
                  id: sub_id,
                  customer_id: customerId,
                  email: session.email,
                  cancel_reason: null,
                  sub_merchant_id: null,
                  status: "init",
                  price_id: pv.id,
                  current_period_start: null,
                  current_period_end: null,
                  next_invoice_date: null,
                  created_at: dt(at),
                  updated_at: dt(at),
                  cancel_at: null,
                  order_id: session.order_id,
                  source_trade_id: trade.trade_id,
                  price_type: pv.price_type,
                  price_version_id: pv.price_version_id,
                  first_source_channel: session.first_source_channel,
                  last_source_channel: null,
                  quantity: quantity.toString(),
                  quantity_unit: pv.quantity_unit,
                  payment_timing: pv.payment_timing,
                  billing_dimension: pv.billing_dimension,
                  quantity_tier_type: pv.quantity_tier_type,
                  price_tier_type: pv.price_tier_type,
                  usage_amount: pv.usage_amount,
                  merchant_price_id: pv.merchant_price_id,
                  cycle_index: 0,
                  total_cycles: session.total_cycles,
                  metadata: session.metadata,
                  quantity_tiers: pv.quantity_tiers,
                  usage_tiers: pv.usage_tiers,
                  pending_change: null,
                  billing_cycle_unit: pv.price_plan?.billing_cycle_unit ?? "customer-initiated",
                  cancel_at_period_end: false,
                  credit_balance: fmtMinor(0n, session.currency)
                })
              }
              yield* Effect.orDie(subs.insert(rec))
              const inv = yield* newInvoice({ merchant_id: merchantId, draft: firstDraft, trade_id: trade.trade_id, subscription_id: sub_id, price_id: pv.id, price_version_id: pv.price_version_id, customer_id: customerId, order_id: session.order_id, status: "pending", at })
              yield* Effect.orDie(invoices.insert(inv))
              invoiceId = inv.invoice_id
            }
            const processing = new Trade.Trade({ ...trade, trade_status: "processing" }, { disableChecks: true })
            yield* Effect.orDie(trades.insert({ trade: processing, attempts: 1, invoice_id: invoiceId, subscription_id: subscriptionId }))
            yield* emit(storage, { merchant_id: merchantId, type: "v2.trades.created", business_id: trade.trade_id, schema: Trade.Trade, data: trade, at })
            const current = yield* getSessionRecord(merchantId, sessionId)
            yield* Effect.orDie(sessions.update(new CheckoutSession.CheckoutSession({ ...current.value, customer_id: customerId, trade_id: trade.trade_id, subscription_id: subscriptionId }), current.version))
            // if this process dies before the outcome is recorded, reconciliation asks the gateway
            yield* schedule(merchant, "reconcile", trade.trade_id, at + settings.reconcileAfterMs)
            return processing
          })
        )
        const outcome = yield* gateway.charge({ trade_id: first.trade_id, attempt: 1, merchant_id: merchantId, amount: Result.getOrThrow(Money.parse(first.amount, first.currency)), source: { _tag: "Card", card }, off_session: false })
        return yield* applyOutcome(merchantId, first.trade_id, outcome)
      }).pipe(Effect.withSpan("Billing.paySession"))

    // ---------------------------------------------------------------- outcomes

    /** Starts a subscription's first period after its first payment. */
    const startSubscription = (merchant: Merchant.Merchant, rec: Entities.SubscriptionRecord, at: number, token: string | null) =>
      Effect.gen(function* () {
        const pv = yield* version(merchant.merchant_id, rec.subscription.price_version_id)
        const withTrial = rec.trial_end !== null
        const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, rec.subscription.status, withTrial ? "first_payment_succeeded_with_trial" : "first_payment_succeeded"))
        let next: Entities.SubscriptionRecord
        if (withTrial) {
          const end = rec.trial_end!
          next = {
            ...rec,
            anchor: end,
            anchor_cycle: 1,
            payment_token: token,
            subscription: new Subscription.Subscription({ ...rec.subscription, status: moved.to, current_period_start: dt(at), current_period_end: dt(end), next_invoice_date: dt(end) }, { disableChecks: true })
          }
          yield* schedule(merchant, "renewal", rec.subscription.id, end)
          if (end - settings.trialNoticeMs > at) yield* schedule(merchant, "trial_notice", rec.subscription.id, end - settings.trialNoticeMs)
        } else {
          const sched = scheduleOf({ ...rec, anchor: at }, pv)
          const period = BillingPeriod.period(sched, 0)
          next = {
            ...rec,
            anchor: at,
            anchor_cycle: 0,
            payment_token: token,
            subscription: new Subscription.Subscription({
              ...rec.subscription,
              status: moved.to,
              current_period_start: dt(at),
              current_period_end: Option.match(period, { onNone: () => null, onSome: (p) => dt(p.end) }),
              next_invoice_date: Option.match(period, { onNone: () => null, onSome: (p) => dt(p.end) })
            })
          }
          if (Option.isSome(period)) yield* schedule(merchant, "renewal", rec.subscription.id, period.value.end)
        }
        return { next, events: moved.events }
      })

    /** Applies a gateway outcome to a trade and everything that hangs off it. */
    const applyOutcome = (merchantId: string, tradeId: string, outcome: Ports.ChargeOutcome): Effect.Effect<PaymentResult, Errors.NotFound> =>
      Effect.gen(function* () {
        const merchant = yield* Effect.orDie(merchants.get(merchantId))
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => must(o, "trade", tradeId))
            const tr = tv.value
            let trade = tr.trade
            const subV = tr.subscription_id ? Option.getOrUndefined(yield* subs.get(merchantId, tr.subscription_id)) : undefined
            const invV = tr.invoice_id ? Option.getOrUndefined(yield* invoices.get(merchantId, tr.invoice_id)) : undefined
            let sub = subV?.value
            const result = (status: PaymentResult["status"], extra: Partial<PaymentResult> = {}): PaymentResult => ({
              status,
              trade,
              subscription: Option.fromNullishOr(sub?.subscription),
              redirect_url: Option.none(),
              error: Option.none(),
              ...extra
            })
            if (trade.trade_status === "succeeded") return result("succeeded")
            if (trade.trade_status !== "processing") return result(trade.trade_status === "payment_failed" ? "failed" : "processing")
            if (outcome._tag !== "RequiresAction") {
              yield* storage.workQueue.cancel(merchantId, "charge", tradeId)
              if (outcome._tag !== "Unknown") yield* storage.workQueue.cancel(merchantId, "reconcile", tradeId)
            }
            switch (outcome._tag) {
              case "Unknown": {
                yield* storage.workQueue.schedule({ lane: laneOf(merchant), merchant_id: merchantId, kind: "reconcile", subject_id: tradeId, due_at: at + settings.reconcileAfterMs })
                return result("processing")
              }
              case "RequiresAction": {
                trade = new Trade.Trade({ ...trade, next_action: new Trade.NextAction({ type: "redirect_to_url", redirect: { url: outcome.redirect_url }, client: { confirm_url: "", apple_pay_session: "" } }) }, { disableChecks: true })
                yield* Effect.orDie(trades.update({ ...tr, trade }, tv.version))
                return result("requires_action", { redirect_url: Option.some(outcome.redirect_url) })
              }
              case "Succeeded": {
                const token = Option.getOrNull(outcome.token)
                trade = new Trade.Trade({
                  ...trade,
                  trade_status: "succeeded",
                  paid_at: dt(at),
                  txn_time: dt(at),
                  last_trans_id: outcome.transaction_id,
                  payment_token: token,
                  payment_method: `${outcome.brand} •••• ${outcome.last4}`,
                  next_action: null,
                  last_payment_error: null
                })
                yield* Effect.orDie(trades.update({ ...tr, trade }, tv.version))
                yield* emit(storage, { merchant_id: merchantId, type: "v2.trades.succeeded", business_id: tradeId, schema: Trade.Trade, data: trade, at })
                if (invV) {
                  const paid = new Invoice.Invoice({ ...invV.value, biz_status: "success", paid_at: dt(at) }, { disableChecks: true })
                  yield* Effect.orDie(invoices.update(paid, invV.version))
                  yield* emit(storage, { merchant_id: merchantId, type: "v2.invoice.paid", business_id: paid.invoice_id, schema: Invoice.Invoice, data: paid, at })
                }
                if (sub && subV) {
                  if (sub.subscription.status === "init" || sub.subscription.status === "incomplete") {
                    const started = yield* startSubscription(merchant, sub, at, token)
                    sub = started.next
                    yield* saveSub(sub, subV.version, at)
                    yield* storage.workQueue.cancel(merchantId, "incomplete_expiry", sub.subscription.id)
                    yield* subEvents(merchantId, sub, started.events, at)
                  } else if (sub.subscription.status === "past_due" || sub.subscription.status === "unpaid") {
                    const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, sub.subscription.status, "retry_succeeded"))
                    sub = { ...sub, dunning_attempts: 0, payment_token: token ?? sub.payment_token, subscription: new Subscription.Subscription({ ...sub.subscription, status: moved.to }, { disableChecks: true }) }
                    yield* saveSub(sub, subV.version, at)
                    yield* storage.workQueue.cancel(merchantId, "dunning", sub.subscription.id)
                    const nextDate = sub.subscription.next_invoice_date
                    if (nextDate !== null) yield* schedule(merchant, "renewal", sub.subscription.id, Math.max(msOf(nextDate), at))
                  } else if (token !== null && token !== sub.payment_token) {
                    sub = { ...sub, payment_token: token }
                    yield* saveSub(sub, subV.version, at)
                  }
                }
                if (trade.session_id !== null) {
                  const s = yield* sessions.get(merchantId, trade.session_id)
                  if (Option.isSome(s) && s.value.value.status === "open") {
                    yield* Effect.orDie(sessions.update(new CheckoutSession.CheckoutSession({ ...s.value.value, status: "complete", completed_at: dt(at) }), s.value.version))
                  }
                }
                return result("succeeded")
              }
              case "Failed": {
                const error = new Trade.LastPaymentError({ code: outcome.code, message: outcome.message })
                trade = new Trade.Trade({ ...trade, trade_status: "payment_failed", last_payment_error: error, next_action: null, txn_time: dt(at) }, { disableChecks: true })
                yield* Effect.orDie(trades.update({ ...tr, trade }, tv.version))
                yield* emit(storage, { merchant_id: merchantId, type: "v2.trades.payment_failed", business_id: tradeId, schema: Trade.Trade, data: trade, at })
                if (sub && subV) {
                  const status = sub.subscription.status
                  if (status === "init") {
                    const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, "init", "first_payment_failed"))
                    sub = { ...sub, subscription: new Subscription.Subscription({ ...sub.subscription, status: moved.to }, { disableChecks: true }) }
                    yield* saveSub(sub, subV.version, at)
                    yield* schedule(merchant, "incomplete_expiry", sub.subscription.id, msOf(sub.subscription.created_at) + settings.incompleteExpiryMs)
                  } else if (status === "trial" || status === "active" || status === "past_due") {
                    yield* dunningStep(merchant, sub, subV.version, tr, invV, at)
                    sub = Option.getOrUndefined(Option.map(yield* subs.get(merchantId, sub.subscription.id), (v) => v.value))
                    trade = Option.getOrThrow(yield* trades.get(merchantId, tradeId)).value.trade
                  }
                }
                return result("failed", { error: Option.some({ code: outcome.code, message: outcome.message }) })
              }
            }
          })
        )
      }).pipe(Effect.withSpan("Billing.applyOutcome"))

    /** A renewal charge failed: retry on schedule, or give up. */
    const dunningStep = (
      merchant: Merchant.Merchant,
      sub: Entities.SubscriptionRecord,
      subVersion: number,
      tr: Entities.TradeRecord,
      invV: Store.Versioned<Invoice.Invoice> | undefined,
      at: number
    ) =>
      Effect.gen(function* () {
        const merchantId = merchant.merchant_id
        const retriesDone = sub.dunning_attempts
        const firstFailure = sub.subscription.status === "past_due" ? at - 0 : at
        if (retriesDone < settings.retryScheduleMs.length) {
          let next = sub
          if (sub.subscription.status !== "past_due") {
            const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, sub.subscription.status, "renewal_failed"))
            next = { ...sub, subscription: new Subscription.Subscription({ ...sub.subscription, status: moved.to }, { disableChecks: true }) }
            yield* saveSub(next, subVersion, at)
            yield* subEvents(merchantId, next, moved.events, at)
            if (invV && invV.value.biz_status === "pending") {
              yield* Effect.orDie(invoices.update(new Invoice.Invoice({ ...invV.value, biz_status: "retrying" }, { disableChecks: true }), invV.version))
            }
            // offsets are measured from the first failure
            yield* schedule(merchant, "dunning", sub.subscription.id, firstFailure + settings.retryScheduleMs[0]!)
          } else {
            const base = at - (settings.retryScheduleMs[retriesDone - 1] ?? 0)
            yield* schedule(merchant, "dunning", sub.subscription.id, base + settings.retryScheduleMs[retriesDone]!)
            if (invV && invV.value.biz_status === "pending") {
              yield* Effect.orDie(invoices.update(new Invoice.Invoice({ ...invV.value, biz_status: "retrying" }, { disableChecks: true }), invV.version))
            }
          }
          return
        }
        // exhausted
        const trigger = merchant.dunning_final_state === "canceled" ? "retries_exhausted_cancel" : "retries_exhausted"
        const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, "past_due", trigger))
        const next: Entities.SubscriptionRecord = {
          ...sub,
          subscription: new Subscription.Subscription({ ...sub.subscription, status: moved.to, ...(moved.to === "canceled" ? { cancel_reason: "payment_failed", cancel_at: dt(at), next_invoice_date: null } : {}) }, { disableChecks: true })
        }
        yield* saveSub(next, subVersion, at)
        if (invV) {
          const failed = new Invoice.Invoice({ ...invV.value, biz_status: "failed" }, { disableChecks: true })
          yield* Effect.orDie(invoices.update(failed, invV.version))
          yield* emit(storage, { merchant_id: merchantId, type: "v2.invoice.payment_failed", business_id: failed.invoice_id, schema: Invoice.Invoice, data: failed, at })
        }
        const tv = Option.getOrThrow(yield* trades.get(merchantId, tr.trade.trade_id))
        yield* Effect.orDie(trades.update({ ...tv.value, trade: new Trade.Trade({ ...tv.value.trade, trade_status: "closed", closed_at: dt(at), closed_reason: "retries_exhausted" }, { disableChecks: true }) }, tv.version))
        yield* subEvents(merchantId, next, moved.events, at)
        yield* storage.workQueue.cancel(merchantId, "renewal", sub.subscription.id)
      })

    const reconcileTrade = (merchantId: string, tradeId: string) =>
      Effect.flatMap(gateway.retrieve(tradeId), (outcome) => applyOutcome(merchantId, tradeId, outcome)).pipe(Effect.withSpan("Billing.reconcileTrade"))

    // ---------------------------------------------------------------- renewals

    /** Charges an invoice's trade off-session with the saved token (new attempt each time). */
    const chargeInvoiceTrade = (merchantId: string, tradeId: string, token: string) =>
      Effect.gen(function* () {
        const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => Effect.orDie(must(o, "trade", tradeId)))
        const t = tv.value.trade
        const outcome = yield* gateway.charge({ trade_id: tradeId, attempt: tv.value.attempts, merchant_id: merchantId, amount: Result.getOrThrow(Money.parse(t.amount, t.currency)), source: { _tag: "Token", token }, off_session: true })
        return yield* Effect.orDie(applyOutcome(merchantId, tradeId, outcome))
      })

    /** Makes a recorded but not yet made off-session charge (after a crash between the two transactions). */
    const chargePending = (merchantId: string, tradeId: string) =>
      Effect.gen(function* () {
        const tv = yield* Effect.flatMap(trades.get(merchantId, tradeId), (o) => Effect.orDie(must(o, "trade", tradeId)))
        if (tv.value.trade.trade_status !== "processing" || tv.value.subscription_id === null) return Option.none<PaymentResult>()
        const sub = yield* Effect.orDie(getSubscriptionRecord(merchantId, tv.value.subscription_id))
        if (sub.value.payment_token === null) return Option.none<PaymentResult>()
        return Option.some(yield* chargeInvoiceTrade(merchantId, tradeId, sub.value.payment_token))
      }).pipe(Effect.withSpan("Billing.chargePending"))

    /** Renews one subscription whose period ended: bills the next cycle once, charges it, advances. */
    const renew = (merchantId: string, subscriptionId: string, options: { readonly force?: boolean } = {}) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const prepared = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) => must(o, "subscription", subscriptionId))
            let rec = sv.value
            const s = rec.subscription
            if (s.status !== "trial" && s.status !== "active") return Option.none()
            const due = s.next_invoice_date !== null ? msOf(s.next_invoice_date) : null
            if (!options.force && (due === null || due > at)) return Option.none()
            if (s.cancel_at_period_end) {
              const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, s.status, "cancel"))
              rec = { ...rec, subscription: new Subscription.Subscription({ ...s, status: moved.to, cancel_at: dt(at), next_invoice_date: null, cancel_reason: s.cancel_reason ?? "cancellation_requested" }, { disableChecks: true }) }
              yield* saveSub(rec, sv.version, at)
              yield* subEvents(merchantId, rec, moved.events, at)
              return Option.none()
            }
            let pv = yield* version(merchantId, s.price_version_id)
            const nextCycle = s.cycle_index + 1
            const nextPaid = paidIndex(rec, nextCycle)
            if (s.total_cycles !== null && nextPaid >= s.total_cycles) {
              if (rec.convert_to_continuous) {
                rec = { ...rec, subscription: new Subscription.Subscription({ ...s, total_cycles: null }, { disableChecks: true }) }
              } else {
                const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, s.status, "term_completed"))
                rec = { ...rec, subscription: new Subscription.Subscription({ ...s, status: moved.to, cancel_at: dt(at), next_invoice_date: null, cancel_reason: "term_completed" }, { disableChecks: true }) }
                yield* saveSub(rec, sv.version, at)
                yield* subEvents(merchantId, rec, moved.events, at)
                return Option.none()
              }
            }
            let quantity = BigInt(rec.subscription.quantity)
            const pending = rec.subscription.pending_change
            if (pending !== null && pending.cycle_index <= nextCycle) quantity = BigInt(pending.quantity)
            const changedPrice = rec.scheduled_price_version_id !== null
            if (changedPrice) pv = yield* version(merchantId, rec.scheduled_price_version_id!)
            const existing = (yield* Effect.orDie(invoices.list(merchantId, { limit: 100, filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }] }))).list
            const usageCycle = s.cycle_index
            const arrears = pv.billing_dimension === "usage"
            const invoiceCycle = arrears ? usageCycle : nextCycle
            const draftRaw = Invoicing.cycle({
              invoice_type: "renewal",
              price: pv,
              cycle_index: invoiceCycle,
              paidCycles: arrears ? paidIndex(rec, usageCycle) : nextPaid,
              quantity,
              usage: arrears ? BigInt(rec.accrued_usage) : 0n,
              existing: existing.map((i) => ({ cycle_index: i.cycle_index, invoice_type: i.invoice_type }))
            })
            if (Result.isFailure(draftRaw)) {
              // Already billed (a retried or concurrent run): resume its charge if still pending.
              const billed = existing.find((i) => i.cycle_index === invoiceCycle && i.invoice_type === "renewal")
              return billed && billed.biz_status === "pending" && billed.trade_id !== null && rec.payment_token !== null
                ? Option.some({ tradeId: billed.trade_id, token: rec.payment_token, trial: s.status === "trial" })
                : Option.none()
            }
            const settlement = rec.currency
            const credit = Result.getOrThrow(Money.parse(rec.subscription.credit_balance, settlement, { allowNegative: true }))
            const withTaxes = yield* withTax(convertDraft(draftRaw.success, rec.fx_rate, settlement), merchantId, s.customer_id, credit)
            // advance the period now: the invoice is for the new period (prepaid) or closes the old one (postpaid)
            const sched = scheduleOf(rec, pv)
            const period = BillingPeriod.period({ ...sched, totalCycles: undefined }, periodIndex(rec, nextCycle))
            const periodEnd = Option.match(period, { onNone: () => null, onSome: (p) => p.end })
            const moved = s.status === "trial" ? Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, "trial", "renewal_succeeded")) : undefined
            const trade = withTaxes.total.amount > 0n
              ? yield* newTrade({ merchant, amount: withTaxes.total, customer_id: s.customer_id, order_id: s.order_id, payment_mode: "subscription", order_type: "renewal", session: Option.none(), line: null, tax: withTaxes.tax, metadata: {}, at })
              : null
            const inv = yield* newInvoice({
              merchant_id: merchantId,
              draft: withTaxes,
              trade_id: trade?.trade_id ?? null,
              subscription_id: subscriptionId,
              price_id: pv.id,
              price_version_id: pv.price_version_id,
              customer_id: s.customer_id,
              order_id: s.order_id,
              status: trade ? "pending" : "success",
              at
            })
            yield* invoices.insert(inv).pipe(Effect.catchTag("UniqueViolation", () => Effect.die("cycle already billed")))
            rec = {
              ...rec,
              accrued_usage: arrears ? "0" : rec.accrued_usage,
              scheduled_price_version_id: null,
              subscription: new Subscription.Subscription({
                ...rec.subscription,
                // a zero-amount renewal of a trial also ends the trial
                status: trade === null && moved ? moved.to : rec.subscription.status,
                cycle_index: nextCycle,
                quantity: quantity.toString(),
                pending_change: pending !== null && pending.cycle_index <= nextCycle ? null : pending,
                price_id: pv.id,
                price_version_id: pv.price_version_id,
                price_type: pv.price_type,
                current_period_start: dt(Option.match(period, { onNone: () => at, onSome: (p) => p.start })),
                current_period_end: periodEnd === null ? null : dt(periodEnd),
                next_invoice_date: periodEnd === null ? null : dt(periodEnd),
                credit_balance: fmtMinor(credit.amount - withTaxes.creditApplied.amount, credit.currency)
              })
            }
            yield* saveSub(rec, sv.version, at)
            if (changedPrice) yield* subEvents(merchantId, rec, ["v2.subscription.price_changed"], at)
            if (periodEnd !== null) yield* schedule(merchant, "renewal", subscriptionId, periodEnd)
            if (trade === null) {
              yield* emit(storage, { merchant_id: merchantId, type: "v2.invoice.paid", business_id: inv.invoice_id, schema: Invoice.Invoice, data: inv, at })
              return Option.none()
            }
            const processing = new Trade.Trade({ ...trade, trade_status: "processing" }, { disableChecks: true })
            yield* Effect.orDie(trades.insert({ trade: processing, attempts: 1, invoice_id: inv.invoice_id, subscription_id: subscriptionId }))
            yield* emit(storage, { merchant_id: merchantId, type: "v2.trades.created", business_id: trade.trade_id, schema: Trade.Trade, data: trade, at })
            if (rec.payment_token === null) return Option.none()
            // a durable intent: if this process dies before the charge, a worker makes it
            yield* schedule(merchant, "charge", trade.trade_id, at)
            return Option.some({ tradeId: trade.trade_id, token: rec.payment_token, trial: rec.subscription.status === "trial" })
          })
        )
        if (Option.isNone(prepared)) return Option.none<PaymentResult>()
        const result = yield* chargeInvoiceTrade(merchantId, prepared.value.tradeId, prepared.value.token)
        // a successful renewal after a trial ends the trial
        if (result.status === "succeeded" && prepared.value.trial) {
          yield* storage.withTransaction(
            Effect.gen(function* () {
              const sv = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
              if (sv.value.subscription.status === "trial") {
                const at = yield* nowOf(merchant)
                const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, "trial", "renewal_succeeded"))
                yield* saveSub({ ...sv.value, subscription: new Subscription.Subscription({ ...sv.value.subscription, status: moved.to }, { disableChecks: true }) }, sv.version, at)
              }
            })
          )
        }
        return Option.some(result)
      }).pipe(Effect.withSpan("Billing.renew"))

    /** The stored record of a batch renewal's trade: its first attempt, tied to the invoice and subscription. */
    const renewalTrade = (d: { readonly rec: Entities.SubscriptionRecord; readonly invoice: Invoice.Invoice }, trade: Trade.Trade): Entities.TradeRecord => ({
      trade,
      attempts: 1,
      invoice_id: d.invoice.invoice_id,
      subscription_id: d.rec.subscription.id
    })

    /**
     * Renews many due subscriptions of one merchant together, with the result of renewing each
     * alone: one transaction bills them all (invoices, trades, next periods, charge intents,
     * outbox events), the gateway charges each, and one transaction records the charges that
     * succeeded. What the batch does not cover goes through `renew` and `applyOutcome` one by
     * one: a trial, a cancellation or fixed term ending, a scheduled price change, an amount of
     * zero, a subscription without a saved card, a cycle already billed, a charge that did not
     * simply succeed, and everything when a batch transaction fails (a concurrent change).
     * Returns the subscriptions it finished; the others failed and their work is tried again.
     */
    const renewMany = (merchantId: string, subscriptionIds: ReadonlyArray<string>, options: { readonly concurrency?: number } = {}) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const concurrency = Math.max(1, options.concurrency ?? 1)
        const alone = new Set<string>()
        const billed = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const found = yield* subs.getMany(merchantId, subscriptionIds)
            const plain: Array<Store.Versioned<Entities.SubscriptionRecord>> = []
            for (const id of subscriptionIds) {
              const sv = found.get(id)
              const s = sv?.value.subscription
              const batchable = sv !== undefined && s !== undefined &&
                s.status === "active" && !s.cancel_at_period_end && sv.value.scheduled_price_version_id === null && sv.value.payment_token !== null &&
                s.next_invoice_date !== null && msOf(s.next_invoice_date) <= at &&
                (s.total_cycles === null || paidIndex(sv.value, s.cycle_index + 1) < s.total_cycles)
              if (batchable) plain.push(sv)
              else alone.add(id)
            }
            const prices = yield* versions.getMany(merchantId, [...new Set(plain.map((sv) => sv.value.subscription.price_version_id))])
            const drafts: Array<{ readonly rec: Entities.SubscriptionRecord; readonly version: number; readonly trade: Trade.Trade; readonly invoice: Invoice.Invoice; readonly next: number | null }> = []
            for (const sv of plain) {
              const rec = sv.value
              const s = rec.subscription
              const pv = prices.get(s.price_version_id)?.value
              if (pv === undefined) {
                alone.add(s.id)
                continue
              }
              // the same computation as `renew`, for the plain case
              const nextCycle = s.cycle_index + 1
              const pending = s.pending_change
              const pendingDue = pending !== null && pending.cycle_index <= nextCycle
              const quantity = pendingDue ? BigInt(pending.quantity) : BigInt(s.quantity)
              const arrears = pv.billing_dimension === "usage"
              const draftRaw = Invoicing.cycle({
                invoice_type: "renewal",
                price: pv,
                cycle_index: arrears ? s.cycle_index : nextCycle,
                paidCycles: arrears ? paidIndex(rec, s.cycle_index) : paidIndex(rec, nextCycle),
                quantity,
                usage: arrears ? BigInt(rec.accrued_usage) : 0n,
                existing: []
              })
              if (Result.isFailure(draftRaw)) {
                alone.add(s.id)
                continue
              }
              const credit = Result.getOrThrow(Money.parse(s.credit_balance, rec.currency, { allowNegative: true }))
              const withTaxes = yield* withTax(convertDraft(draftRaw.success, rec.fx_rate, rec.currency), merchantId, s.customer_id, credit)
              if (withTaxes.total.amount <= 0n) {
                alone.add(s.id)
                continue
              }
              const period = BillingPeriod.period({ ...scheduleOf(rec, pv), totalCycles: undefined }, periodIndex(rec, nextCycle))
              const periodEnd = Option.match(period, { onNone: () => null, onSome: (p) => p.end })
              const trade = yield* newTrade({ merchant, amount: withTaxes.total, customer_id: s.customer_id, order_id: s.order_id, payment_mode: "subscription", order_type: "renewal", session: Option.none(), line: null, tax: withTaxes.tax, metadata: {}, at })
              const invoice = yield* newInvoice({
                merchant_id: merchantId,
                draft: withTaxes,
                trade_id: trade.trade_id,
                subscription_id: s.id,
                price_id: pv.id,
                price_version_id: pv.price_version_id,
                customer_id: s.customer_id,
                order_id: s.order_id,
                status: "pending",
                at
              })
              drafts.push({
                version: sv.version,
                trade,
                invoice,
                next: periodEnd,
                rec: {
                  ...rec,
                  accrued_usage: arrears ? "0" : rec.accrued_usage,
                  subscription: new Subscription.Subscription({
                    ...s,
                    cycle_index: nextCycle,
                    quantity: quantity.toString(),
                    pending_change: pendingDue ? null : pending,
                    price_id: pv.id,
                    price_version_id: pv.price_version_id,
                    price_type: pv.price_type,
                    current_period_start: dt(Option.match(period, { onNone: () => at, onSome: (p) => p.start })),
                    current_period_end: periodEnd === null ? null : dt(periodEnd),
                    next_invoice_date: periodEnd === null ? null : dt(periodEnd),
                    credit_balance: fmtMinor(credit.amount - withTaxes.creditApplied.amount, credit.currency),
                    updated_at: dt(at)
                  }, { disableChecks: true })
                }
              })
            }
            // a cycle already billed (a retried run) keeps its invoice: that subscription goes alone
            const inserted = new Set((yield* invoices.insertMany(drafts.map((d) => d.invoice))).map((i) => i.invoice_id))
            const done = drafts.filter((d) => inserted.has(d.invoice.invoice_id))
            for (const d of drafts) if (!inserted.has(d.invoice.invoice_id)) alone.add(d.rec.subscription.id)
            if (done.length === 0) return []
            yield* Effect.orDie(trades.insertMany(done.map((d) => renewalTrade(d, new Trade.Trade({ ...d.trade, trade_status: "processing" }, { disableChecks: true })))))
            yield* Effect.orDie(subs.updateMany(done.map((d) => ({ value: d.rec, expectedVersion: d.version }))))
            const lane = laneOf(merchant)
            yield* storage.workQueue.scheduleMany([
              ...done.flatMap((d) => d.next === null ? [] : [{ lane, merchant_id: merchantId, kind: "renewal", subject_id: d.rec.subscription.id, due_at: d.next }]),
              // durable intents: if this process dies before a charge, a worker makes it
              ...done.map((d) => ({ lane, merchant_id: merchantId, kind: "charge", subject_id: d.trade.trade_id, due_at: at }))
            ])
            yield* emitMany(storage, merchantId, done.map((d) => pendingEvent({ type: "v2.trades.created", business_id: d.trade.trade_id, schema: Trade.Trade, data: d.trade, at })))
            return done
          })
        ).pipe(
          Effect.catchCause((cause) =>
            Effect.as(Effect.logWarning("renewal batch fell back to one by one", cause), []).pipe(Effect.tap(() => Effect.sync(() => subscriptionIds.forEach((id) => alone.add(id)))))
          )
        )
        const finished = new Set<string>(billed.map((d) => d.rec.subscription.id))
        // charge each at the gateway; a charge that did not simply succeed is applied alone
        const outcomes = yield* Effect.forEach(billed, (d) =>
          Effect.map(
            gateway.charge({ trade_id: d.trade.trade_id, attempt: 1, merchant_id: merchantId, amount: Result.getOrThrow(Money.parse(d.trade.amount, d.trade.currency)), source: { _tag: "Token", token: d.rec.payment_token! }, off_session: true }),
            (outcome) => ({ d, outcome })
          ), { concurrency: Math.max(concurrency, 16) })
        const succeeded = outcomes.filter((o) => o.outcome._tag === "Succeeded")
        const one = new Set(outcomes.filter((o) => o.outcome._tag !== "Succeeded"))
        if (succeeded.length > 0) {
          const recorded = yield* storage.withTransaction(
            Effect.gen(function* () {
              const at = yield* nowOf(merchant)
              // the trades and invoices are as the first transaction wrote them (version 1): anything
              // that moved since (a concurrent reconcile) fails the versioned update, and then every
              // outcome of the batch is applied alone. A charge that returned another card is applied
              // alone too (it updates the subscription).
              const paid: Array<{ readonly o: (typeof succeeded)[number]; readonly next: Trade.Trade; readonly paid: Invoice.Invoice }> = []
              for (const o of succeeded) {
                const outcome = o.outcome as Extract<Ports.ChargeOutcome, { _tag: "Succeeded" }>
                const token = Option.getOrNull(outcome.token)
                if (token !== null && token !== o.d.rec.payment_token) {
                  one.add(o)
                  continue
                }
                paid.push({
                  o,
                  next: new Trade.Trade({
                    ...o.d.trade,
                    trade_status: "succeeded",
                    paid_at: dt(at),
                    txn_time: dt(at),
                    last_trans_id: outcome.transaction_id,
                    payment_token: token,
                    payment_method: `${outcome.brand} •••• ${outcome.last4}`,
                    next_action: null,
                    last_payment_error: null
                  }, { disableChecks: true }),
                  paid: new Invoice.Invoice({ ...o.d.invoice, biz_status: "success", paid_at: dt(at) }, { disableChecks: true })
                })
              }
              // a VersionConflict here is a failure (not a defect): the batch's outcomes go alone
              yield* trades.updateMany(paid.map((p) => ({ value: renewalTrade(p.o.d, p.next), expectedVersion: 1 })))
              yield* invoices.updateMany(paid.map((p) => ({ value: p.paid, expectedVersion: 1 })))
              yield* storage.workQueue.cancelMany(paid.flatMap((p) => ["charge", "reconcile"].map((kind) => ({ merchant_id: merchantId, kind, subject_id: p.next.trade_id }))))
              yield* emitMany(storage, merchantId, paid.flatMap((p) => [
                pendingEvent({ type: "v2.trades.succeeded", business_id: p.next.trade_id, schema: Trade.Trade, data: p.next, at }),
                pendingEvent({ type: "v2.invoice.paid", business_id: p.paid.invoice_id, schema: Invoice.Invoice, data: p.paid, at })
              ]))
            })
          ).pipe(Effect.result)
          if (Result.isFailure(recorded)) for (const o of succeeded) one.add(o)
        }
        yield* Effect.forEach(one, (o) =>
          applyOutcome(merchantId, o.d.trade.trade_id, o.outcome).pipe(
            Effect.catchCause((cause) =>
              // the charge intent stays scheduled: a worker makes or reconciles the charge again
              Effect.logError(`renewal charge of ${o.d.trade.trade_id} not recorded`, cause)
            )
          ), { concurrency, discard: true })
        yield* Effect.forEach(alone, (id) =>
          renew(merchantId, id).pipe(
            Effect.matchCauseEffect({
              onFailure: (cause) => Effect.logError(`work item renewal ${id} failed`, cause),
              onSuccess: () => Effect.sync(() => finished.add(id))
            })
          ), { concurrency, discard: true })
        return finished
      }).pipe(Effect.withSpan("Billing.renewMany", { attributes: { size: subscriptionIds.length } }))

    /** One dunning retry. */
    const retry = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) => must(o, "subscription", subscriptionId))
        if (sv.value.subscription.status !== "past_due" || sv.value.payment_token === null) return Option.none<PaymentResult>()
        const open = (yield* Effect.orDie(invoices.list(merchantId, { limit: 100, filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }, { column: "biz_status", op: "in", values: ["retrying", "pending"] }] }))).list
        const invoice = open.find((i) => i.trade_id !== null)
        if (!invoice) return Option.none<PaymentResult>()
        const tradeId = invoice.trade_id!
        yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const s = Option.getOrThrow(yield* subs.get(merchantId, subscriptionId))
            yield* saveSub({ ...s.value, dunning_attempts: s.value.dunning_attempts + 1 }, s.version, at)
            const tv = Option.getOrThrow(yield* trades.get(merchantId, tradeId))
            if (tv.value.trade.trade_status === "payment_failed") {
              yield* Effect.orDie(trades.update({ ...tv.value, attempts: tv.value.attempts + 1, trade: new Trade.Trade({ ...tv.value.trade, trade_status: "processing" }, { disableChecks: true }) }, tv.version))
            }
            const iv = Option.getOrThrow(yield* invoices.get(merchantId, invoice.invoice_id))
            if (iv.value.biz_status === "retrying") yield* Effect.orDie(invoices.update(new Invoice.Invoice({ ...iv.value, biz_status: "pending" }, { disableChecks: true }), iv.version))
            yield* schedule(merchant, "charge", tradeId, at)
          })
        )
        return Option.some(yield* chargeInvoiceTrade(merchantId, tradeId, sv.value.payment_token))
      }).pipe(Effect.withSpan("Billing.retry"))

    const trialNotice = (merchantId: string, subscriptionId: string) =>
      storage.withTransaction(
        Effect.gen(function* () {
          const merchant = yield* merchants.get(merchantId)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) => must(o, "subscription", subscriptionId))
          if (sv.value.subscription.status !== "trial") return
          const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, "trial", "trial_expiring_notice"))
          yield* subEvents(merchantId, sv.value, moved.events, yield* nowOf(merchant))
        })
      )

    const expireIncomplete = (merchantId: string, subscriptionId: string) =>
      storage.withTransaction(
        Effect.gen(function* () {
          const merchant = yield* merchants.get(merchantId)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) => must(o, "subscription", subscriptionId))
          if (sv.value.subscription.status !== "incomplete") return
          const at = yield* nowOf(merchant)
          const moved = Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, "incomplete", "incomplete_expired"))
          const next = { ...sv.value, subscription: new Subscription.Subscription({ ...sv.value.subscription, status: moved.to, cancel_reason: "incomplete_expired", cancel_at: dt(at) }, { disableChecks: true }) }
          yield* saveSub(next, sv.version, at)
          yield* subEvents(merchantId, next, moved.events, at)
          const tr = sv.value.subscription.source_trade_id
          if (tr !== null) {
            const tv = yield* trades.get(merchantId, tr)
            if (Option.isSome(tv) && (tv.value.value.trade.trade_status === "payment_failed" || tv.value.value.trade.trade_status === "requires_payment_method")) {
              yield* Effect.orDie(trades.update({ ...tv.value.value, trade: new Trade.Trade({ ...tv.value.value.trade, trade_status: "closed", closed_at: dt(at), closed_reason: "incomplete_expired" }, { disableChecks: true }) }, tv.value.version))
            }
          }
        })
      )

    // ---------------------------------------------------------------- worker and clocks

    /** Runs one claimed work item. */
    const runItem = (item: Store.WorkItem): Effect.Effect<boolean> => {
      const work: Effect.Effect<unknown, unknown> =
        item.kind === "renewal" ? renew(item.merchant_id, item.subject_id)
        : item.kind === "dunning" ? retry(item.merchant_id, item.subject_id)
        : item.kind === "trial_notice" ? trialNotice(item.merchant_id, item.subject_id)
        : item.kind === "incomplete_expiry" ? expireIncomplete(item.merchant_id, item.subject_id)
        : item.kind === "reconcile" ? reconcileTrade(item.merchant_id, item.subject_id)
        : item.kind === "charge" ? chargePending(item.merchant_id, item.subject_id)
        : item.kind === "webhook" ? webhooks.deliver(item.merchant_id, item.subject_id)
        : Effect.logWarning(`unknown work kind ${item.kind}`)
      // a failed item is not completed: its lease runs out and a worker tries it again
      return work.pipe(
        Effect.as(true),
        Effect.catchCause((cause) => Effect.as(Effect.logError(`work item ${item.kind} ${item.subject_id} failed`, cause), false)),
        Effect.withSpan("Billing.runItem", { attributes: { kind: item.kind } })
      )
    }

    /**
     * Claims and runs due work of a lane until none is left at `now`. Returns how many items ran.
     */
    const runDue = (options: {
      readonly now: number
      readonly owner: string
      readonly lane?: "live" | "frozen"
      readonly merchantId?: string
      readonly batch?: number
      readonly leaseMs?: number
      /** Subjects worked on at once (each item is its own transaction); 1 keeps strict time order. */
      readonly concurrency?: number
      /** Renewals of one merchant billed together (see `renewMany`); 1 renews each alone. Default 64. */
      readonly renewalBatch?: number
    }) =>
      Effect.gen(function* () {
        let ran = 0
        const concurrency = Math.max(1, options.concurrency ?? 1)
        const batchSize = Math.max(1, options.renewalBatch ?? 64)
        for (;;) {
          const items = yield* storage.workQueue.claim({
            now: options.now,
            limit: options.batch ?? Math.max(256, concurrency * 32),
            leaseMs: options.leaseMs ?? 60_000,
            owner: options.owner,
            ...(options.lane ? { lane: options.lane } : {}),
            ...(options.merchantId ? { merchantId: options.merchantId } : {})
          })
          if (items.length === 0) return ran
          // a renewal alone on its subject joins its merchant's batch (see renewMany)
          const bySubject = new Map<string, Array<Store.WorkItem>>()
          for (const item of items) {
            const key = `${item.merchant_id} ${item.subject_id}`
            const group = bySubject.get(key)
            if (group) group.push(item)
            else bySubject.set(key, [item])
          }
          const renewals = new Map<string, Array<Store.WorkItem>>()
          const singles: Array<Array<Store.WorkItem>> = []
          for (const group of bySubject.values()) {
            const item = group[0]!
            if (group.length === 1 && item.kind === "renewal" && batchSize > 1) {
              const batch = renewals.get(item.merchant_id)
              if (batch) batch.push(item)
              else renewals.set(item.merchant_id, [item])
            } else singles.push(group)
          }
          const batches = [...renewals.values()].flatMap((all) => Array.from({ length: Math.ceil(all.length / batchSize) }, (_, i) => all.slice(i * batchSize, (i + 1) * batchSize)))
          const runBatch = (batch: ReadonlyArray<Store.WorkItem>) =>
            Effect.gen(function* () {
              const finished = yield* renewMany(batch[0]!.merchant_id, batch.map((i) => i.subject_id), { concurrency }).pipe(
                Effect.catchCause((cause) => Effect.as(Effect.logError("renewal batch failed", cause), new Set<string>()))
              )
              yield* storage.workQueue.completeMany(batch.filter((i) => finished.has(i.subject_id)), options.owner)
              ran += batch.length
            })
          // items of one subject stay in order, one after the other; subjects run side by side
          const runGroup = (group: ReadonlyArray<Store.WorkItem>) =>
            Effect.forEach(group, (item) =>
              Effect.gen(function* () {
                if (yield* runItem(item)) yield* storage.workQueue.complete(item, options.owner)
                ran++
              }), { discard: true })
          yield* Effect.all([
            Effect.forEach(batches, runBatch, { concurrency: Math.min(concurrency, 4), discard: true }),
            Effect.forEach(singles, runGroup, { concurrency, discard: true })
          ], { concurrency: concurrency > 1 ? 2 : 1, discard: true })
        }
      })

    /**
     * Moves a sandbox merchant's frozen clock forward to `to`, running everything that falls
     * due on the way, in time order, before it returns.
     */
    const advanceClock = (merchantId: string, to: number, options: { readonly renewalBatch?: number } = {}) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        if (merchant.frozen_time === null) return yield* new Errors.StateConflict({ resource: "merchant", id: merchantId, state: "live_clock", reason: "only a sandbox merchant with a frozen clock can advance it" })
        if (to < msOf(merchant.frozen_time)) return yield* invalid("frozen_time", "cannot move the clock backwards")
        const owner = `advance-${yield* Ids.make("wrk")}`
        const setClock = (t: number) =>
          Effect.gen(function* () {
            const current = Option.getOrThrow(yield* merchantsRepo.get(merchantId, merchantId))
            const next = new Merchant.Merchant({ ...current.value, frozen_time: dt(t) }, { disableChecks: true })
            yield* Effect.orDie(merchantsRepo.update(next, current.version))
          })
        for (;;) {
          const next = yield* storage.workQueue.nextDue(merchantId)
          const current = msOf((yield* merchants.get(merchantId)).frozen_time!)
          if (Option.isNone(next) || next.value > to) break
          yield* setClock(Math.max(current, next.value))
          const ran = yield* runDue({ now: Math.max(current, next.value), owner, lane: "frozen", merchantId, ...(options.renewalBatch !== undefined ? { renewalBatch: options.renewalBatch } : {}) })
          if (ran === 0) break
        }
        yield* setClock(to)
        return yield* merchants.get(merchantId)
        // the clock moves here: nothing inside may take "now" from the request's merchant snapshot
      }).pipe(Effect.provideService(knownMerchant, undefined), Effect.withSpan("Billing.advanceClock"))

    /**
     * The worker: runs due live work every `interval`, forever. Safe on many processes at once
     * (leases).
     */
    const worker = (options: { readonly owner: string; readonly intervalMs?: number; readonly concurrency?: number }) =>
      Effect.gen(function* () {
        for (;;) {
          const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
          yield* runDue({ now, owner: options.owner, lane: "live", ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}) })
          yield* Effect.sleep(options.intervalMs ?? 1000)
        }
      }).pipe(Effect.withSpan("Billing.worker"))

    // ---------------------------------------------------------------- reads

    const getSubscriptionRecord = (merchantId: string, id: string) => Effect.flatMap(subs.get(merchantId, id), (o) => must(o, "subscription", id))
    const getSubscription = (merchantId: string, id: string) => Effect.map(getSubscriptionRecord(merchantId, id), (v) => v.value.subscription)
    const getTrade = (merchantId: string, id: string) => Effect.map(Effect.flatMap(trades.get(merchantId, id), (o) => must(o, "trade", id)), (v) => v.value.trade)
    const getInvoice = (merchantId: string, id: string) => Effect.map(Effect.flatMap(invoices.get(merchantId, id), (o) => must(o, "invoice", id)), (v) => v.value)
    const listInvoices = (merchantId: string, query: Store.ListQuery) => pageErrors(invoices.list(merchantId, query))
    const listTrades = (merchantId: string, query: Store.ListQuery) => Effect.map(pageErrors(trades.list(merchantId, query)), (p) => ({ has_more: p.has_more, list: p.list.map((t) => t.trade) }))
    const listSubscriptions = (merchantId: string, query: Store.ListQuery) => Effect.map(pageErrors(subs.list(merchantId, query)), (p) => ({ has_more: p.has_more, list: p.list.map((s) => s.subscription) }))

    return {
      createSession, getSession, paySession, reconcileTrade, applyOutcome, chargeInvoiceTrade, renew, renewMany, retry, runDue, advanceClock, worker,
      newTrade, newInvoice, withTax, convertDraft, scheduleOf, paidIndex, periodIndex, saveSub, subEvents, schedule, version,
      getSubscription, getSubscriptionRecord, getTrade, getInvoice, listInvoices, listTrades, listSubscriptions
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
