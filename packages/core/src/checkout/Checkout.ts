/**
 * Checkout sessions: what is sold, to whom, in which currency — every cycle it can bill bounded
 * at input — and their expiry. Paying them is {@link SessionPayments}.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Catalog from "../catalog/Catalog.js"
import * as CheckoutSession from "./CheckoutSession.js"
import * as Customers from "../customers/Customers.js"
import * as Decimal from "../money/Decimal.js"
import * as Discount from "../discounts/Discount.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { dt, msOf, must, nowOf } from "../kernel/ServiceSupport.js"
import { afterDiscount, discountRule } from "../discounts/Discount.js"
import { fmtMinor, RATE_RULE, rateInBounds } from "../money/Money.js"
import { taxOnAmount } from "../taxes/TaxRates.js"
import * as Discounts from "../discounts/Discounts.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as PaymentSettings from "../payments/PaymentSettings.js"
import * as Ports from "../kernel/Ports.js"
import * as Price from "../catalog/Price.js"
import * as PriceRules from "../catalog/PriceRules.js"
import * as Pricing from "../money/Pricing.js"
import * as BillingAnchor from "../subscriptions/BillingAnchor.js"
import * as Settings from "../tenants/Settings.js"
import * as Store from "../kernel/Store.js"

/**
 * A settlement rate's bounds (1 primary unit = `rate` target units, captured at checkout or read
 * from the FX port): {@link rateInBounds} tells whether a rate is inside them, {@link RATE_RULE}
 * says what they are.
 *
 * @since 0.1.0
 */
export { RATE_RULE, rateInBounds }

/**
 * A new checkout session ({@link SessionCommand}) and {@link sessionOf}, which builds one in code.
 *
 * @since 0.1.0
 */
export { type SessionCommand, sessionOf } from "./SessionCommand.js"
import type { SessionCommand } from "./SessionCommand.js"

export type { SessionView } from "./SessionAmounts.js"
import {
  anchorShare,
  baseIndex,
  dueNow,
  isOneTime,
  lineDues,
  meteredRefusal,
  type SessionView,
  type SoldLine,
  sellsTogether,
  soldRefusal
} from "./SessionAmounts.js"

/**
 * The checkout service.
 *
 * @since 0.1.0
 */
export class Checkout extends Context.Service<Checkout>()("@recur/core/Checkout", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const fx = yield* Ports.FxRates
    const gateway = yield* Ports.PaymentGateway
    const taxOf = taxOnAmount(yield* Ports.TaxCalculator, yield* Store.Storage)
    const settings = yield* Settings.Settings
    const merchants = yield* Merchants.Merchants
    const customers = yield* Customers.Customers
    const catalog = yield* Catalog.Catalog
    const sessions = storage.repository(Entities.checkoutSession)
    const discounts = storage.repository(Entities.discount)
    const subs = storage.repository(Entities.subscription)

    const getSessionRecord = (merchantId: string, sessionId: string) =>
      Effect.flatMap(sessions.get(merchantId, sessionId), (o) => must(o, "session", sessionId))

    const createSession = Effect.fn("Checkout.createSession")(function* (merchantId: string, command: SessionCommand) {
      const merchant = yield* merchants.get(merchantId)
      const at = yield* nowOf(merchant)
      const { mode } = command
      const rateGiven = Option.isSome(command.settlement) && Option.isSome(command.settlement.value.rate)
      const refuse = (reason: Errors.SessionRefused["reason"], detail: string, missing?: true, item?: number) =>
        new Errors.SessionRefused({
          reason,
          rateGiven,
          detail,
          ...(missing ? { missing } : {}),
          ...(item !== undefined ? { item } : {})
        })
      let quantity = Option.match(command.item, { onNone: () => 1n, onSome: (i) => i.quantity })
      // the lines sold beside the base item (other recurring items, one-time prices) with their
      // line's index, and what each line is due now
      const extras: Array<SoldLine & { readonly index: number }> = []
      let dues: ReadonlyArray<Money.Money> = []
      // a live merchant's payer leaves the page over https only
      if (merchant.mode !== "sandbox")
        for (const field of ["return_url", "cancel_url"] as const) {
          const url = command.page[field]
          if (url !== null && !url.toLowerCase().startsWith("https://"))
            return yield* refuse(field, `${field} must be an https URL for a live merchant`)
        }
      // a merchant whose payments no processor takes opens no session (a live one without keys, or
      // on an engine with the sandbox alone); the request's own fields are judged first
      const refused = gateway.refusal ? yield* gateway.refusal(merchantId) : Option.none()
      if (Option.isSome(refused)) return yield* new Errors.PaymentsUnavailable({ merchantId, reason: refused.value })
      // who pays
      let customerId: string | null = null
      if (Option.isSome(command.customerId)) {
        const c = yield* Effect.catchTag(customers.get(merchantId, command.customerId.value), "NotFound", () =>
          Effect.fail(refuse("customer", "no such customer", true))
        )
        customerId = c.id
      } else if (Option.isSome(command.payerId)) {
        const payer_id = command.payerId.value
        const found = yield* Effect.option(customers.resolve(merchantId, { payer_id }))
        customerId = Option.isSome(found)
          ? found.value.value.id
          : (yield* customers
              .create(merchantId, {
                payer_id,
                ...(Option.isSome(command.email) ? { email: command.email.value } : {})
              })
              .pipe(Effect.catchTag("InvalidRequest", () => customers.create(merchantId, { payer_id })))).id
      }
      // what is sold, and what is due now
      let currency: string
      let due: Money.Money
      let priceId: string | null = null
      let discount: Discount.Discount | null = null
      let discountNow = false
      let paymentMode = Option.getOrUndefined(command.paymentMode)
      if (mode === "checkout") {
        if (Option.isNone(command.item)) return yield* refuse("price", "is required")
        // a private price of another customer is no such price; a session opened for no customer
        // yet that sells a private price is bound to that price's customer
        const lines: Array<SoldLine> = []
        for (const [i, x] of [command.item.value, ...(command.extraItems ?? [])].entries()) {
          const v = yield* Effect.catchTag(
            catalog.sellableVersion(merchantId, x.priceId, i === 0 ? (customerId ?? undefined) : customerId),
            "PriceNotFound",
            () => Effect.fail(refuse("price", "no such price", true, i))
          )
          if (i === 0 && v.customer_id !== null) customerId = v.customer_id
          lines.push({ pv: v, quantity: x.quantity, editable: x.editable })
        }
        // the base item is the first recurring line; one-time lines are charged with the first invoice
        const b = baseIndex(lines)
        const pv = lines[b]!.pv
        quantity = lines[b]!.quantity
        for (const [index, l] of lines.entries()) if (index !== b) extras.push({ ...l, index })
        const why = sellsTogether(lines)
        if (why !== undefined) return yield* refuse("price", why.reason, undefined, why.index)
        const meteredWhy = meteredRefusal(lines)
        if (meteredWhy !== undefined) return yield* refuse("quantity", meteredWhy.detail, undefined, meteredWhy.index)
        priceId = pv.id
        paymentMode ??= pv.billing_type === "recurring" ? "subscription" : "onetime_payment"
        if (pv.billing_type === "recurring" && paymentMode === "onetime_payment")
          return yield* refuse("payment_mode", "a recurring price needs payment_mode subscription")
        const skipTrial =
          command.trialPolicy === 3 ||
          (command.trialPolicy === 2 && customerId !== null && (yield* hadTrial(merchantId, customerId)))
        if (command.billingAnchor !== undefined) {
          const why = BillingAnchor.refusal(
            command.billingAnchor.anchor,
            at,
            pv,
            Option.isSome(Price.trialOf(pv)) && !skipTrial
          )
          if (why !== undefined) return yield* refuse("billing_cycle_anchor", why)
        }
        const anchored = {
          billing_cycle_anchor: command.billingAnchor !== undefined ? dt(command.billingAnchor.anchor) : null,
          proration_behavior: command.billingAnchor?.behavior ?? null
        }
        // every recurring line its share up to the anchor (one interval: one share), each rounded once
        dues = lineDues(lines, skipTrial, anchorShare(merchant, anchored, pv, at))
        due = Money.make(
          dues.reduce((a, d) => a + d.amount, 0n),
          pv.currency
        )
        if (Option.isSome(command.discountCode)) {
          const settleCurrency = Option.match(command.settlement, {
            onNone: () => pv.currency,
            onSome: (s) => s.currency
          })
          const found = yield* Effect.orDie(discounts.findBy(merchantId, "code", command.discountCode.value))
          if (Option.isNone(found)) return yield* refuse("discount", "no such discount code", true)
          const d = found.value.value
          const why = yield* Discounts.refusalFor(storage, merchantId, d, {
            at,
            pv,
            quantity,
            currency: settleCurrency,
            customerId,
            otherProducts: extras.map((x) => x.pv.product_id)
          })
          if (why !== undefined) return yield* refuse("discount", why)
          discount = d
          // the first paid cycle is due now unless a trial comes first
          discountNow = !(Option.isSome(Price.trialOf(pv)) && !skipTrial)
        }
        currency = pv.currency
      } else {
        if (Option.isNone(command.amount)) return yield* refuse("amount", "amount and currency are required")
        if (command.billingAnchor !== undefined)
          return yield* refuse("billing_cycle_anchor", "applies to a subscription's checkout (mode checkout) only")
        due = command.amount.value
        if (!Money.isWithinBounds(due))
          return yield* refuse("amount", `must be at most ${fmtMinor(Money.MAX_AMOUNT_MINOR, due.currency)}`)
        currency = due.currency
        paymentMode ??= "onetime_payment"
      }
      // settlement currency
      let rateText: string | null = null
      let settleRate: Decimal.Decimal | null = null
      const target = Option.match(command.settlement, {
        onNone: () => null,
        onSome: (t) => (t.currency !== currency ? t.currency : null)
      })
      if (target !== null) {
        const given = Option.flatMap(command.settlement, (t) => t.rate)
        const r = Option.isSome(given) ? given : yield* fx.rate(currency, target)
        if (Option.isNone(r)) return yield* refuse("no_rate", `no exchange rate from ${currency} to ${target}`)
        if (!rateInBounds(r.value))
          return yield* refuse("rate", `the rate from ${currency} to ${target} is out of bounds: ${RATE_RULE}`)
        settleRate = r.value
        rateText = Decimal.format(r.value)
      }
      // every cycle this sells (each intro phase, the base price, a paid trial), as it will be
      // billed: never above the most an invoice may carry, never rounded to nothing by the rate
      const sold =
        mode === "checkout" && priceId !== null
          ? Price.cycleAmounts(yield* catalog.sellableVersion(merchantId, priceId, customerId), quantity)
          : [due]
      const refusal = soldRefusal(
        sold,
        settleRate !== null ? { rate: settleRate, target: target! } : null,
        mode === "checkout" ? "quantity" : "amount"
      )
      if (refusal !== undefined) return yield* refuse(refusal.reason, refusal.detail)
      for (const x of extras) {
        const r = soldRefusal(
          Price.cycleAmounts(x.pv, x.quantity),
          settleRate !== null ? { rate: settleRate, target: target! } : null,
          "quantity"
        )
        if (r !== undefined) return yield* refuse(r.reason, r.detail, undefined, x.index)
      }
      if (settleRate !== null) {
        // each line converted, as the first invoice converts its lines
        due =
          extras.length > 0
            ? Money.make(
                dues.reduce((a, d) => a + Result.getOrThrow(Money.convert(d, settleRate!, target!)).amount, 0n),
                target!
              )
            : Result.getOrThrow(Money.convert(due, settleRate, target!))
        currency = target!
      }
      if (extras.length > 0 && !Money.isWithinBounds(due))
        return yield* refuse("quantity", `the first invoice is above ${fmtMinor(Money.MAX_AMOUNT_MINOR, due.currency)}`)
      // in the settlement currency, rounded as the first invoice will round it
      if (discount !== null && discountNow) due = afterDiscount(due, discountRule(discount))
      // with the tax at the billing address (else the customer's), as the payment will charge it
      const taxed = yield* taxOf(merchantId, customerId, command.page.billing_address, due)
      const item = Option.getOrUndefined(command.item)
      const session_id = yield* Ids.make(Ids.prefixes.checkoutSession)
      const session = new CheckoutSession.CheckoutSession({
        session_id,
        session_url: `${settings.publicUrl}/checkout/${session_id}`,
        merchant_id: merchantId,
        status: Lifecycle.checkoutSession.initial,
        mode,
        line_items: item
          ? [item, ...(command.extraItems ?? [])].map(
              (line) =>
                new CheckoutSession.SessionLineItem({
                  price_id: line.priceId,
                  quantity: line.quantity.toString(),
                  quantity_editable: line.editable,
                  quantity_min: line.min,
                  quantity_max: line.max
                })
            )
          : [],
        customer_id: customerId,
        payer_id: Option.getOrNull(command.payerId),
        email: Option.getOrNull(command.email),
        order_id: command.orderId,
        ...command.page,
        payment_mode: paymentMode,
        trial_policy: command.trialPolicy,
        total_cycles: command.totalCycles,
        convert_to_continuous: command.convertToContinuous,
        amount: Money.format(taxed.total),
        tax_amount: Money.format(taxed.tax),
        currency,
        target_currency: Option.match(command.settlement, { onNone: () => null, onSome: (t) => t.currency }),
        merchant_rate: rateText,
        metadata: command.metadata,
        trade_id: null,
        subscription_id: null,
        // a session with a billing anchor can be paid only before it
        expires_at: dt(Math.min(at + settings.sessionTtlMs, command.billingAnchor?.anchor ?? Number.POSITIVE_INFINITY)),
        created_at: dt(at),
        completed_at: null,
        discount_id: discount?.discount_id ?? null,
        discount_code: discount?.code ?? null,
        billing_cycle_anchor: command.billingAnchor !== undefined ? dt(command.billingAnchor.anchor) : null,
        proration_behavior: command.billingAnchor?.behavior ?? null
      })
      yield* Effect.orDie(sessions.insert(session))
      return session
    })

    const getSession = Effect.fn("Checkout.getSession")(function* (merchantId: string, sessionId: string) {
      const merchant = yield* merchants.get(merchantId)
      const s = yield* getSessionRecord(merchantId, sessionId)
      const at = yield* nowOf(merchant)
      if (s.value.status === "open" && at >= msOf(s.value.expires_at)) {
        const expired = Lifecycle.must(CheckoutSession.move(s.value, "expire"))
        yield* Effect.orDie(Effect.ignore(sessions.update(expired, s.version)))
        return expired
      }
      return s.value
    })

    /** Whether this customer already had a trial (`trial_policy` 2). */
    const hadTrial = Effect.fn("Checkout.hadTrial")(function* (merchantId: string, customerId: string) {
      return yield* Effect.map(
        Effect.orDie(
          subs.list(merchantId, { limit: 100, filters: [{ column: "customer_id", op: "in", values: [customerId] }] })
        ),
        (p) => p.list.some((s) => s.trial_end !== null)
      )
    })

    /**
     * What the payer changes on the hosted page before paying — the quantity (only an editable
     * line item, inside its bounds) or a discount code (checked as at the session's creation) —
     * and what is due now computed again exactly as when the session was opened (same trial
     * rule, same settlement rate), saved with the session's version: a payment that claimed the
     * session first wins (a `StateConflict`).
     */
    const updateSession = Effect.fn("Checkout.updateSession")(function* (
      merchantId: string,
      sessionId: string,
      change: { readonly quantity?: string; readonly discountCode?: string; readonly line?: number }
    ) {
      const record = yield* getSessionRecord(merchantId, sessionId)
      const session = record.value
      const index = change.line ?? 0
      const refuse = (reason: Errors.SessionRefused["reason"], detail: string, missing?: true) =>
        new Errors.SessionRefused({
          reason,
          rateGiven: false,
          detail,
          ...(missing ? { missing } : {}),
          ...(index > 0 ? { item: index } : {})
        })
      if (session.status !== "open" || session.trade_id !== null)
        return yield* new Errors.SessionNotPayable({ sessionId, state: session.status })
      // the payer may enter a code only where the merchant offered the field
      if (change.discountCode !== undefined && !session.allow_discount_codes)
        return yield* refuse("discount", "this checkout takes no discount code")
      const item = session.line_items[index]
      if (session.mode !== "checkout" || item === undefined)
        return yield* refuse(change.quantity !== undefined ? "quantity" : "discount", "this checkout cannot be changed")
      let quantity = BigInt(item.quantity)
      if (change.quantity !== undefined) {
        if (!item.quantity_editable) return yield* refuse("quantity", "this checkout's quantity cannot be changed")
        const parsed = PriceRules.validateQuantity("quantity", change.quantity)
        if (Result.isFailure(parsed)) return yield* refuse("quantity", parsed.failure.message)
        quantity = parsed.success
        if (item.quantity_min !== null && quantity < BigInt(item.quantity_min))
          return yield* refuse("quantity", `must be at least ${item.quantity_min}`)
        if (item.quantity_max !== null && quantity > BigInt(item.quantity_max))
          return yield* refuse("quantity", `must be at most ${item.quantity_max}`)
      }
      // every line at its quantity (the changed one at the new), each at its price's current version
      const lineItems = session.line_items.map((l, i) =>
        i === index ? new CheckoutSession.SessionLineItem({ ...l, quantity: quantity.toString() }) : l
      )
      const versions: Array<Price.PriceVersion> = []
      for (const l of lineItems)
        versions.push(
          yield* Effect.catchTag(
            catalog.sellableVersion(merchantId, l.price_id, session.customer_id),
            "PriceNotFound",
            () => Effect.fail(refuse("price", "no such price", true))
          )
        )
      const sold = versions.map((v, i) => ({ pv: v, quantity: BigInt(lineItems[i]!.quantity) }))
      const b = baseIndex(sold)
      const pv = versions[b]!
      const baseQuantity = sold[b]!.quantity
      const skipTrial =
        session.trial_policy === 3 ||
        (session.trial_policy === 2 &&
          session.customer_id !== null &&
          (yield* hadTrial(merchantId, session.customer_id)))
      const merchant = yield* merchants.get(merchantId)
      const trialFirst = Option.isSome(Price.trialOf(pv)) && !skipTrial
      const dues = lineDues(sold, skipTrial, anchorShare(merchant, session, pv, msOf(session.created_at)))
      const settlement =
        session.merchant_rate !== null && session.currency !== pv.currency
          ? { rate: Result.getOrThrow(Decimal.parse(session.merchant_rate)), target: session.currency }
          : null
      for (const [i, v] of versions.entries()) {
        const refusal = soldRefusal(Price.cycleAmounts(v, BigInt(lineItems[i]!.quantity)), settlement, "quantity")
        if (refusal !== undefined) return yield* refuse(refusal.reason, refusal.detail)
      }
      // each line converted, as the first invoice converts its lines
      const settled = dues.map((d) =>
        settlement !== null ? Result.getOrThrow(Money.convert(d, settlement.rate, settlement.target)) : d
      )
      let due = Money.make(
        settled.reduce((a, d) => a + d.amount, 0n),
        settled[0]!.currency
      )
      if (versions.length > 1 && !Money.isWithinBounds(due))
        return yield* refuse("quantity", `the first invoice is above ${fmtMinor(Money.MAX_AMOUNT_MINOR, due.currency)}`)
      // the discount: the one asked for now, else the one the session has
      let discount: Discount.Discount | null = null
      if (change.discountCode !== undefined) {
        if (!Discount.CODE_PATTERN.test(change.discountCode))
          return yield* refuse("discount", "a discount code is 2 to 20 uppercase letters and digits")
        const found = yield* Effect.orDie(discounts.findBy(merchantId, "code", change.discountCode))
        if (Option.isNone(found)) return yield* refuse("discount", "no such discount code", true)
        discount = found.value.value
      } else if (session.discount_id !== null) {
        discount = Option.getOrNull(
          Option.map(yield* Effect.orDie(discounts.get(merchantId, session.discount_id)), (v) => v.value)
        )
      }
      if (discount !== null) {
        const at = yield* nowOf(yield* merchants.get(merchantId))
        const why = yield* Discounts.refusalFor(storage, merchantId, discount, {
          at,
          pv,
          quantity: baseQuantity,
          currency: session.currency,
          customerId: session.customer_id,
          otherProducts: versions.filter((_, i) => i !== b).map((v) => v.product_id)
        })
        if (why !== undefined) return yield* refuse("discount", why)
        if (!trialFirst) due = afterDiscount(due, discountRule(discount))
      }
      const taxed = yield* taxOf(merchantId, session.customer_id, session.billing_address, due)
      const updated = new CheckoutSession.CheckoutSession(
        {
          ...session,
          line_items: lineItems,
          amount: Money.format(taxed.total),
          tax_amount: Money.format(taxed.tax),
          discount_id: discount?.discount_id ?? null,
          discount_code: discount?.code ?? null
        },
        { disableChecks: true }
      )
      yield* sessions.update(updated, record.version).pipe(
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
        Effect.catchTag("VersionConflict", () =>
          Effect.fail(new Errors.ConcurrentUpdate({ resource: "checkout_session", id: sessionId }))
        )
      )
      return updated
    })

    /** The payer's quantity of line item `line` (the first when absent) on the hosted page (see {@link updateSession}). */
    const setQuantity = Effect.fn("Checkout.setQuantity")(function* (
      merchantId: string,
      sessionId: string,
      quantity: string,
      line?: number
    ) {
      return yield* updateSession(merchantId, sessionId, { quantity, ...(line !== undefined ? { line } : {}) })
    })

    /** A discount code the payer enters on the hosted page (see {@link updateSession}). */
    const setDiscountCode = Effect.fn("Checkout.setDiscountCode")(function* (
      merchantId: string,
      sessionId: string,
      discountCode: string
    ) {
      return yield* updateSession(merchantId, sessionId, { discountCode })
    })

    /**
     * What the payer's page shows of a session: the merchant, the product and price sold, the
     * billing interval, a trial, and what a cycle costs after it (in the session's currency).
     */
    const sessionView = Effect.fn("Checkout.sessionView")(function* (merchantId: string, sessionId: string) {
      const session = yield* getSession(merchantId, sessionId)
      const merchant = yield* merchants.get(merchantId)
      // each line's price (null when no longer sellable); the base item is the first recurring line
      const versions: Array<Price.PriceVersion | null> = []
      if (session.mode === "checkout")
        for (const l of session.line_items)
          versions.push(
            Option.getOrNull(yield* Effect.option(catalog.sellableVersion(merchantId, l.price_id, session.customer_id)))
          )
      const b = Math.max(
        0,
        versions.findIndex((v) => v !== null && !isOneTime(v))
      )
      const pv = versions[b] ?? null
      const item = session.line_items[b]
      const product =
        pv !== null ? Option.getOrNull(yield* Effect.option(catalog.getProduct(merchantId, pv.product_id))) : null
      const plan = pv?.billing_type === "recurring" ? pv.price_plan : null
      const skipTrial =
        session.trial_policy === 3 ||
        (session.trial_policy === 2 &&
          session.customer_id !== null &&
          (yield* hadTrial(merchantId, session.customer_id)))
      const trial = pv !== null && !skipTrial ? Option.getOrNull(Price.trialOf(pv)) : null
      let cycleAmount: string | null = null
      // a line's amount in the session's currency
      const settle = (amount: Money.Money) =>
        session.merchant_rate !== null && session.currency !== amount.currency
          ? Result.getOrThrow(
              Money.convert(amount, Result.getOrThrow(Decimal.parse(session.merchant_rate)), session.currency)
            )
          : amount
      const share =
        plan !== null && pv !== null ? anchorShare(merchant, session, pv, msOf(session.created_at)) : undefined
      const lines: Array<SessionView["lines"][number]> = []
      // what a cycle of the recurring lines costs (each settled as the invoice settles its lines)
      let whole = 0n
      for (const [i, l] of session.line_items.entries()) {
        const v = versions[i] ?? null
        if (v === null || v.billing_dimension === "usage" || isOneTime(v)) continue
        whole += settle(Pricing.rate(Price.modelOf(v, 0), BigInt(l.quantity), v.currency).amount).amount
      }
      if (pv !== null && session.line_items.length > 1)
        for (const [i, l] of session.line_items.entries()) {
          const v = versions[i] ?? null
          lines.push({
            priceName: v?.price_name ?? l.price_id,
            metered: v?.billing_dimension === "usage",
            oneTime: v !== null && isOneTime(v),
            quantity: l.quantity,
            editable: l.quantity_editable,
            min: l.quantity_min,
            max: l.quantity_max,
            // its line on the first paid invoice: a cycle (its share up to an anchor), or its one-time price
            amount:
              v !== null && v.billing_dimension !== "usage"
                ? Money.format(settle(dueNow(v, BigInt(l.quantity), true, isOneTime(v) ? undefined : share)))
                : null
          })
        }
      if (pv !== null && plan !== null && pv.billing_dimension !== "usage" && item !== undefined) {
        // the cycle after today's: a trial's first paid cycle, else the second — discounted when the
        // session's discount lasts that long (its window starts at the first paid cycle)
        let then = Money.make(whole, session.currency)
        if (session.discount_id !== null) {
          const d = Option.getOrNull(
            Option.map(yield* Effect.orDie(discounts.get(merchantId, session.discount_id)), (v) => v.value)
          )
          const cycles = d !== null ? Discount.cyclesOf(d) : 0
          if (d !== null && (trial !== null || cycles === null || cycles > 1))
            then = afterDiscount(then, discountRule(d))
        }
        cycleAmount = Money.format((yield* taxOf(merchantId, session.customer_id, session.billing_address, then)).total)
      }
      return {
        session,
        merchantName: merchant.name,
        productName: product?.product_name ?? null,
        priceName: pv?.price_name ?? null,
        interval: plan !== null ? { unit: plan.billing_cycle_unit, count: plan.billing_cycle_count } : null,
        trial: trial !== null ? { unit: trial.period.trial_period_unit, count: trial.period.trial_period_count } : null,
        cycleAmount,
        lines,
        payments: PaymentSettings.pageModeOf(merchant.payment_processor, settings.stripeJsUrl)
      } satisfies SessionView
    })

    return { createSession, getSession, hadTrial, setQuantity, setDiscountCode, sessionView } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
