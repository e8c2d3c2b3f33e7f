/**
 * What a checkout session shows and charges: the payer's view of it ({@link SessionView}), what
 * a line item is due now ({@link dueNow}) and whether every cycle sold can be billed
 * ({@link soldRefusal}) — shared by opening a session and by the payer's changes on its page.
 *
 * @since 0.1.0
 */
import { Option, Result } from "effect"
import * as Price from "../catalog/Price.js"
import type * as CheckoutSession from "./CheckoutSession.js"
import * as Money from "../money/Money.js"
import { fmtMinor } from "../money/Money.js"
import type * as Decimal from "../money/Decimal.js"
import type * as PaymentSettings from "../payments/PaymentSettings.js"
import * as Pricing from "../money/Pricing.js"
import * as BillingAnchor from "../subscriptions/BillingAnchor.js"
import * as SubscriptionItems from "../subscriptions/SubscriptionItems.js"
import { msOf } from "../kernel/ServiceSupport.js"
import type * as Proration from "../money/Proration.js"
import * as Invoicing from "../invoices/Invoicing.js"

/**
 * A session as its payer's page shows it.
 *
 * @since 0.1.0
 */
export interface SessionView {
  readonly session: CheckoutSession.CheckoutSession
  readonly merchantName: string
  readonly productName: string | null
  readonly priceName: string | null
  /** The billing interval of a recurring price (`month` × 1), or null. */
  readonly interval: { readonly unit: string; readonly count: number } | null
  /** The trial the payer gets (unless the session's trial policy skips it), or null. */
  readonly trial: { readonly unit: string; readonly count: number } | null
  /** What one cycle costs (first cycle's rate, in the session's currency), or null for usage and one-time prices. */
  readonly cycleAmount: string | null
  /**
   * The session's line items as the page lists them, in order — its name, quantity and the
   * payer's bounds, and what its line on the first paid invoice costs (first cycle's rate — its
   * share up to a billing anchor — or a one-time price, in the session's currency, before
   * discount and tax; null for usage); empty for a session of one line item (the page shows it
   * as the product sold) or mode payment.
   */
  readonly lines: ReadonlyArray<{
    readonly priceName: string
    /** A usage-based (metered) line: no quantity, nothing due now, billed by usage at each period's end. */
    readonly metered: boolean
    /** A price charged once, with the first invoice (the page says "one time"). */
    readonly oneTime: boolean
    readonly quantity: string
    readonly editable: boolean
    readonly min: string | null
    readonly max: string | null
    readonly amount: string | null
  }>
  /** How the page takes the payment method: the sandbox's card form or Stripe's Payment Element. */
  readonly payments: PaymentSettings.PageMode
}

/**
 * What a checkout of `quantity` × `pv` charges now: the paid trial, nothing for usage, or the
 * first cycle (its `share` up to a billing anchor, when the first period is short).
 *
 * @since 0.1.0
 */
export const dueNow = (
  pv: Price.PriceVersion,
  quantity: bigint,
  skipTrial: boolean,
  share?: Proration.Fraction
): Money.Money => {
  const trial = Price.trialOf(pv)
  if (Option.isSome(trial) && !skipTrial) return Money.times(Pricing.trialCharge(trial.value.trial, pv.currency), 1n)
  if (pv.billing_dimension === "usage") return Money.zero(pv.currency)
  const whole = Pricing.rate(Price.modelOf(pv, 0), quantity, pv.currency).amount
  // a short first period up to a billing anchor: its share, rounded as its invoice rounds it
  return share === undefined ? whole : Money.proportion(whole, share.unused, share.total)
}

/**
 * Why every cycle a session sells (each intro phase, the base price, a paid trial) cannot be
 * billed as it will be — above the most one invoice may carry, or rounded to nothing by the
 * settlement rate — or undefined when each can.
 *
 * @since 0.1.0
 */
export const soldRefusal = (
  sold: ReadonlyArray<Money.Money>,
  settlement: { readonly rate: Decimal.Decimal; readonly target: string } | null,
  over: "quantity" | "amount"
): { readonly reason: "quantity" | "amount" | "rate"; readonly detail: string } | undefined => {
  for (const amount of sold) {
    const settled =
      settlement !== null ? Result.getOrThrow(Money.convert(amount, settlement.rate, settlement.target)) : amount
    if (!Money.isWithinBounds(settled))
      return {
        reason: over,
        detail: `${Money.format(amount)} ${amount.currency} a cycle${settlement !== null ? ` (${Money.format(settled)} ${settled.currency})` : ""} is above the most one invoice may carry, ${fmtMinor(Money.MAX_AMOUNT_MINOR, settled.currency)} ${settled.currency}`
      }
    if (amount.amount > 0n && settled.amount === 0n)
      return {
        reason: "rate",
        detail: `the rate turns ${Money.format(amount)} ${amount.currency} into 0 ${settled.currency}`
      }
  }
  return undefined
}

/**
 * The share of a whole period a session's short first period costs (none without an anchor),
 * measured from the session's opening `openedAt`: what the page shows is what the payment
 * charges (the session expires at its anchor at the latest).
 *
 * @since 0.1.0
 */
export const anchorShare = (
  merchant: { readonly proration_policy: string },
  session: Pick<CheckoutSession.CheckoutSession, "billing_cycle_anchor" | "proration_behavior">,
  pv: Price.PriceVersion,
  openedAt: number
): Proration.Fraction | undefined =>
  session.billing_cycle_anchor === null
    ? undefined
    : BillingAnchor.firstPeriod(
        merchant.proration_policy,
        pv,
        msOf(session.billing_cycle_anchor),
        session.proration_behavior ?? "create_prorations",
        openedAt
      )?.share

/**
 * Why a metered line of a session's several line items cannot be sold — a quantity other than 1
 * or editable by the payer (it is billed by usage at each period's end) — with the line's index,
 * or undefined when it can.
 *
 * @since 0.1.0
 */
export const meteredRefusal = (
  lines: ReadonlyArray<SoldLine>
): { readonly index: number; readonly detail: string } | undefined => {
  if (lines.length < 2) return undefined
  const index = lines.findIndex((l) => l.pv.billing_dimension === "usage" && (l.quantity !== 1n || l.editable === true))
  return index < 0
    ? undefined
    : { index, detail: "is billed by usage at the end of each period: its quantity is 1, not editable" }
}

/**
 * One line item of a checkout as sold: its price version and quantity.
 *
 * @since 0.1.0
 */
export interface SoldLine {
  readonly pv: Price.PriceVersion
  readonly quantity: bigint
  /** Whether the payer may change the quantity on the hosted page. */
  readonly editable?: boolean
}

/**
 * Whether a line item is a price charged once (`billing_type` `one_time`), sold beside the
 * recurring items of a subscription checkout: a line of its first invoice only.
 *
 * @since 0.1.0
 */
export const isOneTime = (pv: Price.PriceVersion): boolean => pv.billing_type !== "recurring"

/**
 * The base item of a checkout's lines: the first recurring line (the subscription's flat
 * fields), or the first line when none is recurring (a one-time payment).
 *
 * @since 0.1.0
 */
export const baseIndex = (lines: ReadonlyArray<SoldLine>): number => {
  const i = lines.findIndex((l) => !isOneTime(l.pv))
  return i < 0 ? 0 : i
}

/**
 * Why a checkout's lines cannot be sold together, naming the line at fault, or undefined when
 * they can: its recurring lines form one subscription (`SubscriptionItems.compatible`), its
 * one-time lines are in the base item's currency, and one-time lines alone are one price (the
 * seed's one-time payment).
 *
 * @since 0.1.0
 */
export const sellsTogether = (
  lines: ReadonlyArray<SoldLine>
): { readonly index: number; readonly reason: string } | undefined => {
  const base = lines[baseIndex(lines)]!
  const recurring = [...lines.keys()].filter((i) => !isOneTime(lines[i]!.pv))
  if (recurring.length === 0)
    return lines.length > 1
      ? {
          index: 1,
          reason: "a checkout of one-time prices only sells one line item; sell several beside a recurring price"
        }
      : undefined
  // one recurring line is checked too: a price billed by a billable metric is never the first item
  if (recurring.length >= 1) {
    const ok = SubscriptionItems.compatible(recurring.map((i) => lines[i]!.pv))
    if (Result.isFailure(ok)) return { index: recurring[ok.failure.index ?? 0]!, reason: ok.failure.reason }
  }
  for (const [index, l] of lines.entries())
    if (isOneTime(l.pv) && l.pv.currency !== base.pv.currency)
      return {
        index,
        reason: `is in ${l.pv.currency}; every line item must be in ${base.pv.currency}, the first recurring item's currency`
      }
  return undefined
}

/**
 * What each line of a checkout is due now, in the lines' order (each in its price's currency,
 * before conversion, discount and tax): the base item by {@link dueNow}; the other recurring
 * items their first cycle — nothing during the base item's trial — each its own `share` up to a
 * billing anchor, rounded once per line; a one-time line its price, charged at once (also
 * during a trial, as Stripe charges one-time items on the trial's first invoice).
 *
 * @example
 * lineDues([{ pv: monthly30, quantity: 1n }, { pv: setupFee199, quantity: 1n }], true) // [30.00, 199.00]
 * @since 0.1.0
 */
export const lineDues = (
  lines: ReadonlyArray<SoldLine>,
  skipTrial: boolean,
  share?: Proration.Fraction
): ReadonlyArray<Money.Money> => {
  const b = baseIndex(lines)
  const base = lines[b]!
  const trialFirst = !isOneTime(base.pv) && Option.isSome(Price.trialOf(base.pv)) && !skipTrial
  return lines.map((l, i) =>
    i === b
      ? dueNow(l.pv, l.quantity, skipTrial, share)
      : isOneTime(l.pv)
        ? dueNow(l.pv, l.quantity, true)
        : trialFirst
          ? Money.zero(l.pv.currency)
          : dueNow(l.pv, l.quantity, true, share)
  )
}

/**
 * A first invoice with its one-time lines added after the items' lines (`one_time`, no service
 * period), totalled again: the draft is in the prices' currency, before conversion, discounts
 * and tax, which apply to the whole invoice.
 *
 * @since 0.1.0
 */
export const withOneTimeLines = (draft: Invoicing.Draft, oneTime: ReadonlyArray<SoldLine>): Invoicing.Draft =>
  oneTime.length === 0
    ? draft
    : Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: [
          ...draft.lines,
          ...oneTime.map(
            (l): Invoicing.Line => ({
              kind: "one_time",
              description: `${l.pv.price_name} × ${l.quantity} (one time)`,
              quantity: l.quantity,
              amount: dueNow(l.pv, l.quantity, true)
            })
          )
        ]
      })
