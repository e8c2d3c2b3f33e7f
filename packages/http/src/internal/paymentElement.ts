/**
 * Stripe's Payment Element in a hosted page, for merchants on Stripe: the card is typed into
 * Stripe's own field (Stripe.js, in the payer's browser); on submit the page asks Stripe for a
 * payment method (`createPaymentMethod`, the "finalize on the server" flow) and posts only its
 * `pm_…` id in `payment_method` — the server never sees the card. The form works as the sandbox's
 * does otherwise: same action, same answers.
 */
import { Money, type PaymentSettings, StripeCurrency } from "@recur/core"
import { Result } from "effect"
import { esc } from "./checkoutPage.js"

type Stripe = Extract<PaymentSettings.PageMode, { readonly provider: "stripe" }>

/** What the inline script is given. */
interface Config {
  readonly pk: string
  readonly mode: "payment" | "setup"
  readonly amount: number
  readonly currency: string
  readonly locale: string
  readonly form: string
  readonly container: string
  readonly error: string
}

/* The page's script (ES5, no build step): mounts the element, and on submit trades it for a payment method id. */
const client = `function (c) {
  var form = document.getElementById(c.form)
  var error = document.getElementById(c.error)
  var show = function (m) { error.textContent = m; error.hidden = false }
  if (typeof Stripe !== "function") { show("The payment form could not load. Check your connection and reload the page."); return }
  var stripe = Stripe(c.pk, { locale: c.locale })
  var options = c.mode === "payment"
    ? { mode: "payment", amount: c.amount, currency: c.currency, paymentMethodCreation: "manual" }
    : { mode: "setup", currency: c.currency, paymentMethodCreation: "manual" }
  var elements = stripe.elements(options)
  elements.create("payment").mount("#" + c.container)
  var busy = false
  form.addEventListener("submit", function (e) {
    e.preventDefault()
    if (busy) return
    busy = true
    elements.submit().then(function (r) {
      if (r.error) { busy = false; show(r.error.message); return }
      return stripe.createPaymentMethod({ elements: elements }).then(function (p) {
        if (p.error) { busy = false; show(p.error.message); return }
        form.elements.namedItem("payment_method").value = p.paymentMethod.id
        form.submit()
      })
    })
  })
}`

/** A JSON value safe inside a script element. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028|\u2029/g, " ")

/** The Stripe.js script tag, once per page. */
export const stripeScript = (mode: Stripe) => `<script src="${esc(mode.script)}"></script>`

/**
 * The fields of a form in Stripe mode (the form itself is the caller's, with id `form`): the
 * element's container, the hidden `payment_method`, an error slot, and the script that wires them.
 * `amountMinor` is what a payment charges in minor units (0: a setup, saving the card).
 */
export const fields = (
  mode: Stripe,
  options: {
    readonly form: string
    readonly suffix: string
    readonly amountMinor: number
    readonly currency: string
    readonly locale: string
  }
) => {
  const config: Config = {
    pk: mode.publishable_key,
    mode: options.amountMinor > 0 ? "payment" : "setup",
    amount: options.amountMinor,
    currency: options.currency.toLowerCase(),
    locale: options.locale,
    form: options.form,
    container: `payment-element${options.suffix}`,
    error: `payment-error${options.suffix}`
  }
  return `<div id="${esc(config.container)}" class="payment-element"></div>
<input type="hidden" name="payment_method" value="">
<p class="error" id="${esc(config.error)}" role="alert" hidden></p>
<script>(${client})(${scriptJson(config)})</script>`
}

/**
 * An exact decimal amount of a currency in Stripe's units, as Stripe.js wants the Payment
 * Element's `amount`: `30.00 USD` → 3000, `4990 ISK` → 499000 (two decimals at Stripe), `12.345
 * KWD` → 12340 (rounded down, as the charge itself is: `StripeCurrency.toStripe`).
 */
export const minorUnits = (amount: string, currency: string): number => {
  const parsed = Money.parse(amount, currency.toUpperCase())
  return Result.isSuccess(parsed)
    ? Number(StripeCurrency.toStripe(parsed.success).amount)
    : Number(amount.replace(".", ""))
}
