/**
 * What pays, as the payment processor's port takes it: card details (the sandbox's own form) or
 * a payment method the processor collected in the payer's browser, and the checks made before
 * any processor is asked (Luhn, the shape of a payment method id). Re-exported by `Ports`.
 */

/**
 * The card details a gateway receives. Recur never stores more than brand, last 4 and
 * expiry.
 *
 * @since 0.1.0
 */
export interface CardInput {
  readonly number: string
  readonly exp_month: number
  readonly exp_year: number
  readonly cvc: string
  readonly name?: string
}

/**
 * A payment method the processor collected in the payer's browser (Stripe.js's `pm_…`): Recur's
 * server never sees the card. Charged on session once, then saved for off-session charges.
 *
 * @since 0.1.0
 */
export interface CollectedPaymentMethod {
  readonly _tag: "PaymentMethod"
  readonly id: string
}

/**
 * Whether a text can name a collected payment method (`pm_` and up to 200 letters, digits and
 * underscores): what the API accepts before asking the processor.
 *
 * @since 0.1.0
 */
export const isPaymentMethodId = (id: string): boolean => /^pm_[A-Za-z0-9_]{1,200}$/.test(id)

/**
 * Card details as a payment source; a payment source as it is.
 *
 * @since 0.1.0
 */
export const sourceOf = (payment: CardInput | NewPaymentSource): NewPaymentSource =>
  "_tag" in payment ? payment : { _tag: "Card", card: payment }

/**
 * The field of a new payment source that cannot be right, before any processor is asked: a card
 * number failing the Luhn check (`card_number`), a payment method id of the wrong shape
 * (`payment_method`); none when both look right.
 *
 * @since 0.1.0
 */
export const malformedField = (source: NewPaymentSource): "card_number" | "payment_method" | undefined =>
  source._tag === "Card"
    ? luhnValid(source.card.number)
      ? undefined
      : "card_number"
    : isPaymentMethodId(source.id)
      ? undefined
      : "payment_method"

/**
 * What a first payment or a payment method update brings: card details (the sandbox's own
 * form) or a payment method the processor collected.
 *
 * @since 0.1.0
 */
export type NewPaymentSource = { readonly _tag: "Card"; readonly card: CardInput } | CollectedPaymentMethod

/**
 * Luhn check of a card number (digits only, 12..19 long).
 *
 * @since 0.1.0
 */
export const luhnValid = (number: string): boolean => {
  const digits = number.replace(/[\s-]/g, "")
  if (!/^\d{12,19}$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}
