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
   * payer's bounds, and what one cycle of it costs (first cycle's rate, in the session's
   * currency, before discount and tax; null for usage); empty for a session of one line item
   * (the page shows it as the product sold) or mode payment.
   */
  readonly lines: ReadonlyArray<{
    readonly priceName: string
    /** A usage-based (metered) line: no quantity, nothing due now, billed by usage at each period's end. */
    readonly metered: boolean
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
 * Why a session's several line items cannot be sold as one subscription — the items'
 * {@link SubscriptionItems.compatible} rules (`price`), or a metered line with a quantity other
 * than 1 or editable by the payer (`quantity`: it is billed by usage at each period's end) — with
 * the line's index, or undefined when they can.
 *
 * @since 0.1.0
 */
export const itemsRefusal = (
  lines: ReadonlyArray<{ readonly pv: Price.PriceVersion; readonly quantity: bigint; readonly editable: boolean }>
): { readonly part: "price" | "quantity"; readonly index: number; readonly detail: string } | undefined => {
  const ok = SubscriptionItems.compatible(lines.map((l) => l.pv))
  if (Result.isFailure(ok)) return { part: "price", index: ok.failure.index ?? 0, detail: ok.failure.reason }
  const index = lines.findIndex((l) => l.pv.billing_dimension === "usage" && (l.quantity !== 1n || l.editable))
  return index < 0
    ? undefined
    : {
        part: "quantity",
        index,
        detail: "is billed by usage at the end of each period: its quantity is 1, not editable"
      }
}
