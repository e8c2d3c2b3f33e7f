/**
 * Paying a checkout session — exactly one charge per session under any number of concurrent
 * pays: the pay transaction claims the session by its version, the others fail with a conflict. A
 * customer's retry after a decline is a new attempt of the same trade; a pay while the current
 * attempt's outcome is unknown sends that same attempt again (the gateway answers a repeated
 * (trade, attempt) with its first outcome, so the card is charged once).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as CustomerBalance from "../customers/CustomerBalance.js"
import * as BillingPeriod from "../money/BillingPeriod.js"
import * as BillingAnchor from "../subscriptions/BillingAnchor.js"
import * as Catalog from "../catalog/Catalog.js"
import * as Checkout from "./Checkout.js"
import * as CheckoutSession from "./CheckoutSession.js"
import * as Customer from "../customers/Customer.js"
import * as Customers from "../customers/Customers.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, merchantNow, msOf, nowOf } from "../kernel/ServiceSupport.js"
import { discountRule } from "../discounts/Discount.js"
import { discountTerm } from "../subscriptions/SubscriptionTerms.js"
import { newInvoice } from "../invoices/InvoiceDocuments.js"
import { CARRIED, convertDraft } from "../invoices/Invoicing.js"
import { fmtMinor } from "../money/Money.js"
import { underMinimum } from "../payments/Charges.js"
import { newTrade, submitTrade } from "../payments/TradeStore.js"
import { firstPeriod, fullCycle } from "../subscriptions/SubscriptionTerms.js"
import { withItemLines, withoutUsage } from "../subscriptions/SubscriptionItems.js"
import { baseIndex, isOneTime, type SoldLine, withOneTimeLines } from "./SessionAmounts.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { taxAddressOf, withTax } from "../taxes/TaxRates.js"
import { must } from "../kernel/ServiceSupport.js"
import type * as Discount from "../discounts/Discount.js"
import * as Discounts from "../discounts/Discounts.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Payments from "../payments/Payments.js"
import * as Ports from "../kernel/Ports.js"
import * as Price from "../catalog/Price.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"
import * as Subscription from "../subscriptions/Subscription.js"
import * as Tax from "../taxes/Tax.js"
import * as Trade from "../payments/Trade.js"

/** A checkout's billing address as a customer address, when it names a country. */
const billingAddressOf = (b: CheckoutSession.CheckoutSession["billing_address"]): Customer.Address | undefined =>
  b && Tax.addressOf(b.country_code, b.province_code) !== null
    ? new Customer.Address({
        ...(b.address_line1 !== undefined ? { line1: b.address_line1 } : {}),
        ...(b.address_line2 !== undefined ? { line2: b.address_line2 } : {}),
        ...(b.city !== undefined ? { city: b.city } : {}),
        ...(b.province_code !== undefined ? { province: b.province_code } : {}),
        ...(b.postal_code !== undefined ? { postal_code: b.postal_code } : {}),
        ...(b.country_code !== undefined ? { country: b.country_code } : {})
      })
    : undefined

const paymentInProgress = (sessionId: string) =>
  new Errors.SessionNotPayable({ sessionId, state: "payment_in_progress" })

/**
 * What the payer typed on the hosted page beside the card: their email and name, kept on the
 * customer where it has none.
 *
 * @since 0.1.0
 */
export interface Payer {
  readonly email?: string | undefined
  readonly name?: string | undefined
}

/**
 * The session-payment service.
 *
 * @since 0.1.0
 */
export class SessionPayments extends Context.Service<SessionPayments>()("@recur/core/SessionPayments", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const gateway = yield* Ports.PaymentGateway
    const taxes = yield* Ports.TaxCalculator
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const customers = yield* Customers.Customers
    const catalog = yield* Catalog.Catalog
    const payments = yield* Payments.Payments
    const checkout = yield* Checkout.Checkout
    const sessions = storage.repository(Entities.checkoutSession)
    const subs = storage.repository(Entities.subscription)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)
    const discounts = storage.repository(Entities.discount)
    const { schedule } = writes(storage)
    const withTaxes = withTax(taxes, storage)
    const getSessionRecord = (merchantId: string, sessionId: string) =>
      Effect.flatMap(sessions.get(merchantId, sessionId), (o) => must(o, "session", sessionId))
    const getSession = checkout.getSession
    const hadTrial = checkout.hadTrial

    /** Charges `attempt` of the trade with the payer's card (or collected payment method) and records the outcome. */
    const chargeCard = (
      merchantId: string,
      trade: Trade.Trade,
      attempt: number,
      source: Ports.NewPaymentSource,
      references: ReadonlyArray<Ports.ChargeReference> = []
    ) =>
      Effect.flatMap(
        Effect.flatMap(merchantNow(storage)(merchantId), (now) =>
          gateway.charge({
            now,
            // the trade's earlier attempts at the processor: read first, so a trade is paid once
            references,
            trade_id: trade.trade_id,
            attempt,
            merchant_id: merchantId,
            customer_id: trade.customer_id,
            amount: Result.getOrThrow(Money.parse(trade.amount, trade.currency)),
            source,
            off_session: false,
            // where a processor's 3-D Secure page sends the payer back (the sandbox has its own route)
            ...(trade.session_url !== null ? { return_url: `${trade.session_url}/complete` } : {})
          })
        ),
        (outcome) => payments.applyOutcome(merchantId, trade.trade_id, outcome)
      )

    const paySession = Effect.fn("SessionPayments.paySession")(function* (
      merchantId: string,
      sessionId: string,
      payment: Ports.CardInput | Ports.NewPaymentSource,
      payer: Payer = {}
    ): Effect.fn.Return<
      Payments.PaymentResult,
      | Errors.NotFound
      | Errors.InvalidParameter
      | Errors.InvalidRequest
      | Errors.StateConflict
      | Errors.DuplicateResource
      | Errors.PriceNotFound
      | Errors.SessionNotPayable
      | Errors.CardInvalid
      | Errors.SessionRefused
      | Errors.ConcurrentUpdate
    > {
      const merchant = yield* merchants.get(merchantId)
      const session = yield* getSession(merchantId, sessionId)
      if (session.status !== "open") return yield* new Errors.SessionNotPayable({ sessionId, state: session.status })
      const source = Ports.sourceOf(payment)
      const malformed = Ports.malformedField(source)
      if (malformed === "card_number") return yield* new Errors.CardInvalid({ sessionId })
      if (malformed === "payment_method")
        return yield* new Errors.InvalidParameter({ param: "payment_method", reason: "is not a payment method id" })
      const at = yield* nowOf(merchant)
      // a retry of a failed payment reuses the session's trade with a new attempt
      if (session.trade_id !== null) {
        const existing = yield* Effect.flatMap(trades.get(merchantId, session.trade_id), (o) =>
          Effect.orDie(must(o, "trade", session.trade_id!))
        )
        const status = existing.value.trade.trade_status
        if (status === "succeeded") return yield* new Errors.SessionNotPayable({ sessionId, state: "complete" })
        if (status === "processing" && existing.value.trade.next_action === null) {
          // the current attempt's outcome is unknown (on its way, a crash, a timeout): send the
          // same attempt again with the card just given — the gateway keys a charge by (trade,
          // attempt), so whatever reached it before is answered, never charged a second time
          const t = existing.value.trade
          return yield* chargeCard(merchantId, t, existing.value.attempts, source, existing.value.charges ?? [])
        }
        const attempt = existing.value.attempts + 1
        const retried = yield* storage.withTransaction(
          Effect.gen(function* () {
            // a failed attempt is retried; a processing one here waits on 3-D Secure, which the payer left
            const moved = Trade.move(
              existing.value.trade,
              status === "processing" ? "resubmit_payment" : "submit_payment",
              { last_payment_error: null, next_action: null }
            )
            if (Result.isFailure(moved))
              return yield* new Errors.SessionNotPayable({ sessionId, state: `trade ${status}` })
            const trade = moved.success.value
            // a concurrent retry of the same session claimed this attempt first
            yield* trades.update({ ...existing.value, trade, attempts: attempt }, existing.version).pipe(
              Effect.catchTag("VersionConflict", () => Effect.fail(paymentInProgress(sessionId))),
              Effect.catchTag("UniqueViolation", Effect.die)
            )
            yield* schedule(merchant, "reconcile", trade.trade_id, at + settings.reconcileAfterMs)
            return trade
          })
        )
        return yield* chargeCard(merchantId, retried, attempt, source, existing.value.charges ?? [])
      }
      const first = yield* storage
        .withTransaction(
          Effect.gen(function* () {
            // the claim: this transaction's update of the session is conditional on the version
            // read here, so of any number of concurrent pays exactly one commits; the others roll
            // back everything they wrote and fail with a conflict
            const claimed = yield* getSessionRecord(merchantId, sessionId)
            if (claimed.value.status !== "open" || claimed.value.trade_id !== null)
              return yield* paymentInProgress(sessionId)
            // the billing address the payer gave becomes the customer's when it has none with a
            // country: later invoices (renewals, changes) are taxed where this one is. The name
            // (the address's, else the one typed) and the email the payer typed on the page fill
            // the customer's where it has none as the payment succeeds (`Customers.filledByPayer`,
            // kept on the trade until then), so a declined card writes neither (a value the
            // merchant set is never replaced; an email that is none is not kept)
            const billed = billingAddressOf(session.billing_address)
            const billedName = session.billing_address?.name?.trim() || payer.name?.trim() || undefined
            const typed = payer.email?.trim()
            const payerEmail = typed && Customers.isEmail(typed) ? typed : undefined
            let customerId = session.customer_id
            let typedForCustomer: Entities.TradeRecord["payer"]
            if (customerId === null) {
              const email =
                session.email ?? payerEmail ?? (source._tag === "Card" ? source.card.name : undefined) ?? undefined
              customerId = (yield* customers.create(merchantId, {
                email: email ?? `${sessionId}@checkout.invalid`,
                ...(billed ? { address: billed } : {}),
                ...(billedName ? { name: billedName } : {})
              })).id
            } else {
              const known = billed ? yield* taxAddressOf(storage, merchantId, customerId) : undefined
              if (billed && known === null)
                yield* customers.update(merchantId, { customer_id: customerId, address: billed })
              if (billedName !== undefined || payerEmail !== undefined)
                typedForCustomer = {
                  ...(payerEmail !== undefined ? { email: payerEmail } : {}),
                  ...(billedName !== undefined ? { name: billedName } : {})
                }
            }
            // every line at its price's current version, checked when the session opened: the
            // base item is the first recurring line, the other recurring lines the subscription's
            // items after it, the one-time lines charged once with its first invoice
            const sold: Array<SoldLine> = []
            if (session.mode === "checkout")
              for (const line of session.line_items)
                sold.push({
                  pv: yield* catalog.sellableVersion(merchantId, line.price_id, customerId),
                  quantity: BigInt(line.quantity)
                })
            const b = baseIndex(sold)
            const pv = sold[b]?.pv ?? null
            const quantity = sold[b]?.quantity ?? 1n
            const oneTime = pv?.billing_type === "recurring" ? sold.filter((l) => isOneTime(l.pv)) : []
            const extraItems: Array<Entities.ItemTerm> = []
            if (pv !== null && pv.billing_type === "recurring")
              for (const [i, line] of session.line_items.entries()) {
                const version = sold[i]!.pv
                if (i === b || isOneTime(version)) continue
                extraItems.push({
                  id: yield* Ids.make(Ids.prefixes.subscriptionItem),
                  price_id: version.id,
                  price_version_id: version.price_version_id,
                  quantity: line.quantity,
                  created_at: at,
                  version
                })
              }
            let amount = Result.getOrThrow(Money.parse(session.amount ?? "0", session.currency))
            const trialPossible =
              pv !== null &&
              pv.billing_type === "recurring" &&
              Option.isSome(Price.trialOf(pv)) &&
              session.trial_policy !== 3 &&
              !(session.trial_policy === 2 && (yield* hadTrial(merchantId, customerId)))
            // the session's discount, redeemed here, in the claim's transaction: checked again now
            // the customer is known, and counted with the discount's version, so concurrent
            // checkouts never redeem it more often than it allows (the loser retries the claim)
            let term: Entities.DiscountTerm | null = null
            let redeemed: Store.Versioned<Discount.Discount> | null = null
            let discountRules: ReadonlyArray<Invoicing.DiscountRule> = []
            if (session.discount_id !== null && pv !== null && pv.billing_type === "recurring") {
              const dv = Option.getOrThrow(yield* Effect.orDie(discounts.get(merchantId, session.discount_id)))
              const d = dv.value
              const why = yield* Discounts.refusalFor(storage, merchantId, d, {
                at,
                pv,
                quantity,
                currency: session.currency,
                customerId,
                otherProducts: sold.filter((_, i) => i !== b).map((l) => l.pv.product_id)
              })
              if (why !== undefined)
                return yield* new Errors.SessionRefused({ reason: "discount", rateGiven: false, detail: why })
              term = discountTerm(d, trialPossible ? 1 : 0)
              // a trial invoice shows the discount at 0.00; its cycles start at the first paid cycle
              discountRules = [
                trialPossible
                  ? Invoicing.DiscountRule.Amount({
                      discount_id: d.discount_id,
                      discount_code: d.code ?? "",
                      amount: Money.zero(session.currency)
                    })
                  : discountRule(d)
              ]
              redeemed = dv
            }
            // a chosen anchor: the first period runs from now to it, charged as the share the
            // session showed (measured from its opening; it expires at the anchor at the latest)
            const anchored =
              pv !== null && !trialPossible && session.billing_cycle_anchor !== null
                ? BillingAnchor.firstPeriod(
                    merchant.proration_policy,
                    pv,
                    msOf(session.billing_cycle_anchor),
                    session.proration_behavior ?? "create_prorations",
                    msOf(session.created_at)
                  )
                : undefined
            const firstDraft =
              pv && pv.billing_type === "recurring"
                ? yield* withTaxes(
                    convertDraft(
                      // one-time lines are charged with it, also with a trial's invoice (as Stripe does)
                      withOneTimeLines(
                        trialPossible
                          ? Result.getOrThrow(
                              Invoicing.cycle({
                                invoice_type: "trial",
                                price: pv,
                                cycle_index: 0,
                                quantity,
                                existing: []
                              })
                            )
                          : withItemLines(
                              // beside other items a metered base item has no line yet: nothing used
                              (extraItems.length > 0 ? withoutUsage : (d: Invoicing.Draft) => d)(
                                Result.getOrThrow(
                                  Invoicing.cycle({
                                    invoice_type: "initial",
                                    price: pv,
                                    cycle_index: 0,
                                    paidCycles: 0,
                                    quantity,
                                    usage: 0n,
                                    existing: [],
                                    ...(anchored !== undefined ? { share: anchored.share } : {})
                                  })
                                )
                              ),
                              extraItems,
                              0,
                              // every item its share of the short first period, rounded once per line
                              { share: anchored?.share }
                            ),
                        oneTime
                      ),
                      session.merchant_rate,
                      session.currency
                    ),
                    merchantId,
                    customerId,
                    undefined,
                    discountRules,
                    { billing: session.billing_address }
                  )
                : undefined
            // a first invoice under the processor's minimum charge (0.20 USD on Stripe): not
            // charged; the card is saved (a charge of 0) and the total carried to the next invoice
            const carriedFirst =
              firstDraft &&
              pv?.billing_type === "recurring" &&
              (yield* underMinimum(gateway, merchantId, firstDraft.total))
                ? Invoicing.carry(firstDraft, CARRIED)
                : undefined
            const firstInvoice = carriedFirst?.draft ?? firstDraft
            if (firstInvoice) amount = firstInvoice.total
            // each item's line on the first invoice: a metered item has none (0.00, billed by usage
            // later); a trial invoice has the base item's trial line only
            let lineNo = 0
            const itemLines = [pv, ...extraItems.map((x) => x.version)].map((v, i) =>
              firstInvoice?.invoice_type === "trial"
                ? i === 0
                  ? 0
                  : null
                : v?.billing_dimension === "usage"
                  ? null
                  : lineNo++
            )
            const itemAmount = (i: number) => {
              const n = itemLines[i]
              return (n != null ? firstInvoice?.lines[n]?.amount : undefined) ?? Money.zero(session.currency)
            }
            // then the one-time lines (after the base item's trial line during a trial)
            const oneTimeAt = firstInvoice?.invoice_type === "trial" ? 1 : lineNo
            const lineAmount = (i: number) =>
              Money.format(firstInvoice?.lines[i]?.amount ?? Money.zero(session.currency))
            const trade = yield* newTrade({
              merchant,
              amount,
              customer_id: customerId,
              order_id: session.order_id,
              payment_mode: session.payment_mode,
              order_type: pv?.billing_type === "recurring" ? "initial" : "one_time",
              session: Option.some(session),
              line: pv
                ? new Trade.LineItem({
                    id: pv.price_version_id,
                    title: pv.price_name,
                    // one line: the trade's amount (the seed's form); several: each its line's amount
                    price: Money.format(extraItems.length + oneTime.length > 0 ? itemAmount(0) : amount),
                    price_id: pv.id,
                    quantity: quantity.toString(),
                    sku: pv.merchant_price_id ?? "",
                    vendor: merchant.name,
                    cycle_unit: pv.price_plan?.billing_cycle_unit ?? ""
                  })
                : null,
              // the other items, each at its line's amount on the first invoice (before discount and tax)
              moreLines: [
                ...extraItems.map(
                  (x, i) =>
                    new Trade.LineItem({
                      id: x.price_version_id,
                      title: x.version.price_name,
                      price: Money.format(itemAmount(i + 1)),
                      price_id: x.price_id,
                      quantity: x.quantity,
                      sku: x.version.merchant_price_id ?? "",
                      vendor: merchant.name,
                      cycle_unit: x.version.price_plan?.billing_cycle_unit ?? ""
                    })
                ),
                ...oneTime.map(
                  (l, j) =>
                    new Trade.LineItem({
                      id: l.pv.price_version_id,
                      title: l.pv.price_name,
                      price: lineAmount(oneTimeAt + j),
                      price_id: l.pv.id,
                      quantity: l.quantity.toString(),
                      sku: l.pv.merchant_price_id ?? "",
                      vendor: merchant.name,
                      cycle_unit: ""
                    })
                )
              ],
              // a one-time purchase's amount was taxed when the session was made or last changed
              tax: firstDraft
                ? firstDraft.tax
                : session.tax_amount !== null
                  ? Result.getOrThrow(Money.parse(session.tax_amount, session.currency))
                  : Money.zero(session.currency),
              metadata: session.metadata,
              at
            })
            let subscriptionId: string | null = null
            let invoiceId: string | null = null
            if (pv && pv.billing_type === "recurring" && firstDraft) {
              const sub_id = yield* Ids.make(Ids.prefixes.subscription)
              subscriptionId = sub_id
              // the redemption, counted in this transaction: by this customer, on this subscription
              if (redeemed !== null)
                yield* Discounts.redeem(storage, merchantId, redeemed, { customerId, subscriptionId: sub_id }, at)
              const rec0: Entities.SubscriptionRecord = {
                merchant_id: merchantId,
                // with a chosen anchor, cycle 0 is the short period before it and cycle 1 starts on it
                anchor: anchored?.anchor ?? null,
                trial_end: trialPossible
                  ? BillingPeriod.trialEnd(at, Option.getOrThrow(Price.trialOf(pv)).period)
                  : null,
                payment_token: null,
                payment_method: null,
                scheduled_price_version_id: null,
                dunning_attempts: 0,
                accrued_usage: "0",
                fx_rate: session.merchant_rate,
                currency: session.currency,
                convert_to_continuous: session.convert_to_continuous,
                paused_at: null,
                anchor_cycle: anchored !== undefined ? 1 : 0,
                plan_basis: null,
                extra_items: extraItems,
                discounts: term !== null ? [term] : [],
                owed_refunds: [],
                credited: [],
                moved: [],
                pending_prorations: [],
                subscription: new Subscription.Subscription({
                  id: sub_id,
                  customer_id: customerId,
                  email: session.email,
                  cancel_reason: null,
                  sub_merchant_id: null,
                  status: Lifecycle.subscription.initial,
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
                  credit_balance: fmtMinor(-(carriedFirst?.carried.amount ?? 0n), session.currency)
                })
              }
              // a trial's period is free of proration; the first paid cycle sets the basis
              const rec: Entities.SubscriptionRecord = trialPossible
                ? rec0
                : { ...rec0, plan_basis: Money.format(fullCycle(rec0, pv, quantity, 0)) }
              yield* Effect.orDie(subs.insert(rec))
              // an amount under the processor's minimum carried to the first renewal is owed on the customer's balance
              yield* CustomerBalance.mirrorSubscription(storage, undefined, rec, at, {
                sourceType: "carried_minimum",
                sourceId: trade.trade_id
              })
              const inv = yield* newInvoice({
                merchant_id: merchantId,
                draft: carriedFirst?.draft ?? firstDraft,
                trade_id: trade.trade_id,
                subscription_id: sub_id,
                price_id: pv.id,
                price_version_id: pv.price_version_id,
                customer_id: customerId,
                order_id: session.order_id,
                trigger: "charge",
                at,
                period: firstPeriod(rec, pv, at)
              })
              // not issued yet: it takes its number (and its links, its parties) when it is
              // paid (`Payments.applyOutcome`), so a declined or abandoned checkout takes none
              yield* Effect.orDie(invoices.insert(inv))
              invoiceId = inv.invoice_id
            }
            const processing = yield* submitTrade(storage, {
              trade,
              invoice_id: invoiceId,
              subscription_id: subscriptionId,
              at,
              payer: typedForCustomer
            })
            yield* sessions
              .update(
                new CheckoutSession.CheckoutSession({
                  ...claimed.value,
                  customer_id: customerId,
                  trade_id: trade.trade_id,
                  subscription_id: subscriptionId
                }),
                claimed.version
              )
              .pipe(
                Effect.catchTag("VersionConflict", () => Effect.fail(paymentInProgress(sessionId))),
                Effect.catchTag("UniqueViolation", Effect.die)
              )
            // if this process dies before the outcome is recorded, reconciliation asks the gateway
            yield* schedule(merchant, "reconcile", trade.trade_id, at + settings.reconcileAfterMs)
            // a payment not made by the session's expiry ends then (`Reconciliation.expireFirstPayment`)
            yield* schedule(merchant, "first_payment_expiry", trade.trade_id, msOf(session.expires_at))
            return processing
          })
        )
        .pipe(
          // a concurrent checkout redeemed the same discount first: claim again (the rest rolled back)
          Effect.retry({ while: (e) => e._tag === "ConcurrentUpdate" && e.resource === "discount", times: 20 })
        )
      return yield* chargeCard(merchantId, first, 1, source)
    })

    return { paySession } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
