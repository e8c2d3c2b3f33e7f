/**
 * Changes to a running subscription: price changes with proration (preview equals commit),
 * scheduled changes and their revocation, quantity changes for the next cycle, cancel and
 * revoke-cancel, pause and resume, customer-initiated renewal, usage, and refunds.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Billing from "./Billing.js"
import * as BillingPeriod from "./BillingPeriod.js"
import * as Catalog from "./Catalog.js"
import * as Entities from "./Entities.js"
import * as Errors from "./Errors.js"
import * as Ids from "./Ids.js"
import { dt, emit, msOf, nowOf } from "./internal/engine.js"
import * as Invoice from "./Invoice.js"
import * as Invoicing from "./Invoicing.js"
import * as Lifecycle from "./Lifecycle.js"
import * as Merchants from "./Merchants.js"
import * as Money from "./Money.js"
import * as Ports from "./Ports.js"
import * as Price from "./Price.js"
import * as PriceRules from "./PriceRules.js"
import * as Pricing from "./Pricing.js"
import * as Proration from "./Proration.js"
import * as Refund from "./Refund.js"
import * as Secrets from "./Secrets.js"
import * as Store from "./Store.js"
import * as Subscription from "./Subscription.js"
import * as Trade from "./Trade.js"
import * as Usage from "./Usage.js"
import { pageErrors } from "./internal/paging.js"

/**
 * The body of `POST /api/v1/subscription/{id}` (and of preview-change).
 *
 * @since 0.1.0
 */
export interface ChangeInput {
  readonly price_id?: string | undefined
  readonly quantity?: string | undefined
  readonly effective_type?: "immediate" | "end_of_period" | undefined
  readonly proration?: "immediate" | "none" | undefined
  readonly quote_id?: string | undefined
}

/**
 * What a change will bill, exactly.
 *
 * @since 0.1.0
 */
export interface Quote {
  readonly quote_id: string
  readonly subscription_id: string
  readonly effective_type: "immediate" | "end_of_period"
  readonly proration: "immediate" | "none"
  readonly at: number
  readonly currency: string
  readonly credit: string
  readonly charge: string
  readonly net: string
  /** `upgrade` (charged now), `refund`, `credit_balance`, `none` or `scheduled`. */
  readonly outcome: "upgrade" | "refund" | "credit_balance" | "none" | "scheduled" | "quantity_next_cycle"
  readonly lines: ReadonlyArray<{ readonly description: string; readonly amount: string }>
  readonly effective_at: number
}

const QUOTE_TTL_MS = 15 * 60_000

/**
 * One usage event: `usage_count` units of a usage-billed subscription. `event_id` makes
 * re-sends harmless (one record per subscription and event id); `timestamp` (Unix ms) is when
 * the usage happened, default now.
 *
 * @since 0.1.0
 */
export interface UsageInput {
  readonly subscription_id: string
  readonly usage_count: number
  readonly event_id?: string | undefined
  readonly timestamp?: number | undefined
}

/**
 * The most records one usage batch may hold.
 *
 * @since 0.1.0
 */
export const MAX_USAGE_BATCH = 1000

/** The largest instant a JavaScript Date holds (±8.64e15 ms). */
const MAX_INSTANT_MS = 8_640_000_000_000_000

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * The subscriptions service.
 *
 * @since 0.1.0
 */
export class Subscriptions extends Context.Service<Subscriptions>()("@recur/core/Subscriptions", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const billing = yield* Billing.Billing
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const gateway = yield* Ports.PaymentGateway
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const trades = storage.repository(Entities.trade)
    const refunds = storage.repository(Entities.refund)
    const usage = storage.repository(Entities.usageRecord)

    const load = (merchantId: string, id: string) => billing.getSubscriptionRecord(merchantId, id)
    const live = (rec: Entities.SubscriptionRecord, action: string) =>
      ["trial", "active", "past_due"].includes(rec.subscription.status)
        ? Effect.void
        : Effect.fail(new Errors.StateConflict({ resource: "subscription", id: rec.subscription.id, state: rec.subscription.status, reason: `cannot ${action}` }))

    /** The invoice that paid the current cycle (its amount is what proration credits). */
    const cycleInvoice = (merchantId: string, rec: Entities.SubscriptionRecord) =>
      Effect.map(
        Effect.orDie(invoices.list(merchantId, { limit: 100, filters: [{ column: "subscription_id", op: "in", values: [rec.subscription.id] }, { column: "cycle_index", op: "in", values: [rec.subscription.cycle_index] }] })),
        (p) => Option.fromNullishOr(p.list.find((i) => i.invoice_type === "initial" || i.invoice_type === "renewal" || i.invoice_type === "trial"))
      )

    const plan = (merchantId: string, subscriptionId: string, input: ChangeInput, at: number) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* load(merchantId, subscriptionId)
        const rec = sv.value
        yield* live(rec, "change")
        const effective_type = input.effective_type ?? "immediate"
        const prorationMode = input.proration ?? "immediate"
        if (!["immediate", "end_of_period"].includes(effective_type)) return yield* invalid("effective_type", "must be immediate or end_of_period")
        if (!["immediate", "none"].includes(prorationMode)) return yield* invalid("proration", "must be immediate or none")
        if (input.price_id === undefined && input.quantity === undefined) return yield* invalid("price_id", "price_id or quantity is required")
        let quantity: Option.Option<bigint> = Option.none()
        if (input.quantity !== undefined) {
          if (rec.subscription.billing_dimension !== "quantity") return yield* invalid("quantity", "only subscriptions with billing_dimension quantity have a quantity")
          const q = PriceRules.validateQuantity("quantity", input.quantity)
          if (Result.isFailure(q)) return yield* invalid("quantity", q.failure.message)
          quantity = Option.some(q.success)
        }
        const current = yield* billing.version(merchantId, rec.subscription.price_version_id)
        const target = input.price_id !== undefined && input.price_id !== rec.subscription.price_id
          ? yield* Effect.catchTag(catalog.sellableVersion(merchantId, input.price_id), "NotFound", () => invalid("price_id", "no such price"))
          : undefined
        if (target && (target.currency !== current.currency || target.billing_dimension !== current.billing_dimension)) {
          return yield* invalid("price_id", "the new price must have the same currency and billing dimension")
        }
        const qty = BigInt(rec.subscription.quantity)
        const periodStart = rec.subscription.current_period_start !== null ? msOf(rec.subscription.current_period_start) : at
        const periodEnd = rec.subscription.current_period_end !== null ? msOf(rec.subscription.current_period_end) : at
        const currency = rec.currency
        const zero = Money.format(Money.zero(currency))
        let quote: Omit<Quote, "quote_id">
        if (!target) {
          quote = { subscription_id: subscriptionId, effective_type, proration: prorationMode, at, currency, credit: zero, charge: zero, net: zero, outcome: "quantity_next_cycle", lines: [], effective_at: periodEnd }
        } else if (effective_type === "end_of_period") {
          quote = { subscription_id: subscriptionId, effective_type, proration: prorationMode, at, currency, credit: zero, charge: zero, net: zero, outcome: "scheduled", lines: [], effective_at: periodEnd }
        } else if (prorationMode === "none" || rec.subscription.status === "trial") {
          quote = { subscription_id: subscriptionId, effective_type, proration: prorationMode, at, currency, credit: zero, charge: zero, net: zero, outcome: "none", lines: [], effective_at: at }
        } else {
          const paidInvoice = yield* cycleInvoice(merchantId, rec)
          const paid = Option.match(paidInvoice, { onNone: () => Money.zero(currency), onSome: (i) => (i.biz_status === "success" ? Result.getOrThrow(Money.parse(i.amount, i.currency)) : Money.zero(currency)) })
          const newFull = billing.convertDraft(
            Result.getOrThrow(Invoicing.cycle({ invoice_type: "renewal", price: target, cycle_index: rec.subscription.cycle_index, paidCycles: billing.paidIndex(rec, rec.subscription.cycle_index), quantity: qty, existing: [] })),
            rec.fx_rate,
            currency
          ).total
          const policy = Result.getOrElse(Proration.parsePolicy(merchant.proration_policy), () => Proration.defaultPolicy)
          const p = Result.getOrThrow(Proration.prorate({ policy, period: { start: periodStart, end: periodEnd }, at, paid, newAmount: newFull, creditMode: merchant.proration_credit }))
          quote = {
            subscription_id: subscriptionId,
            effective_type,
            proration: prorationMode,
            at,
            currency,
            credit: Money.format(p.credit),
            charge: Money.format(p.charge),
            net: Money.format(p.net),
            outcome: p.outcome._tag === "Upgrade" ? "upgrade" : p.outcome._tag === "Refund" ? "refund" : p.outcome._tag === "CreditBalance" ? "credit_balance" : "none",
            lines: [
              { description: `Unused time on ${current.price_name}`, amount: Money.format(Money.negate(p.credit)) },
              { description: `Remaining time on ${target.price_name}`, amount: Money.format(p.charge) }
            ],
            effective_at: at
          }
        }
        const hash = yield* Secrets.sha256Hex(JSON.stringify([subscriptionId, sv.version, input.price_id ?? null, input.quantity ?? null, effective_type, prorationMode, at, quote.net, quote.credit, quote.charge]))
        return { rec, version: sv.version, merchant, current, target, quantity, quote: { ...quote, quote_id: `quo_${at.toString(36)}_${hash.slice(0, 24)}` } as Quote }
      })

    const previewChange = (merchantId: string, subscriptionId: string, input: ChangeInput) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        return (yield* plan(merchantId, subscriptionId, input, yield* nowOf(merchant))).quote
      }).pipe(Effect.withSpan("Subscriptions.previewChange"))

    const changePrice = (merchantId: string, subscriptionId: string, input: ChangeInput) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const now = yield* nowOf(merchant)
        let at = now
        if (input.quote_id !== undefined) {
          const m = /^quo_([0-9a-z]+)_[0-9a-f]{24}$/.exec(input.quote_id)
          if (!m) return yield* invalid("quote_id", "malformed quote id")
          at = parseInt(m[1]!, 36)
          if (at > now || now - at > QUOTE_TTL_MS) return yield* new Errors.StateConflict({ resource: "quote", id: input.quote_id, state: "expired", reason: "the quote has expired; preview again" })
        }
        const planned = yield* plan(merchantId, subscriptionId, input, at)
        if (input.quote_id !== undefined && planned.quote.quote_id !== input.quote_id) {
          return yield* new Errors.StateConflict({ resource: "subscription", id: subscriptionId, state: planned.rec.subscription.status, reason: "the subscription changed since the quote; preview again" })
        }
        const { quote, rec, target } = planned
        const charge = yield* storage.withTransaction(
          Effect.gen(function* () {
            let next: Entities.SubscriptionRecord = rec
            if (Option.isSome(planned.quantity)) {
              const pending = rec.subscription.pending_change
              next = {
                ...next,
                subscription: new Subscription.Subscription({
                  ...next.subscription,
                  pending_change: new Subscription.PendingChange({
                    quantity: planned.quantity.value.toString(),
                    cycle_index: rec.subscription.cycle_index + 1,
                    version: (pending?.version ?? 0) + 1,
                    effective_at: dt(quote.effective_at > at ? quote.effective_at : at)
                  })
                })
              }
            }
            let tradeToCharge: Option.Option<string> = Option.none()
            if (target) {
              if (quote.outcome === "scheduled") {
                next = { ...next, scheduled_price_version_id: target.price_version_id }
              } else {
                next = {
                  ...next,
                  scheduled_price_version_id: null,
                  subscription: new Subscription.Subscription({ ...next.subscription, price_id: target.id, price_version_id: target.price_version_id, price_type: target.price_type, quantity_tiers: target.quantity_tiers, usage_tiers: target.usage_tiers }, { disableChecks: true })
                }
                const cur = rec.currency
                const net = Result.getOrThrow(Money.parse(quote.net, cur, { allowNegative: true }))
                if (quote.outcome === "upgrade") {
                  const draft = Invoicing.total({ invoice_type: "upgrade", cycle_index: rec.subscription.cycle_index, currency: cur, lines: quote.lines.map((l) => ({ kind: "proration_charge" as const, description: l.description, quantity: 1n, amount: Result.getOrThrow(Money.parse(l.amount, cur, { allowNegative: true })) })) })
                  const trade = yield* billing.newTrade({ merchant: planned.merchant, amount: draft.total, customer_id: rec.subscription.customer_id, order_id: rec.subscription.order_id, payment_mode: "subscription", order_type: "upgrade", session: Option.none(), line: null, tax: Money.zero(cur), metadata: {}, at: now })
                  const inv = yield* billing.newInvoice({ merchant_id: merchantId, draft, trade_id: trade.trade_id, subscription_id: subscriptionId, price_id: target.id, price_version_id: target.price_version_id, customer_id: rec.subscription.customer_id, order_id: rec.subscription.order_id, status: "pending", at: now })
                  yield* Effect.orDie(invoices.insert(inv))
                  yield* Effect.orDie(trades.insert({ trade: new Trade.Trade({ ...trade, trade_status: "processing" }, { disableChecks: true }), attempts: 1, invoice_id: inv.invoice_id, subscription_id: subscriptionId }))
                  yield* emit(storage, { merchant_id: merchantId, type: "v2.trades.created", business_id: trade.trade_id, schema: Trade.Trade, data: trade, at: now })
                  if (rec.payment_token !== null) {
                    tradeToCharge = Option.some(trade.trade_id)
                    yield* billing.schedule(planned.merchant, "charge", trade.trade_id, now)
                  }
                } else if (quote.outcome === "credit_balance") {
                  const credit = Result.getOrThrow(Money.parse(next.subscription.credit_balance, cur, { allowNegative: true }))
                  next = { ...next, subscription: new Subscription.Subscription({ ...next.subscription, credit_balance: Money.format(Money.make(credit.amount - net.amount, cur)) }, { disableChecks: true }) }
                }
                yield* billing.subEvents(merchantId, next, Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, rec.subscription.status, "change_price")).events, now)
              }
            }
            yield* Effect.orDie(billing.saveSub(next, planned.version, now)).pipe(Effect.catchDefect(() => Effect.fail(new Errors.StateConflict({ resource: "subscription", id: subscriptionId, state: rec.subscription.status, reason: "modified concurrently; retry" }))))
            return { tradeToCharge, refundNet: quote.outcome === "refund" ? Option.some(quote.net) : Option.none<string>() }
          })
        )
        if (Option.isSome(charge.tradeToCharge) && rec.payment_token !== null) {
          yield* billing.chargeInvoiceTrade(merchantId, charge.tradeToCharge.value, rec.payment_token)
        }
        if (Option.isSome(charge.refundNet)) {
          const paidInvoice = yield* cycleInvoice(merchantId, rec)
          if (Option.isSome(paidInvoice) && paidInvoice.value.trade_id !== null) {
            const amount = Money.format(Money.negate(Result.getOrThrow(Money.parse(charge.refundNet.value, rec.currency, { allowNegative: true }))))
            yield* refund(merchantId, { trade_id: paidInvoice.value.trade_id, amount, reason: "proration" })
          }
        }
        return quote
      }).pipe(Effect.withSpan("Subscriptions.changePrice"))

    const revokePriceChange = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const sv = yield* load(merchantId, subscriptionId)
        if (sv.value.scheduled_price_version_id === null) return { subscription_id: subscriptionId, result: "no_pending_change" as const }
        yield* billing.saveSub({ ...sv.value, scheduled_price_version_id: null }, sv.version, yield* nowOf(merchant))
        return { subscription_id: subscriptionId, result: "revoked" as const }
      }).pipe(Effect.withSpan("Subscriptions.revokePriceChange"))

    const transitionSub = (merchantId: string, subscriptionId: string, trigger: Lifecycle.SubscriptionTrigger, change: (rec: Entities.SubscriptionRecord, at: number, to: Lifecycle.SubscriptionStatus) => Entities.SubscriptionRecord) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const sv = yield* load(merchantId, subscriptionId)
            const moved = Lifecycle.transition(Lifecycle.subscription, sv.value.subscription.status, trigger)
            if (Result.isFailure(moved)) return yield* new Errors.StateConflict({ resource: "subscription", id: subscriptionId, state: sv.value.subscription.status, reason: `cannot ${trigger.replace(/_/g, " ")}` })
            const next = change(sv.value, at, moved.success.to)
            yield* billing.saveSub(next, sv.version, at)
            yield* billing.subEvents(merchantId, next, moved.success.events, at)
            return { merchant, next, at }
          })
        )
      })

    const cancel = (merchantId: string, subscriptionId: string, input: { readonly cancel_type?: string; readonly cancel_reason?: string } = {}) =>
      Effect.gen(function* () {
        const type = input.cancel_type ?? "immediate"
        if (type !== "immediate" && type !== "end_of_period") return yield* invalid("cancel_type", "must be immediate or end_of_period")
        if (type === "end_of_period") {
          const sv = yield* load(merchantId, subscriptionId)
          if (sv.value.subscription.cancel_at_period_end) return sv.value.subscription
          const { next } = yield* transitionSub(merchantId, subscriptionId, "request_cancel_at_period_end", (rec) => ({
            ...rec,
            subscription: new Subscription.Subscription({ ...rec.subscription, cancel_at_period_end: true, cancel_at: rec.subscription.current_period_end, cancel_reason: input.cancel_reason ?? null }, { disableChecks: true })
          }))
          return next.subscription
        }
        const { next } = yield* transitionSub(merchantId, subscriptionId, "cancel", (rec, at, to) => ({
          ...rec,
          subscription: new Subscription.Subscription({ ...rec.subscription, status: to, cancel_at: dt(at), next_invoice_date: null, cancel_reason: input.cancel_reason ?? "canceled_by_merchant" }, { disableChecks: true })
        }))
        for (const kind of ["renewal", "dunning", "trial_notice", "incomplete_expiry"]) yield* storage.workQueue.cancel(merchantId, kind, subscriptionId)
        return next.subscription
      }).pipe(Effect.withSpan("Subscriptions.cancel"))

    const revokeCancel = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const sv = yield* load(merchantId, subscriptionId)
        if (!sv.value.subscription.cancel_at_period_end) {
          return yield* new Errors.StateConflict({ resource: "subscription", id: subscriptionId, state: sv.value.subscription.status, reason: "no cancellation is scheduled" })
        }
        const { next } = yield* transitionSub(merchantId, subscriptionId, "revoke_cancel", (rec) => ({
          ...rec,
          subscription: new Subscription.Subscription({ ...rec.subscription, cancel_at_period_end: false, cancel_at: null, cancel_reason: null }, { disableChecks: true })
        }))
        return next.subscription
      }).pipe(Effect.withSpan("Subscriptions.revokeCancel"))

    const pause = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const { next } = yield* transitionSub(merchantId, subscriptionId, "pause", (rec, at, to) => ({
          ...rec,
          paused_at: at,
          subscription: new Subscription.Subscription({ ...rec.subscription, status: to, next_invoice_date: null }, { disableChecks: true })
        }))
        yield* storage.workQueue.cancel(merchantId, "renewal", subscriptionId)
        yield* storage.workQueue.cancel(merchantId, "dunning", subscriptionId)
        return next.subscription
      }).pipe(Effect.withSpan("Subscriptions.pause"))

    /** Resumes a paused subscription: a new period starts now and is billed now. */
    const resume = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const { at, merchant } = yield* transitionSub(merchantId, subscriptionId, "resume", (rec, at, to) => ({
          ...rec,
          paused_at: null,
          anchor: at,
          anchor_cycle: rec.subscription.cycle_index + 1,
          subscription: new Subscription.Subscription({ ...rec.subscription, status: to, next_invoice_date: dt(at) }, { disableChecks: true })
        }))
        yield* billing.schedule(merchant, "renewal", subscriptionId, at)
        yield* billing.renew(merchantId, subscriptionId)
        return (yield* load(merchantId, subscriptionId)).value.subscription
      }).pipe(Effect.withSpan("Subscriptions.resume"))

    /** Charges the next cycle now (customer-initiated renewal). */
    const renewNow = (merchantId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const sv = yield* load(merchantId, subscriptionId)
        yield* live(sv.value, "renew")
        if (sv.value.subscription.status === "past_due") return yield* new Errors.StateConflict({ resource: "subscription", id: subscriptionId, state: "past_due", reason: "settle the open invoice first" })
        yield* billing.renew(merchantId, subscriptionId, { force: true })
        return (yield* load(merchantId, subscriptionId)).value.subscription
      }).pipe(Effect.withSpan("Subscriptions.renewNow"))

    // ------------------------------------------------------------------ usage

    /**
     * Records usage for many subscriptions of one merchant in one transaction: the records in
     * one multi-row insert that skips re-sent `event_id`s, then one running-total update per
     * subscription. All or nothing: a bad record fails the batch (its index in `param`) and
     * writes nothing. A subscription that reaches its usage threshold is invoiced afterwards.
     */
    const ingest = (merchantId: string, records: ReadonlyArray<UsageInput>, param: (index: number, field: string) => string) =>
      Effect.gen(function* () {
        if (records.length < 1 || records.length > MAX_USAGE_BATCH) return yield* invalid("records", `must hold 1 to ${MAX_USAGE_BATCH.toLocaleString("en-US")} records`)
        for (let i = 0; i < records.length; i++) {
          const r = records[i]!
          if (typeof r.subscription_id !== "string" || r.subscription_id.length === 0) return yield* invalid(param(i, "subscription_id"), "is required")
          if (!Number.isSafeInteger(r.usage_count) || r.usage_count < 1) return yield* invalid(param(i, "usage_count"), "must be a whole number ≥ 1")
          if (r.event_id !== undefined && (r.event_id.length < 1 || r.event_id.length > 255)) return yield* invalid(param(i, "event_id"), "must be 1 to 255 characters")
          if (r.timestamp !== undefined && (!Number.isSafeInteger(r.timestamp) || Math.abs(r.timestamp) > MAX_INSTANT_MS)) return yield* invalid(param(i, "timestamp"), "must be an instant (Unix ms)")
        }
        const merchant = yield* merchants.get(merchantId)
        const result = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const createdAt = dt(at)
            const found = yield* subs.getMany(merchantId, records.map((r) => r.subscription_id))
            const rows: Array<Entities.UsageRecordRow> = []
            for (let i = 0; i < records.length; i++) {
              const r = records[i]!
              const sv = found.get(r.subscription_id)
              if (sv === undefined) return yield* new Errors.NotFound({ resource: "subscription", id: r.subscription_id })
              const sub = sv.value.subscription
              if (sub.billing_dimension !== "usage") return yield* invalid(param(i, "subscription_id"), "the subscription is not billed by usage")
              yield* live(sv.value, "record usage")
              const id = yield* Ids.make(Ids.prefixes.usageRecord)
              rows.push({
                merchant_id: merchantId,
                trial: sub.status === "trial",
                // fields checked above: skip the constructor's re-validation (hot path, 1,000 per batch)
                usage: new Usage.UsageRecord({ id, subscription_id: r.subscription_id, event_id: r.event_id ?? id, usage_count: r.usage_count, cycle_index: sub.cycle_index, timestamp: dt(r.timestamp ?? at), created_at: createdAt }, { disableChecks: true })
              })
            }
            // one lock order for every writer (records, then subscriptions, by id): concurrent batches never deadlock
            const ordered = [...rows].sort((a, b) => compareKeys(a.usage.subscription_id, b.usage.subscription_id) || compareKeys(a.usage.event_id, b.usage.event_id))
            const inserted = new Set(yield* usage.insertMany(ordered))
            const added = new Map<string, bigint>()
            for (const row of inserted) {
              if (!row.trial) added.set(row.usage.subscription_id, (added.get(row.usage.subscription_id) ?? 0n) + BigInt(row.usage.usage_count))
            }
            const changed = [...added.keys()].sort(compareKeys).map((id) => {
              const sv = found.get(id)!
              const accrued = BigInt(sv.value.accrued_usage) + added.get(id)!
              return { value: { ...sv.value, accrued_usage: accrued.toString(), subscription: new Subscription.Subscription({ ...sv.value.subscription, updated_at: dt(at) }, { disableChecks: true }) }, expectedVersion: sv.version }
            })
            yield* subs.updateMany(changed)
            const due: Array<string> = []
            for (const { value } of changed) {
              if (value.subscription.billing_cycle_unit !== "over_threshold") continue
              const pv = yield* billing.version(merchantId, value.subscription.price_version_id)
              if (Pricing.thresholdReached(BigInt(value.accrued_usage), BigInt(pv.usage_threshold ?? "0"))) due.push(value.subscription.id)
            }
            return { rows, inserted, due }
          })
        ).pipe(
          // another writer updated one of the subscriptions first: re-read and apply again
          Effect.retry({ while: (e) => e._tag === "VersionConflict", times: 50 }),
          Effect.catchTags({ VersionConflict: (e) => Effect.die(e), UniqueViolation: (e) => Effect.die(e) })
        )
        for (const id of result.due) yield* billing.renew(merchantId, id, { force: true })
        const results = result.rows.map((row) => ({
          subscription_id: row.usage.subscription_id,
          event_id: row.usage.event_id,
          cycle_index: row.usage.cycle_index,
          usage_count: row.usage.usage_count,
          duplicate: !result.inserted.has(row)
        }))
        const duplicates = results.reduce((n, r) => (r.duplicate ? n + 1 : n), 0)
        return { accepted: results.length - duplicates, duplicates, records: results }
      })

    /** Records one usage event (`event_id` de-duplicates re-sends). */
    const recordUsage = (merchantId: string, subscriptionId: string, input: { readonly usage_count: number; readonly event_id?: string | undefined; readonly timestamp?: number | undefined }) =>
      Effect.map(ingest(merchantId, [{ ...input, subscription_id: subscriptionId }], (_, field) => field), (batch) => {
        const r = batch.records[0]!
        return { subscription_id: r.subscription_id, cycle_index: r.cycle_index, usage_count: r.usage_count, duplicate: r.duplicate }
      }).pipe(Effect.withSpan("Subscriptions.recordUsage"))

    /** Records up to 1,000 usage events of any of the merchant's subscriptions in one transaction. */
    const recordUsageBatch = (merchantId: string, records: ReadonlyArray<UsageInput>) =>
      ingest(merchantId, records, (index, field) => `records[${index}].${field}`).pipe(Effect.withSpan("Subscriptions.recordUsageBatch"))

    const usageSummary = (merchantId: string, subscriptionId: string, cycleIndex?: number) =>
      Effect.gen(function* () {
        const rec = (yield* load(merchantId, subscriptionId)).value
        const cycle = cycleIndex ?? rec.subscription.cycle_index
        const rows: Array<Entities.UsageRecordRow> = []
        let cursor: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(usage.list(merchantId, { limit: 100, starting_after: cursor, filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }, { column: "cycle_index", op: "in", values: [cycle] }] }))
          rows.push(...page.list)
          if (!page.has_more) break
          cursor = page.list[page.list.length - 1]!.usage.id
        }
        const total = rows.reduce((a, r) => a + r.usage.usage_count, 0)
        const trial = rows.filter((r) => r.trial).reduce((a, r) => a + r.usage.usage_count, 0)
        const pv = yield* billing.version(merchantId, rec.subscription.price_version_id)
        const amount = pv.billing_dimension === "usage" ? Pricing.rate(Price.modelOf(pv, billing.paidIndex(rec, cycle)), BigInt(total - trial), pv.currency).amount : Money.zero(pv.currency)
        return new Usage.UsageSummary({
          subscription_id: subscriptionId,
          usage_unit: pv.usage_unit,
          billing_amount: Money.format(amount),
          currency: pv.currency,
          total_usage_count: total,
          billing_usage_count: total - trial,
          trial_usage_count: trial
        })
      }).pipe(Effect.withSpan("Subscriptions.usageSummary"))

    // ------------------------------------------------------------------ refunds

    /** Refunds part or all of a succeeded trade; never more than was paid, even under concurrency. */
    const refund = (merchantId: string, input: { readonly trade_id: string; readonly amount?: string | undefined; readonly reason?: string | undefined; readonly request_key?: string | undefined }) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const reserved = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            if (input.request_key !== undefined) {
              // the same request again (a client retry after a crash): the refund it created, not a second one
              const earlier = yield* Effect.orDie(refunds.list(merchantId, { limit: 1, filters: [{ column: "request_key", op: "in", values: [input.request_key] }] }))
              const found = earlier.list[0]
              if (found) return { record: found.refund, amount: Result.getOrThrow(Money.parse(found.refund.refund_amount, found.refund.currency)), earlier: true }
            }
            const tv = yield* Effect.flatMap(trades.get(merchantId, input.trade_id), (o) => Option.match(o, { onNone: () => Effect.fail(new Errors.NotFound({ resource: "trade", id: input.trade_id })), onSome: Effect.succeed }))
            const t = tv.value.trade
            if (t.trade_status !== "succeeded") return yield* new Errors.StateConflict({ resource: "trade", id: t.trade_id, state: t.trade_status, reason: "only a succeeded trade can be refunded" })
            const paid = Result.getOrThrow(Money.parse(t.amount, t.currency))
            const refunded = Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency))
            const left = Invoicing.refundable(paid, refunded)
            let amount = left
            if (input.amount !== undefined) {
              const parsed = Money.parse(input.amount, t.currency)
              if (Result.isFailure(parsed)) return yield* invalid("amount", parsed.failure.message)
              amount = parsed.success
            }
            if (amount.amount <= 0n) return yield* invalid("amount", "must be greater than 0")
            if (amount.amount > left.amount) return yield* invalid("amount", `at most ${Money.format(left)} can still be refunded`)
            const refund_id = yield* Ids.make(Ids.prefixes.refund)
            // reserve the amount on the trade: a concurrent refund fails its version check
            yield* trades.update({ ...tv.value, trade: new Trade.Trade({ ...t, total_refunded_amount: Money.format(Money.make(refunded.amount + amount.amount, t.currency)) }, { disableChecks: true }) }, tv.version).pipe(
              Effect.catchTag("VersionConflict", () => Effect.fail(new Errors.StateConflict({ resource: "trade", id: t.trade_id, state: t.trade_status, reason: "another refund is in progress; retry" }))),
              Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
            )
            const record = new Refund.Refund({ refund_id, trade_id: t.trade_id, invoice_id: tv.value.invoice_id, refund_amount: Money.format(amount), currency: t.currency, refund_status: "pending", reason: input.reason ?? null, created_at: dt(at), finished_at: null })
            yield* Effect.orDie(refunds.insert({ merchant_id: merchantId, refund: record, request_key: input.request_key ?? null }))
            return { record, amount, earlier: false }
          })
        )
        if (reserved.earlier && reserved.record.refund_status !== "pending") return reserved.record
        // the gateway de-duplicates by refund_id, so asking again for a pending refund is safe
        const outcome = yield* gateway.refund({ refund_id: reserved.record.refund_id, trade_id: input.trade_id, amount: reserved.amount })
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const rv = Option.getOrThrow(yield* refunds.get(merchantId, reserved.record.refund_id))
            if (rv.value.refund.refund_status !== "pending") return rv.value.refund
            const tv = Option.getOrThrow(yield* trades.get(merchantId, input.trade_id))
            const t = tv.value.trade
            if (outcome._tag === "Failed") {
              const failed = new Refund.Refund({ ...rv.value.refund, refund_status: "failed", finished_at: dt(at) })
              yield* Effect.orDie(refunds.update({ ...rv.value, refund: failed }, rv.version))
              const back = Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency)).amount - reserved.amount.amount
              yield* trades.update({ ...tv.value, trade: new Trade.Trade({ ...t, total_refunded_amount: Money.format(Money.make(back, t.currency)) }, { disableChecks: true }) }, tv.version)
              yield* emit(storage, { merchant_id: merchantId, type: "v2.refunds.failed", business_id: failed.refund_id, schema: Refund.Refund, data: failed, at })
              return failed
            }
            const done = new Refund.Refund({ ...rv.value.refund, refund_status: "succeeded", finished_at: dt(at) })
            yield* Effect.orDie(refunds.update({ ...rv.value, refund: done }, rv.version))
            const full = Result.getOrThrow(Money.parse(t.total_refunded_amount, t.currency)).amount >= Result.getOrThrow(Money.parse(t.amount, t.currency)).amount
            yield* trades.update({ ...tv.value, trade: new Trade.Trade({ ...t, refund_status: full ? "refunded" : "partially_refunded" }, { disableChecks: true }) }, tv.version)
            yield* emit(storage, { merchant_id: merchantId, type: "v2.refunds.succeeded", business_id: done.refund_id, schema: Refund.Refund, data: done, at })
            if (tv.value.invoice_id !== null) {
              const iv = Option.getOrThrow(yield* invoices.get(merchantId, tv.value.invoice_id))
              const original = iv.value
              const moved = Lifecycle.transition(Lifecycle.invoice, original.biz_status, full ? "full_refund" : "partial_refund")
              if (Result.isSuccess(moved)) {
                const updated = new Invoice.Invoice({ ...original, biz_status: moved.success.to, refund_order_id: done.refund_id }, { disableChecks: true })
                yield* invoices.update(updated, iv.version)
                yield* emit(storage, { merchant_id: merchantId, type: "v2.invoice.refunded", business_id: updated.invoice_id, schema: Invoice.Invoice, data: updated, at })
              }
              const draft = Invoicing.refund({ amount: reserved.amount, cycle_index: original.cycle_index, original_invoice_id: original.invoice_id, reason: input.reason ?? "refund" })
              const refundInvoice = yield* billing.newInvoice({ merchant_id: merchantId, draft, trade_id: t.trade_id, subscription_id: original.subscription_id, price_id: original.price_id, price_version_id: original.price_version_id, customer_id: original.customer_id, order_id: original.order_id, status: "success", at })
              yield* Effect.orDie(invoices.insert(new Invoice.Invoice({ ...refundInvoice, refund_order_id: done.refund_id }, { disableChecks: true })))
            }
            return done
          })
        ).pipe(
          // a concurrent refund of the same trade committed first: re-read and apply again
          Effect.retry({ while: (e) => e._tag === "VersionConflict", times: 50 }),
          Effect.catchTag("VersionConflict", (e) => Effect.die(e)),
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        )
      }).pipe(Effect.withSpan("Subscriptions.refund"))

    const getRefund = (merchantId: string, refundId: string) =>
      Effect.flatMap(refunds.get(merchantId, refundId), (o) => Option.match(o, { onNone: () => Effect.fail(new Errors.NotFound({ resource: "refund", id: refundId })), onSome: (v) => Effect.succeed(v.value.refund) }))

    const listRefunds = (merchantId: string, query: Store.ListQuery) =>
      Effect.map(pageErrors(refunds.list(merchantId, query)), (p) => ({ has_more: p.has_more, list: p.list.map((r) => r.refund) }))

    return {
      previewChange, changePrice, revokePriceChange, cancel, revokeCancel, pause, resume, renewNow,
      recordUsage, recordUsageBatch, usageSummary, refund, getRefund, listRefunds
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}

