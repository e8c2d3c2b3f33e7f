/**
 * Record construction and the arithmetic every money service shares: new trades and invoices,
 * currency conversion of drafts, tax and discounts, the subscription's schedule, the
 * proration basis, and the bounds checked at input. Functions only: the services that use
 * them pass their dependencies in.
 */
import { DateTime, Effect, Option, Result } from "effect"
import * as BillingPeriod from "../BillingPeriod.js"
import * as Customer from "../Customer.js"
import type * as CheckoutSession from "../CheckoutSession.js"
import { Discounts, type Metadata } from "../Common.js"
import * as Decimal from "../Decimal.js"
import * as Discount from "../Discount.js"
import * as Entities from "../Entities.js"
import * as Errors from "../Errors.js"
import * as Ids from "../Ids.js"
import * as Invoice from "../Invoice.js"
import * as Invoicing from "../Invoicing.js"
import * as Lifecycle from "../Lifecycle.js"
import type * as Merchant from "../Merchant.js"
import * as Money from "../Money.js"
import type * as Ports from "../Ports.js"
import * as Price from "../Price.js"
import * as Pricing from "../Pricing.js"
import type * as Store from "../Store.js"
import type * as Secrets from "../Secrets.js"
import type * as Settings from "../Settings.js"
import * as Subscription from "../Subscription.js"
import * as Tax from "../Tax.js"
import * as Trade from "../Trade.js"
import { dt, emit, emitAll, laneOf, type StorageService } from "./engine.js"

export const DAY = 86_400_000

export const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

export const fmtMinor = (amount: bigint, currency: string) => Money.format(Money.make(amount, currency))

export const sumOf = (discounts: ReadonlyArray<Invoicing.AppliedDiscount>) =>
  discounts.reduce((a, d) => a + d.amount.amount, 0n)

export const parseMoney = (amount: string, currency: string) =>
  Result.getOrThrow(Money.parse(amount, currency, { allowNegative: true }))

/** Another writer got there first: a store's `VersionConflict`, or the engine's `ConcurrentUpdate`. */
export const isVersionConflict = (u: unknown): u is Store.VersionConflict | Errors.ConcurrentUpdate =>
  typeof u === "object" &&
  u !== null &&
  ((u as { _tag?: unknown })._tag === "VersionConflict" || (u as { _tag?: unknown })._tag === "ConcurrentUpdate")

export const must = <A>(o: Option.Option<Store.Versioned<A>>, resource: string, id: string) =>
  Option.match(o, { onNone: () => Effect.fail(new Errors.NotFound({ resource, id })), onSome: Effect.succeed })

/** A subscription's record, or `NotFound`. */
export const loadSub = (subs: Store.Repository<Entities.SubscriptionRecord>, merchantId: string, id: string) =>
  Effect.flatMap(subs.get(merchantId, id), (o) => must(o, "subscription", id))

/** Succeeds when the subscription is live (trial, active, past_due); else `SubscriptionNotLive`. */
export const mustBeLive = (rec: Entities.SubscriptionRecord, action: string) =>
  ["trial", "active", "past_due"].includes(rec.subscription.status)
    ? Effect.void
    : Effect.fail(
        new Errors.SubscriptionNotLive({
          subscriptionId: rec.subscription.id,
          state: rec.subscription.status,
          action
        })
      )

// ------------------------------------------------------------------ bounds

/** Exchange rates accepted (captured at checkout or from the FX port): 1 primary = rate target. */
export const MAX_RATE = Decimal.make(1_000_000n)
export const RATE_RULE = "must be a number greater than 0 and at most 1000000, with at most 12 decimals"
export const rateInBounds = (r: Decimal.Decimal) =>
  Decimal.isPositive(r) && Decimal.compare(r, MAX_RATE) <= 0 && r.scale <= 12

/**
 * What one cycle of `pv` × `quantity` can bill, in the price's currency: each intro phase's
 * price, the base price, and a paid trial. Usage is bounded where it is recorded.
 */
export const cycleAmounts = (pv: Price.PriceVersion, quantity: bigint): ReadonlyArray<Money.Money> => {
  const starts = [0]
  for (const t of pv.price_plan?.price_plan_tiers ?? []) starts.push(starts[starts.length - 1]! + t.period_count)
  const amounts =
    pv.billing_dimension === "usage"
      ? []
      : starts.map((i) => Pricing.rate(Price.modelOf(pv, i), quantity, pv.currency).amount)
  const trial = Price.trialOf(pv)
  if (Option.isSome(trial)) amounts.push(Pricing.trialCharge(trial.value.trial, pv.currency))
  return amounts
}

// ------------------------------------------------------------------ documents

/** A new trade (status `requires_payment_method`; the caller moves it). */
export const newTrade = (input: {
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
  Effect.map(
    Ids.make(Ids.prefixes.trade),
    (trade_id) =>
      new Trade.Trade(
        {
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
          trade_status: Lifecycle.trade.initial,
          txn_time: null,
          created_at: dt(input.at),
          refund_status: Lifecycle.tradeRefund.initial,
          total_refunded_amount: fmtMinor(0n, input.amount.currency),
          session_id: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_id }),
          session_url: Option.match(input.session, { onNone: () => null, onSome: (s) => s.session_url }),
          order_type: input.order_type,
          closed_at: null,
          closed_reason: null,
          first_source_channel: Option.match(input.session, {
            onNone: () => null,
            onSome: (s) => s.first_source_channel
          }),
          last_source_channel: null,
          tax_amount: Money.format(input.tax),
          metadata: input.metadata,
          last_payment_error: null,
          next_action: null,
          refer_info: null,
          line_items: input.line ? [input.line] : [],
          discounts: new Discounts({ current_period: [] }, { disableChecks: true }),
          billing_address: Option.match(input.session, { onNone: () => null, onSome: (s) => s.billing_address }),
          payment_info: null,
          dispute_status: Lifecycle.tradeDispute.initial,
          dispute: null
        },
        { disableChecks: true }
      )
  )

/**
 * Records a new trade as submitted (its charge is on its way), linked to its invoice and
 * subscription, and emits `v2.trades.created` with the trade as it was created; answers the
 * submitted trade.
 */
export const submitTrade = (
  storage: StorageService,
  input: {
    readonly trade: Trade.Trade
    readonly invoice_id: string | null
    readonly subscription_id: string | null
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const submitted = Lifecycle.must(Trade.move(input.trade, "submit_payment"))
    yield* Effect.orDie(
      storage.repository(Entities.trade).insert({
        trade: submitted,
        attempts: 1,
        invoice_id: input.invoice_id,
        subscription_id: input.subscription_id
      })
    )
    yield* emit(storage, {
      merchant_id: input.trade.merchant_id,
      type: "v2.trades.created",
      business_id: input.trade.trade_id,
      schema: Trade.Trade,
      data: input.trade,
      at: input.at
    })
    return submitted
  })

/** A renewal's trade: the cycle's taxed total, off-session, no session and no line. */
/**
 * Whether a charge of `amount` would be under the processor's minimum for the merchant (Stripe:
 * 0.50 USD…): such an invoice is not charged but carried to the customer's next invoice
 * (`Invoicing.carry`). Never for a gateway without a minimum (the sandbox).
 */
export const underMinimum = (
  gateway: Ports.PaymentGateway["Service"],
  merchantId: string,
  amount: Money.Money
): Effect.Effect<boolean> =>
  amount.amount <= 0n || gateway.minimumCharge === undefined
    ? Effect.succeed(false)
    : Effect.map(
        gateway.minimumCharge({ merchant_id: merchantId, currency: amount.currency }),
        (minimum) =>
          Option.isSome(minimum) && minimum.value.currency === amount.currency && amount.amount < minimum.value.amount
      )

/** The description of the `balance` line that carries an invoice's total to the next one. */
export const CARRIED = "Under the minimum charge: carried to your next invoice"

export const renewalTrade = (
  merchant: Merchant.Merchant,
  sub: Subscription.Subscription,
  taxed: { readonly total: Money.Money; readonly tax: Money.Money },
  at: number
) =>
  newTrade({
    merchant,
    amount: taxed.total,
    customer_id: sub.customer_id,
    order_id: sub.order_id,
    payment_mode: "subscription",
    order_type: "renewal",
    session: Option.none(),
    line: null,
    tax: taxed.tax,
    metadata: {},
    at
  })

/** A span of time, Unix ms. */
export interface Span {
  readonly start: number
  readonly end: number
}

/** A draft's document fields: its lines (priced, then discounts), subtotal and tax lines. */
export const documentOf = (
  draft: Invoicing.Draft,
  period: Span | undefined,
  usagePeriod?: Span | undefined
): Pick<Invoice.Invoice, "subtotal" | "lines" | "tax_lines"> => ({
  subtotal: Money.format(draft.subtotal),
  lines: [
    ...draft.lines.map((l) => {
      const span = l.kind === "usage" ? usagePeriod : l.kind === "refund" || l.kind === "balance" ? undefined : period
      return new Invoice.InvoiceLine(
        {
          kind: l.kind,
          description: l.description,
          quantity: l.quantity.toString(),
          amount: Money.format(l.amount),
          period_start: span ? dt(span.start) : null,
          period_end: span ? dt(span.end) : null
        },
        { disableChecks: true }
      )
    }),
    ...draft.discounts
      .filter((d) => d.amount.amount > 0n)
      .map(
        (d) =>
          new Invoice.InvoiceLine(
            {
              kind: "discount",
              description: d.discount_code !== "" ? `Discount ${d.discount_code}` : "Discount",
              quantity: "1",
              amount: Money.format(Money.negate(d.amount)),
              period_start: null,
              period_end: null
            },
            { disableChecks: true }
          )
      )
  ],
  tax_lines: draft.tax_lines.map(
    ({ taxable, amount, ...rate }) =>
      new Invoice.InvoiceTaxLine(
        { ...rate, taxable_amount: Money.format(taxable), amount: Money.format(amount) },
        { disableChecks: true }
      )
  )
})

/** An issued invoice's tax lines as money (the inverse of {@link documentOf}'s). */
export const taxLinesOf = (invoice: Invoice.Invoice): ReadonlyArray<Invoicing.TaxLine> =>
  invoice.tax_lines.map(({ taxable_amount, amount, ...rate }) => ({
    ...rate,
    taxable: Result.getOrThrow(Money.parse(taxable_amount, invoice.currency, { allowNegative: true })),
    amount: Result.getOrThrow(Money.parse(amount, invoice.currency, { allowNegative: true }))
  }))

/**
 * Issuing invoices: their numbers, in order, from the merchant's gapless counters, the parties as
 * they stand now (the customer's name, email and address, the merchant's name: the snapshot the
 * page, the PDF and the API show from then on), and their signed links (the hosted page and the
 * PDF). Call `issue` in the transaction that makes the invoices final — inserting them, or, for
 * a checkout's first invoice, recording its payment — so a rollback returns the numbers.
 */
export const invoiceDocuments = (
  storage: StorageService,
  secrets: Secrets.Secrets["Service"],
  settings: Pick<Settings.Settings["Service"], "publicUrl">
) => {
  const base = settings.publicUrl.replace(/\/+$/, "")
  const customers = storage.repository(Entities.customer)
  type Issuer = Pick<Merchant.Merchant, "merchant_id" | "invoice_prefix" | "name">
  const issue = (merchant: Issuer, invoices: ReadonlyArray<Invoice.Invoice>) =>
    Effect.gen(function* () {
      const next = new Map<string, number>()
      const seriesOf = (i: Invoice.Invoice) => Invoice.seriesOf(merchant.invoice_prefix, i.invoice_type)
      for (const series of new Set(invoices.map(seriesOf))) {
        const count = invoices.filter((i) => seriesOf(i) === series).length
        next.set(series, yield* storage.counters.take(merchant.merchant_id, series, count))
      }
      const parties = new Map<string, Pick<Invoice.Invoice, "customer_name" | "customer_email" | "customer_address">>()
      for (const id of new Set(invoices.map((i) => i.customer_id))) {
        const found = yield* Effect.orDie(customers.get(merchant.merchant_id, id))
        const c = Option.getOrUndefined(found)?.value
        parties.set(id, {
          customer_name: c?.name ?? null,
          customer_email: c?.email ?? null,
          customer_address: c?.address ? Customer.formatAddress(c.address) || null : null
        })
      }
      return yield* Effect.forEach(invoices, (i) =>
        Effect.map(secrets.sign(`invoice:${i.merchant_id}:${i.invoice_id}`), (token) => {
          const n = next.get(seriesOf(i))!
          next.set(seriesOf(i), n + 1)
          const page = `${base}/invoice/${i.invoice_id}/${token}`
          return new Invoice.Invoice(
            {
              ...i,
              ...parties.get(i.customer_id)!,
              merchant_name: merchant.name,
              number: Invoice.numberOf(merchant.invoice_prefix, i.invoice_type, n),
              hosted_invoice_url: page,
              invoice_pdf: `${page}/pdf`
            },
            { disableChecks: true }
          )
        })
      )
    })
  return {
    issue,
    issueOne: (merchant: Issuer, invoice: Invoice.Invoice) => Effect.map(issue(merchant, [invoice]), (all) => all[0]!),
    /** Whether `token` is the signature of this invoice's links. */
    verify: (merchantId: string, invoiceId: string, token: string) =>
      Effect.map(secrets.sign(`invoice:${merchantId}:${invoiceId}`), (expected) => timingSafeEqual(expected, token))
  }
}

/** Whether two signatures are equal, in a time that does not depend on where they differ. */
export const timingSafeEqual = (a: string, b: string) => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * A new invoice from a draft, born `open` and moved at once: `charge` (a charge is on its way:
 * `pending`) or `settle_without_charge` (nothing to collect: `success`).
 */
export const newInvoice = (input: {
  readonly merchant_id: string
  readonly draft: Invoicing.Draft
  readonly trade_id: string | null
  readonly subscription_id: string | null
  readonly price_id: string | null
  readonly price_version_id: string | null
  readonly customer_id: string
  readonly order_id: string | null
  readonly trigger: "charge" | "settle_without_charge"
  readonly at: number
  /** The service period the cycle's lines cover (Unix ms), when they cover one. */
  readonly period?: Span | undefined
  /** The period usage lines bill in arrears (the one before), when known. */
  readonly usagePeriod?: Span | undefined
}) =>
  Effect.map(
    Ids.make(Ids.prefixes.invoice),
    (invoice_id) =>
      new Invoice.Invoice(
        {
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
          biz_status: Lifecycle.invoice.initial,
          invoice_type: input.draft.invoice_type,
          paid_at: null,
          cycle_index: input.draft.cycle_index,
          created_at: dt(input.at),
          metadata: {},
          Discounts: new Discounts({
            current_period: input.draft.discounts.map((d) => ({
              discount_id: d.discount_id,
              discount_code: d.discount_code,
              discount_amount: Money.format(d.amount)
            }))
          }),
          price_version_id: input.price_version_id,
          tax_amount: Money.format(input.draft.tax),
          ...documentOf(input.draft, input.period, input.usagePeriod),
          number: null,
          hosted_invoice_url: null,
          invoice_pdf: null,
          customer_name: null,
          customer_email: null,
          customer_address: null,
          merchant_name: null
        },
        { disableChecks: true }
      )
  ).pipe(
    Effect.map((open) =>
      Lifecycle.must(
        Invoice.move(open, input.trigger, input.trigger === "settle_without_charge" ? { paid_at: dt(input.at) } : {})
      )
    )
  )

/**
 * Where the engine taxes a customer: the checkout's billing address when it names a country,
 * else the customer's stored address; null when neither does.
 */
export const taxAddressOf = (
  storage: StorageService,
  merchantId: string,
  customerId: string | null,
  billing?: { readonly country_code?: string | undefined; readonly province_code?: string | undefined } | null
) =>
  Effect.gen(function* () {
    const fromBilling = billing ? Tax.addressOf(billing.country_code, billing.province_code) : null
    if (fromBilling !== null || customerId === null) return fromBilling
    const found = yield* Effect.orDie(storage.repository(Entities.customer).get(merchantId, customerId))
    const address = Option.isSome(found) ? found.value.value.address : null
    return address ? Tax.addressOf(address.country, address.province) : null
  })

/**
 * An amount (already discounted) with its tax at the customer's address, as one invoice line
 * would carry it: `total` adds exclusive taxes, `tax` counts every tax. What a checkout session
 * shows before the payer pays.
 */
export const taxOnAmount =
  (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  (
    merchantId: string,
    customerId: string | null,
    billing: CheckoutSession.CheckoutSession["billing_address"] | undefined,
    amount: Money.Money
  ) =>
    Effect.gen(function* () {
      if (amount.amount <= 0n) return { total: amount, tax: Money.zero(amount.currency) }
      const address = yield* taxAddressOf(storage, merchantId, customerId, billing)
      const lines = yield* taxes.tax({
        merchant_id: merchantId,
        customer_id: customerId ?? "",
        address,
        taxable: amount
      })
      const sum = (ls: ReadonlyArray<Invoicing.TaxLine>) => ls.reduce((a, t) => a + t.amount.amount, 0n)
      return {
        total: Money.make(amount.amount + sum(lines.filter((t) => !t.inclusive)), amount.currency),
        tax: Money.make(sum(lines), amount.currency)
      }
    })

/**
 * A pure draft plus tax from the injected calculator, at the customer's tax address (see
 * {@link taxAddressOf}). The draft's discounts stay (as the amounts they came to) and
 * `extraDiscounts` (the subscription's, in the draft's currency) apply after them; tax is on the
 * discounted amount; then customer credit.
 */
export const withTax =
  (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  (
    draft: Invoicing.Draft,
    merchantId: string,
    customerId: string,
    creditBalance?: Money.Money,
    extraDiscounts: ReadonlyArray<Invoicing.DiscountRule> = [],
    where: {
      /** The checkout's billing address (first payments). */
      readonly billing?: CheckoutSession.CheckoutSession["billing_address"]
      /** The address, already resolved (a renewal batch reads its customers at once). */
      readonly address?: Tax.TaxAddress | null
    } = {}
  ) =>
    Effect.gen(function* () {
      const discounts: ReadonlyArray<Invoicing.DiscountRule> = [
        ...draft.discounts.map((d) =>
          Invoicing.DiscountRule.Amount({
            discount_id: d.discount_id,
            discount_code: d.discount_code,
            amount: d.amount
          })
        ),
        ...extraDiscounts
      ]
      const untaxed = Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: draft.lines,
        discounts
      })
      const taxable = untaxed.subtotal.amount > 0n ? untaxed.subtotal.amount - sumOf(untaxed.discounts) : 0n
      const address =
        where.address !== undefined
          ? where.address
          : yield* taxAddressOf(storage, merchantId, customerId, where.billing)
      const lines =
        taxable > 0n
          ? yield* taxes.tax({
              merchant_id: merchantId,
              customer_id: customerId,
              address,
              taxable: Money.make(taxable, draft.currency)
            })
          : []
      return Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: draft.lines,
        discounts,
        tax: () => lines,
        ...(creditBalance ? { creditBalance } : {}),
        ...(Option.isSome(draft.original_invoice_id) ? { original_invoice_id: draft.original_invoice_id.value } : {})
      })
    })

/**
 * A renewal's invoice: the cycle's bill with the subscription's running discounts, the tax at
 * the customer's address and the customer's credit — the one tax step of `Renewals.renew`,
 * `Renewals.upcoming` and `RenewalBatches` (which gives the address it read for the batch).
 */
export const taxRenewal =
  (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  (
    merchantId: string,
    rec: Entities.SubscriptionRecord,
    b: { readonly draft: Invoicing.Draft; readonly credit: Money.Money },
    address?: Tax.TaxAddress | null
  ) =>
    withTax(taxes, storage)(
      b.draft,
      merchantId,
      rec.subscription.customer_id,
      b.credit,
      discountRules(rec, b.draft.cycle_index),
      address !== undefined ? { address } : {}
    )

/** Converts a draft's amounts with a captured rate (1 primary = rate target). */
export const convertDraft = (draft: Invoicing.Draft, rate: string | null, target: string): Invoicing.Draft => {
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
    tax_lines: draft.tax_lines.map((t) => ({ ...t, taxable: conv(t.taxable), amount: conv(t.amount) })),
    creditApplied: conv(draft.creditApplied),
    total: Money.make(
      draft.lines.reduce((a, l) => a + conv(l.amount).amount, 0n),
      target
    )
  }
}

// ------------------------------------------------------------------ a subscription's schedule and basis

export const scheduleOf = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion): BillingPeriod.Schedule => ({
  anchor: rec.anchor ?? 0,
  unit: pv.price_plan?.billing_cycle_unit ?? "customer-initiated",
  count: pv.price_plan?.billing_cycle_count ?? 1,
  totalCycles: rec.subscription.total_cycles ?? undefined
})

/**
 * The periods a renewal invoice covers: the cycle it opens (`next`, ending at `periodEnd`) and,
 * for usage in arrears, the cycle that just ended (`rec`'s current period).
 */
export const renewalPeriods = (
  rec: Entities.SubscriptionRecord,
  next: Entities.SubscriptionRecord,
  periodEnd: number | null
): { readonly period: Span | undefined; readonly usagePeriod: Span | undefined } => {
  const ms = (t: Subscription.Subscription["current_period_start"]) => (t === null ? null : DateTime.toEpochMillis(t))
  const start = ms(next.subscription.current_period_start)
  const prevStart = ms(rec.subscription.current_period_start)
  const prevEnd = ms(rec.subscription.current_period_end)
  return {
    period: start !== null && periodEnd !== null ? { start, end: periodEnd } : undefined,
    usagePeriod: prevStart !== null && prevEnd !== null ? { start: prevStart, end: prevEnd } : undefined
  }
}

/**
 * The service period of a subscription's first invoice, paid at `at`: its trial, else its first
 * cycle (none for a customer-initiated price).
 */
export const firstPeriod = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion, at: number): Span | undefined =>
  rec.trial_end !== null
    ? { start: at, end: rec.trial_end }
    : Option.getOrUndefined(BillingPeriod.period(scheduleOf({ ...rec, anchor: at }, pv), 0))

/** Paid cycles before `cycleIndex` (selects intro phases and counts fixed terms). */
export const paidIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) =>
  cycleIndex - (rec.trial_end !== null ? 1 : 0)

/** The period index of a cycle relative to the anchor. */
export const periodIndex = (rec: Entities.SubscriptionRecord, cycleIndex: number) => cycleIndex - rec.anchor_cycle

/** A discount as the rule an invoice applies: a percentage in basis points, or its fixed amount. */
export const discountRule = (d: Discount.Discount): Invoicing.DiscountRule =>
  d.discount_type === "percentage"
    ? Invoicing.DiscountRule.Percentage({
        discount_id: d.discount_id,
        discount_code: d.code ?? "",
        basisPoints: BigInt(d.percent_off ?? 0) * 100n
      })
    : Invoicing.DiscountRule.Amount({
        discount_id: d.discount_id,
        discount_code: d.code ?? "",
        amount: Result.getOrThrow(Money.parse(d.amount_off ?? "0", d.currency))
      })

/** A redeemed discount as the term a subscription carries, from its first paid cycle `firstCycle`. */
export const discountTerm = (d: Discount.Discount, firstCycle: number): Entities.DiscountTerm => ({
  discount_id: d.discount_id,
  discount_code: d.code ?? "",
  basis_points: d.discount_type === "percentage" ? String((d.percent_off ?? 0) * 100) : null,
  amount: d.discount_type === "fixed_amount" ? d.amount_off : null,
  first_cycle: firstCycle,
  cycles: Discount.cyclesOf(d)
})

/** What `amount` costs after `rule`, rounded as an invoice rounds it (never below zero). */
export const afterDiscount = (amount: Money.Money, rule: Invoicing.DiscountRule): Money.Money => {
  const t = Invoicing.total({
    invoice_type: "initial",
    cycle_index: 0,
    currency: amount.currency,
    lines: [{ kind: "subscription", description: "", quantity: 1n, amount }],
    discounts: [rule]
  })
  return Money.make(t.subtotal.amount - sumOf(t.discounts), amount.currency)
}

/** The subscription's discounts whose window covers `cycleIndex`, as rules in its settlement currency. */
export const discountRules = (
  rec: Entities.SubscriptionRecord,
  cycleIndex: number
): ReadonlyArray<Invoicing.DiscountRule> =>
  rec.discounts
    .filter((d) => Discount.inWindow(d, cycleIndex))
    .map((d) =>
      d.basis_points !== null
        ? Invoicing.DiscountRule.Percentage({
            discount_id: d.discount_id,
            discount_code: d.discount_code,
            basisPoints: BigInt(d.basis_points)
          })
        : Invoicing.DiscountRule.Amount({
            discount_id: d.discount_id,
            discount_code: d.discount_code,
            amount: Result.getOrThrow(Money.parse(d.amount ?? "0", rec.currency))
          })
    )

/**
 * What a whole period of `pv` × `quantity` costs this subscription before tax: the cycle price
 * (intro phase of `cycleIndex`, no usage) in the settlement currency, less its discounts. The
 * basis proration credits and charges (see docs/proration.md).
 */
export const fullCycle = (
  rec: Entities.SubscriptionRecord,
  pv: Price.PriceVersion,
  quantity: bigint,
  cycleIndex: number
): Money.Money => {
  const draft = convertDraft(
    Result.getOrThrow(
      Invoicing.cycle({
        invoice_type: "renewal",
        price: pv,
        cycle_index: cycleIndex,
        paidCycles: paidIndex(rec, cycleIndex),
        quantity,
        usage: 0n,
        existing: []
      })
    ),
    rec.fx_rate,
    rec.currency
  )
  const t = Invoicing.total({
    invoice_type: "renewal",
    cycle_index: cycleIndex,
    currency: rec.currency,
    lines: draft.lines,
    discounts: discountRules(rec, cycleIndex)
  })
  const net = t.subtotal.amount - sumOf(t.discounts)
  return Money.make(net > 0n ? net : 0n, rec.currency)
}

/** The basis of the plan in force (see {@link fullCycle}); records from before it existed use the current price. */
export const planBasis = (rec: Entities.SubscriptionRecord, pv: Price.PriceVersion) =>
  rec.plan_basis !== null
    ? Result.getOrThrow(Money.parse(rec.plan_basis, rec.currency))
    : fullCycle(rec, pv, BigInt(rec.subscription.quantity), rec.subscription.cycle_index)

// ------------------------------------------------------------------ writes every service makes

/** Storage helpers bound to one storage. */
export const writes = (storage: StorageService) => {
  const subs = storage.repository(Entities.subscription)
  const versions = storage.repository(Entities.priceVersion)
  return {
    /**
     * Saves a subscription read at version `expected`. Another writer in between (a concurrent
     * call on the same subscription) is a `ConcurrentUpdate`: the transaction rolls back, nothing
     * is written, and the call may be retried.
     */
    saveSub: (rec: Entities.SubscriptionRecord, expected: number, at: number) =>
      subs
        .update(
          {
            ...rec,
            subscription: new Subscription.Subscription(
              { ...rec.subscription, updated_at: dt(at) },
              { disableChecks: true }
            )
          },
          expected
        )
        .pipe(
          Effect.catchTag("VersionConflict", () =>
            Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: rec.subscription.id }))
          ),
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        ),
    /** The subscription's events, in order, in the caller's transaction. */
    subEvents: (
      merchant_id: string,
      rec: Entities.SubscriptionRecord,
      types: ReadonlyArray<Lifecycle.EventType>,
      at: number
    ) =>
      emitAll(storage, types, {
        merchant_id,
        business_id: rec.subscription.id,
        schema: Subscription.Subscription,
        data: rec.subscription,
        at
      }),
    /** Schedules work for a subject on the merchant's lane. */
    schedule: (merchant: Merchant.Merchant, kind: string, subject_id: string, due_at: number) =>
      storage.workQueue.schedule({
        lane: laneOf(merchant),
        merchant_id: merchant.merchant_id,
        kind,
        subject_id,
        due_at
      }),
    /** A price version the engine holds a reference to (missing is a defect). */
    version: (merchantId: string, id: string) =>
      Effect.flatMap(versions.get(merchantId, id), (o) => Effect.orDie(must(o, "price_version", id))).pipe(
        Effect.map((v) => v.value)
      )
  }
}
