/**
 * A checkout session's command: what the `Checkout` service is asked to create, and
 * {@link sessionOf} to build one in code (re-exported by `Checkout`).
 */
import { Option } from "effect"
import type * as CheckoutSession from "./CheckoutSession.js"
import type { Metadata } from "../kernel/Common.js"
import type * as Decimal from "../money/Decimal.js"
import * as Ids from "../kernel/Ids.js"
import type * as Money from "../money/Money.js"

/**
 * One line item of a checkout session: a price, its quantity and the payer's bounds.
 *
 * @since 0.1.0
 */
export interface SessionItem {
  readonly priceId: Ids.PriceId
  readonly quantity: bigint
  /** The payer may change the quantity on the hosted page, inside `min` and `max`. */
  readonly editable: boolean
  readonly min: string | null
  readonly max: string | null
}

/**
 * A new checkout session: who pays, what is sold (a price × quantity — several recurring prices
 * on one subscription — or an amount in mode payment), in which currency it settles, and how the
 * hosted page looks.
 *
 * @since 0.1.0
 */
export interface SessionCommand {
  readonly mode: "checkout" | "payment"
  /** Who pays: an existing customer, a payer id (found or created), an email — at least one. */
  readonly customerId: Option.Option<Ids.CustomerId>
  readonly payerId: Option.Option<string>
  readonly email: Option.Option<string>
  /**
   * Mode checkout: the first line item, a price and its quantity (the subscription's base item
   * when it is recurring; the first recurring line is the base item otherwise).
   */
  readonly item: Option.Option<SessionItem>
  /**
   * Mode checkout: the other line items (at most 19): recurring prices sold on the same
   * subscription (its items after the base one, on its interval and currency), and one-time
   * prices charged once with its first invoice. None when absent.
   */
  readonly extraItems?: ReadonlyArray<SessionItem> | undefined
  /** Mode payment: the amount due. */
  readonly amount: Option.Option<Money.Money>
  readonly paymentMode: Option.Option<"onetime_payment" | "subscription">
  /** Settle in another currency: at the merchant's own rate, or at the FX port's. */
  readonly settlement: Option.Option<{ readonly currency: string; readonly rate: Option.Option<Decimal.Decimal> }>
  readonly trialPolicy: 1 | 2 | 3
  readonly totalCycles: number | null
  readonly convertToContinuous: boolean
  readonly orderId: string | null
  readonly metadata: Metadata
  /** A customer-facing discount code to redeem (mode checkout). */
  readonly discountCode: Option.Option<string>
  /**
   * A chosen billing cycle anchor (Unix ms) and whether the short first period up to it is
   * prorated (`BillingAnchor`); absent: the first payment anchors the subscription.
   */
  readonly billingAnchor?: { readonly anchor: number; readonly behavior: "create_prorations" | "none" } | undefined
  /** How the hosted page looks and where it sends the payer (stored on the session as given). */
  readonly page: Pick<
    CheckoutSession.CheckoutSession,
    | "return_url"
    | "cancel_url"
    | "integration_method"
    | "redirect_on_completion"
    | "locale"
    | "product_type"
    | "terms_of_service_url"
    | "privacy_policy_url"
    | "first_source_channel"
    | "billing_address"
    | "allow_discount_codes"
  >
}

/**
 * A checkout session for code, not for requests: `quantity` (default 1) of the price `priceId`,
 * paid by `who` (an existing customer, a payer id found or created, or an email — at least one),
 * with a customer-facing discount code to redeem and a billing anchor if given. Every other part takes the default the API's body has: settled in the price's currency, trial
 * policy 1, the hosted page with no redirect URLs. (The merchant API's body is decoded into a
 * command, every part included, by the contract's `Requests.sessionCommand`.)
 *
 * @example
 * yield* billing.createSession(merchantId, Checkout.sessionOf(price.id, { payerId: "user-42" }, { quantity: 3n }))
 * @since 0.1.0
 */
export const sessionOf = (
  priceId: string,
  who: {
    readonly customerId?: string | undefined
    readonly payerId?: string | undefined
    readonly email?: string | undefined
  },
  parts: {
    readonly quantity?: bigint | undefined
    readonly discountCode?: string | undefined
    /** A billing cycle anchor (Unix ms) and whether the short first period is prorated. */
    readonly billingAnchor?: SessionCommand["billingAnchor"]
  } = {}
): SessionCommand => ({
  ...(parts.billingAnchor !== undefined ? { billingAnchor: parts.billingAnchor } : {}),
  mode: "checkout",
  customerId: Option.map(Option.fromUndefinedOr(who.customerId), (id) => Ids.CustomerId.make(id)),
  payerId: Option.fromUndefinedOr(who.payerId),
  email: Option.fromUndefinedOr(who.email),
  item: Option.some({
    priceId: Ids.PriceId.make(priceId),
    quantity: parts.quantity ?? 1n,
    editable: false,
    min: null,
    max: null
  }),
  amount: Option.none(),
  paymentMode: Option.none(),
  settlement: Option.none(),
  trialPolicy: 1,
  totalCycles: null,
  convertToContinuous: false,
  orderId: null,
  metadata: {},
  discountCode: Option.fromUndefinedOr(parts.discountCode),
  page: {
    return_url: null,
    cancel_url: null,
    integration_method: "hosted",
    redirect_on_completion: "always",
    locale: null,
    product_type: null,
    terms_of_service_url: null,
    privacy_policy_url: null,
    first_source_channel: null,
    billing_address: null,
    allow_discount_codes: false
  }
})
